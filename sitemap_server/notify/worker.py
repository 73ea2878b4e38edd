"""The worker: the maintainer of the sitemaps, and the sender of the notifications the
outbox produces, after commit, never twice.

Every ``maintainer.poll_seconds`` (0.1 s; 0.5 s on SQLite) it applies the change log to the sitemaps
(``apply_pending``, batch after batch while each is full: a steady stream of writes is
applied in batches a poll apart) and sends each batch's purges once it is committed. Each
notification pass
(``run_once``, every ``notify.poll_seconds``):

1. applies the change log and brings scheduled posts live (``catch_up``), so they are
   announced on time even when no crawler asks;
2. once a burst of changes has gone quiet, turns it into notifications (``coalesce``);
3. claims due notifications one at a time and sends each outside any transaction.

With nothing to apply, it sends what another maintainer stored (a request's or a
command's purges) if the sitemaps changed since it last looked, and stores the finished
documents that have none for the versions now (``finish``; ``sitemaps/finished.py``), a
moment at a time.

A claim is a lease: ``lease_until`` and ``claimed_by`` are set in a short transaction
(``FOR UPDATE SKIP LOCKED`` on PostgreSQL, so concurrent workers skip each other's rows;
SQLite has one writer at a time anyway). A worker killed mid-send holds nothing: its
lease runs out and another worker sends the notification. Outcomes are recorded per
attempt; failures are retried with exponential backoff, and given up on after
``max_attempts`` or at once on a refusal (4xx).
"""

from __future__ import annotations

import atexit
import itertools
import logging
import os
import socket
import threading
import time
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from pyramid.config import Configurator
from sqlalchemy import delete, or_, select, update
from sqlalchemy.orm import Session

from ..models import SITE_KEY, Notification, NotificationAttempt, SitemapVersion
from ..models.meta import utcnow
from ..models.notifications import CANCELLED, FAILED, PENDING, SENT
from ..models.site import effective_site_url, get_settings
from ..outages import cause_of, database_unavailable
from ..sitemaps.presence import Presence
from . import outbox, report, senders
from .channels import RETRY, Channel, Message, OutgoingRequest, Result
from .config import NotifyConfig

if TYPE_CHECKING:
    import requests

    from ..site import Site

log = logging.getLogger(__name__)

# Every sitemap's version: whether anything changed since the worker last found every
# finished document stored.
VERSION_NUMBERS = select(SitemapVersion.provider, SitemapVersion.version).order_by(
    SitemapVersion.provider
)

MAX_BACKOFF = timedelta(hours=6)
PRUNE_EVERY = timedelta(hours=1)
APPLY_POLL = "sitemap_server.maintainer.poll_seconds"
# maintainer.poll_seconds = auto: SQLite's passes hold its one write lock, and a writer
# waiting for it sleeps in steps of 1 to 100 ms: fewer, larger passes (bench/write_bench.py
# --apply-poll: sequential PATCH p95 63-66 ms at 0.1 s, 14-15 ms at 0.5 s).
APPLY_POLL_DEFAULT = 0.1
APPLY_POLL_SQLITE = 0.5

_numbers = itertools.count(1)


@dataclass(frozen=True)
class Claimed:
    """A notification this worker holds, with what it needs to send it."""

    id: int
    channel: str
    attempts: int
    message: Message
    # The channel that sends it (None: no loaded plugin contributes it any more).
    via: Channel | None
    request: OutgoingRequest | None
    # Why it must not be sent after all (the site went private, the key was removed).
    cancel: str | None = None

    def describe(self) -> str:
        if self.via is None:
            return f"{self.channel} {self.id} to {self.message.url}"
        return self.via.describe(self.id, self.message)


class Worker:
    """Sends notifications. One per thread; as many per PostgreSQL database as you like."""

    def __init__(
        self,
        site: Site,
        config: NotifyConfig | None = None,
        *,
        name: str | None = None,
        http: requests.Session | None = None,
        apply_poll_seconds: float | None = None,
    ) -> None:
        """A worker of ``site``, sending through the channels of ``config`` (by default
        the site's own, ``site.notify``)."""
        self.site = site
        self.sessions = site.sessions
        self.config = site.notify if config is None else config
        if apply_poll_seconds is None:
            apply_poll_seconds = site.settings[APPLY_POLL]
        if apply_poll_seconds is None:  # "auto"
            dialect = site.database.dialect.name
            apply_poll_seconds = APPLY_POLL_SQLITE if dialect == "sqlite" else APPLY_POLL_DEFAULT
        self.apply_poll_seconds = apply_poll_seconds
        self.name = name or f"{socket.gethostname()}:{os.getpid()}:{next(_numbers)}"
        self._http = http
        self._pruned_at: datetime | None = None
        # While it runs, readers leave the change log to it (``presence``).
        self.presence = Presence(site.database)
        # The database was unavailable at the last pass (logged once, and once when back).
        self.outage: str | None = None
        # The versions at which no finished document was left to store (``finish``),
        # and those it last saw with nothing to apply (``idle``).
        self._finished_at: Any = None
        self._seen_at: Any = None

    @property
    def http(self) -> requests.Session:
        """The HTTP session, made for the first message sent: a worker that only applies
        changes to the sitemaps never imports requests (~16 MB)."""
        if self._http is None:
            import requests

            self._http = requests.Session()
        return self._http

    def close(self) -> None:
        self.presence.release()
        if self._http is not None:
            self._http.close()

    # The passes ------------------------------------------------------------------------

    def run_once(self, force: bool = False) -> list[dict[str, Any]]:
        """One pass; ``force`` sends everything waiting now, ignoring the quiet period and
        any backoff (one attempt each). Returns the attempts made."""
        attempts: list[dict[str, Any]] = []
        self.maintain(attempts)
        with self.sessions.begin() as session:
            self.site.engine.catch_up(session)
        self.coalesce(force)
        if force:
            # One attempt each: not again what was just tried after a batch was applied.
            self._make_due(tried={attempt["notification_id"] for attempt in attempts})
        attempts += self.send_due()
        self.prune()
        return attempts

    def send_due(self) -> list[dict[str, Any]]:
        """Send every notification that is due now; the attempts made."""
        attempts = []
        while (claimed := self.claim()) is not None:
            attempts.append(self.deliver(claimed))
        return attempts

    def maintain(self, sent: list[dict[str, Any]] | None = None) -> int:
        """Apply the change log to the sitemaps, batch after batch while each is full
        (``Engine.apply``), unless another maintainer is at work; the number of changes
        applied. What is due once a batch is committed (its purges) is sent then, not
        after the last batch: an import's batches take a while. The attempts made are
        added to ``sent``."""

        def batch_applied(_count: int) -> None:
            attempts = self.send_due()
            if sent is not None:
                sent.extend(attempts)

        return self.site.engine.apply(progress=batch_applied)

    def run(self, stop: threading.Event) -> None:
        """Until ``stop`` is set: the change log applied every ``apply_poll_seconds``, a
        notification pass every ``poll_seconds``; a failure is logged, not fatal."""
        log.info("worker %s started", self.name)
        next_pass = 0.0
        while not stop.is_set():
            try:
                self.presence.hold()
                if time.monotonic() >= next_pass:
                    next_pass = time.monotonic() + self.config.poll_seconds
                    self.run_once()
                elif self.maintain() == 0:  # and the purges of each batch, as it is applied
                    self.idle()
            except Exception as error:
                self._failed(error)
            else:
                if self.outage is not None:
                    log.warning("worker %s: the database is back", self.name)
                    self.outage = None
            stop.wait(min(self.apply_poll_seconds, self.config.poll_seconds))
        self.presence.release()
        log.info("worker %s stopped", self.name)

    def idle(self) -> None:
        """Nothing to apply: if the sitemaps changed since the worker last looked, send
        what is due (``send_due``), then store the finished documents they lack
        (``finish``). Its own batches' purges are sent as each is applied; this sends
        those another maintainer stored (a request that found a scheduled post due, a
        command) within a poll, not at the next notification pass."""
        versions = self._versions()
        if versions != self._seen_at:
            self._seen_at = versions
            self.send_due()
        self.finish(versions)

    def finish(self, versions: Any = None) -> int:
        """Store finished documents that have no row for the versions now
        (``Engine.finish``), a moment at a time, until none is left; looked for again
        when the versions have changed (``versions``: read now if not given). How many
        it stored."""
        if not self.site.finishes_documents:
            return 0
        if versions is None:
            versions = self._versions()
        if versions == self._finished_at:
            return 0
        stored = self.site.engine.finish()
        if stored == 0:
            self._finished_at = versions
        return stored or 0

    def _versions(self) -> Any:
        """Every sitemap's version now (``VERSION_NUMBERS``)."""
        with self.site.reader.versions_engine.connect() as conn:
            return conn.execute(VERSION_NUMBERS).all()

    def _failed(self, error: Exception) -> None:
        """A pass failed: an outage is logged once (and once when it ends), in one line;
        anything else is a bug, logged with its traceback."""
        if not database_unavailable(error):
            log.exception("worker %s: the pass failed", self.name)
            return
        # Its connection may be the one that died: hold the mark again on a new one.
        self.presence.release()
        if self.outage is None:
            self.outage = ": ".join(cause_of(error))
            log.warning(
                "worker %s: the database is unavailable (%s); trying again every %s s",
                self.name,
                self.outage,
                self.apply_poll_seconds,
            )

    # The steps -------------------------------------------------------------------------

    def coalesce(self, force: bool = False) -> int:
        with self.sessions.begin() as session:
            ready = outbox.burst_ready(session, self.config, force)
        if ready is None:
            return 0
        with self.sessions.begin() as session:
            return len(outbox.coalesce(session, self.config, ready))

    def _make_due(self, tried: set[int]) -> None:
        with self.sessions.begin() as session:
            now = utcnow()
            session.execute(
                update(Notification)
                .where(
                    Notification.status == PENDING,
                    Notification.due_at > now,
                    Notification.id.not_in(tried),
                )
                .values(due_at=now)
                .execution_options(synchronize_session=False)
            )

    def claim(self) -> Claimed | None:
        """Lease the next due notification, or None."""
        with self.sessions.begin() as session:
            now = utcnow()
            eligible = (
                select(Notification.id)
                .where(
                    Notification.status == PENDING,
                    Notification.due_at <= now,
                    or_(Notification.lease_until.is_(None), Notification.lease_until < now),
                )
                .order_by(Notification.due_at, Notification.id)
                .limit(1)
            )
            if session.get_bind().dialect.name == "postgresql":
                eligible = eligible.with_for_update(skip_locked=True)
            row = session.execute(
                update(Notification)
                .where(
                    # "=" and not "IN": PostgreSQL runs a scalar subquery once (an InitPlan);
                    # under IN it may run it for each row, leasing every due notification.
                    Notification.id == eligible.scalar_subquery(),
                    # Again on the row itself, as it is when locked: a claim by another
                    # worker in the meantime makes this one match nothing.
                    Notification.status == PENDING,
                    or_(Notification.lease_until.is_(None), Notification.lease_until < now),
                )
                .values(lease_until=now + self.config.lease, claimed_by=self.name)
                .returning(
                    Notification.id,
                    Notification.channel,
                    Notification.url,
                    Notification.payload,
                    Notification.attempts,
                )
                .execution_options(synchronize_session=False)
            ).first()
            if row is None:
                return None
            site = get_settings(session)
            site_url = effective_site_url(site, self.config.site_url)
            private = site.private
        self.http.headers["User-Agent"] = senders.user_agent(site_url)
        message = Message(row.url, row.payload)
        channel = self.config.channel(row.channel)
        cancel, request = None, None
        if channel is None:
            cancel = f"no loaded plugin sends {row.channel!r} notifications any more"
        elif not channel.enabled:
            cancel = f"the {row.channel} channel is not configured any more"
        elif channel.announces and private:
            cancel = "the site is private"
        else:
            request = channel.request(message, site_url)
        return Claimed(row.id, row.channel, row.attempts, message, channel, request, cancel)

    def deliver(self, claimed: Claimed) -> dict[str, Any]:
        if claimed.via is None or claimed.request is None:
            result = Result(CANCELLED, error=claimed.cancel)
        else:
            result = senders.send(self.http, claimed.via, claimed.request, self.config.timeout)
        return self.record(claimed, result)

    def record(self, claimed: Claimed, result: Result) -> dict[str, Any]:
        """Record the attempt, and what it means for the notification, in one transaction
        in which the channel is told (``Channel.received`` or ``failed``)."""
        config = self.config
        attempts = claimed.attempts + 1
        outcome, error = result.outcome, result.error
        if outcome == RETRY and attempts >= config.max_attempts:
            outcome, error = FAILED, f"{error}; gave up after {attempts} attempts"
        now = utcnow()
        with self.sessions.begin() as session:
            if claimed.via is not None:
                outcome, error = self._tell_channel(session, claimed, outcome, error, result)
            values: dict[str, Any] = {
                "attempts": attempts,
                "lease_until": None,
                "claimed_by": None,
                "http_status": result.http_status,
                "error": error,
            }
            what = claimed.describe()
            if outcome == RETRY:
                delay = min(
                    timedelta(seconds=config.retry_seconds * 2 ** (attempts - 1)), MAX_BACKOFF
                )
                if result.retry_after is not None:
                    delay = max(delay, min(timedelta(seconds=result.retry_after), MAX_BACKOFF))
                values.update(status=PENDING, due_at=now + delay)
                log.warning(
                    "%s: %s; retrying in %d s (attempt %d of %d)",
                    what,
                    error,
                    delay.total_seconds(),
                    attempts,
                    config.max_attempts,
                )
            else:
                values.update(status=outcome, finished_at=now)
                if outcome == SENT:
                    log.info("%s: sent (HTTP %s)", what, result.http_status)
                elif outcome == FAILED:
                    log.warning("%s: gave up: %s", what, error)
                else:
                    log.info("%s: not sent: %s", what, error)
            session.execute(
                update(Notification)
                .where(Notification.id == claimed.id, Notification.claimed_by == self.name)
                .values(**values)
                .execution_options(synchronize_session=False)
            )
            attempt = NotificationAttempt(
                notification_id=claimed.id,
                at=now,
                outcome=outcome,
                http_status=result.http_status,
                error=error,
                duration_ms=result.duration_ms,
                worker=self.name,
            )
            session.add(attempt)
            session.flush()
            return report.attempt_dict(attempt, claimed.channel, claimed.message.url)

    def _tell_channel(
        self, session: Session, claimed: Claimed, outcome: str, error: str | None, result: Result
    ) -> tuple[str, str | None]:
        """Give the channel the answer it reads, or the failure; the outcome after that.

        In a savepoint: what the channel fails to store is rolled back and the message
        given up with the reason, instead of the attempt going unrecorded."""
        channel, message = claimed.via, claimed.message
        assert channel is not None
        try:
            with session.begin_nested():
                if outcome == SENT and result.answer is not None:
                    channel.received(session, message, result.answer)
                elif outcome != SENT:
                    channel.failed(session, message, error or outcome, outcome != RETRY)
            return outcome, error
        except ValueError as exc:
            error = f"the answer was refused: {exc}"
        except Exception as exc:
            log.exception("%s: the %s channel failed", claimed.describe(), channel.name)
            # The log has the details; what the API shows holds no database text.
            error = f"the answer could not be stored ({type(exc).__name__}); see the log"
        try:
            with session.begin_nested():
                channel.failed(session, message, error, True)
        except Exception:
            log.exception("%s: the %s channel failed", claimed.describe(), channel.name)
        return FAILED, error

    def prune(self) -> None:
        """Forget finished notifications older than ``keep`` (hourly)."""
        now = utcnow()
        if self._pruned_at is not None and now - self._pruned_at < PRUNE_EVERY:
            return
        self._pruned_at = now
        with self.sessions.begin() as session:
            old = select(Notification.id).where(
                Notification.status != PENDING, Notification.finished_at < now - self.config.keep
            )
            session.execute(
                delete(NotificationAttempt).where(NotificationAttempt.notification_id.in_(old))
            )
            session.execute(
                delete(Notification)
                .where(Notification.id.in_(old))
                .execution_options(synchronize_session=False)
            )


class WorkerThread:
    """The worker in a thread of the web process (``sitemap_server.notify.worker_thread``)."""

    def __init__(self, worker: Worker) -> None:
        self.worker = worker
        self.stopping = threading.Event()
        self.thread = threading.Thread(
            target=worker.run, args=(self.stopping,), name="notify-worker", daemon=True
        )

    def start(self) -> None:
        self.thread.start()
        atexit.register(self.stop)

    def stop(self, timeout: float | None = None) -> None:
        """Stop after the request in flight (by default, wait as long as one may take)."""
        self.stopping.set()
        self.thread.join(self.worker.config.timeout + 1 if timeout is None else timeout)


def includeme(config: Configurator) -> None:
    site: Site = config.registry[SITE_KEY]
    if not site.settings["sitemap_server.notify.worker_thread"]:
        return
    thread = WorkerThread(Worker(site))
    site.worker_thread = thread
    thread.start()
