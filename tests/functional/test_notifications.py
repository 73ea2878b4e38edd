"""Telling search engines (S-601, S-602), against a local search engine on 127.0.0.1.

The application records what changed in the writing transaction; a ``Worker`` runs here,
in-process, one pass at a time (``run_once``), while the clock is moved instead of
sleeping. What is proven is what a site owner or a search engine sees: the requests the
search engine received, the attempts, ``/api/notifications``, the log, the command.
"""

import logging
import math
import re
from datetime import UTC, datetime, timedelta
from urllib.parse import quote

import pytest
from sqlalchemy import func, insert, select
from sqlalchemy.exc import OperationalError

from sitemap_server import cli as cli_module
from sitemap_server import hookimpl
from sitemap_server.app import main, site_of_app
from sitemap_server.models import Notification, NotificationChange
from sitemap_server.notify import outbox
from sitemap_server.notify.indexnow import INDEXNOW_REFUSALS
from sitemap_server.notify.worker import Worker
from sitemap_server.settings import SettingsError
from sitemap_server.site import Site
from sitemap_server.testing import (
    SITE_URL,
    assert_problem,
    client,
    free_port,
    installed_plugins_loaded,
)

KEY = "a1b2c3d4e5f6a7b8"
JAN = "2024-01-10T12:00:00+00:00"
FEB = "2024-02-10T12:00:00+00:00"
INDEX = quote(f"{SITE_URL}/sitemap_index.xml", safe="")
QUIET = 60  # notify.quiet_seconds
RETRY = 30  # notify.retry_seconds
WORKER_LOG = "sitemap_server.notify.worker"


# Fixtures and helpers -------------------------------------------------------------------


def notify_settings(search_engine, **extra):
    """Ping the local search engine at /ping, IndexNow at /indexnow; ``extra`` on top."""
    return {
        "sitemap_server.ping.targets": f"{search_engine.url}/ping?sitemap={{sitemap}}",
        "sitemap_server.indexnow.key": KEY,
        "sitemap_server.indexnow.endpoint": f"{search_engine.url}/indexnow",
        "sitemap_server.notify.quiet_seconds": str(QUIET),
        "sitemap_server.notify.retry_seconds": str(RETRY),
        **extra,
    }


@pytest.fixture
def make_app(app_with, search_engine):
    """``make_app(**extra)``: the application with ``notify_settings`` (built once per
    set of settings for the session)."""

    def make(**extra):
        return app_with(**notify_settings(search_engine, **extra))

    return make


@pytest.fixture
def notify_app(make_app):
    return make_app()


@pytest.fixture
def admin(notify_app, api_token):
    return client(notify_app, api_token)


def worker_of(app):
    """A worker with the application's database and settings, run here one pass at a time."""
    return Worker(site_of_app(app))


@pytest.fixture
def worker(notify_app):
    return worker_of(notify_app)


@pytest.fixture
def other_app(make_app, api_token):
    """``other_app(**extra)``: (admin client, worker) with notification settings of its own."""

    def make(**extra):
        app = make_app(**extra)
        return client(app, api_token), worker_of(app)

    return make


def create_post(api, **fields):
    body = {"type": "post", "status": "publish", "published_at": JAN, "modified_at": JAN}
    return api.post_json("/api/posts", {**body, **fields}, status=201).json


def post_url(slug):
    return f"{SITE_URL}/2024/01/{slug}/"


def burst_over(clock, worker):
    """Move past the quiet period: the burst of changes so far is ready to send. The
    maintainer applies the writes first, as a running worker does within 0.1 s."""
    worker.maintain()
    clock.advance(seconds=QUIET + 1)


def outcomes(attempts):
    """{channel: [outcome, …]} of a pass's attempts."""
    found = {}
    for attempt in attempts:
        found.setdefault(attempt["channel"], []).append(attempt["outcome"])
    return found


def status(api):
    return api.get("/api/notifications").json


def ping_notification(api):
    [found] = [n for n in status(api)["notifications"] if n["channel"] == "ping"]
    return found


def retry_wait(api, attempt):
    """How long after ``attempt`` its notification is tried again (GET /api/notifications)."""
    due = ping_notification(api)["next_attempt_at"]
    return datetime.fromisoformat(due) - datetime.fromisoformat(attempt["at"])


def submitted_urls(search_engine):
    """The urlList of every IndexNow submission received, in order."""
    return [r["body"]["urlList"] for r in search_engine.received("/indexnow", "POST")]


def gave_up_lines(caplog):
    return [
        r.getMessage()
        for r in caplog.records
        if r.name == WORKER_LOG and r.levelno == logging.WARNING and "gave up" in r.getMessage()
    ]


# One ping per burst (S-602) ---------------------------------------------------------------


def test_a_burst_of_changes_is_one_ping(admin, worker, search_engine, clock):
    for n in range(5):
        create_post(admin, title=f"Post {n}", slug=f"post-{n}")
    assert worker.run_once() == []  # the burst is not over yet
    assert search_engine.requests == []

    clock.advance(seconds=61)
    attempts = worker.run_once()
    assert [a["outcome"] for a in attempts] == ["sent", "sent"]
    pings = search_engine.received("/ping")
    assert len(pings) == 1
    assert pings[0]["query"] == {"sitemap": f"{SITE_URL}/sitemap_index.xml"}
    [submission] = search_engine.received("/indexnow", "POST")
    body = submission["body"]
    assert body["host"] == "sitemaps.test"
    assert body["key"] == KEY
    assert body["keyLocation"] == f"{SITE_URL}/{KEY}.txt"
    assert {f"{SITE_URL}/2024/01/post-{n}/" for n in range(5)} <= set(body["urlList"])

    clock.advance(seconds=61)
    assert worker.run_once() == []  # nothing new: nothing sent
    assert len(search_engine.requests) == 2


def test_each_ping_target_is_pinged_once_per_burst(other_app, search_engine, clock):
    targets = (
        f"{search_engine.url}/ping?sitemap={{sitemap}} {search_engine.url}/other?u={{sitemap}}"
    )
    admin, worker = other_app(**{"sitemap_server.ping.targets": targets})
    for n in range(3):
        create_post(admin, title=f"Post {n}", slug=f"post-{n}")

    burst_over(clock, worker)
    assert outcomes(worker.run_once()) == {"ping": ["sent", "sent"], "indexnow": ["sent"]}
    index = f"{SITE_URL}/sitemap_index.xml"
    assert [r["query"] for r in search_engine.received("/ping")] == [{"sitemap": index}]
    assert [r["query"] for r in search_engine.received("/other")] == [{"u": index}]


def test_a_site_that_never_goes_quiet_is_told_after_max_delay(other_app, search_engine, clock):
    admin, worker = other_app(**{"sitemap_server.notify.max_delay_seconds": "120"})
    for n in range(3):  # a change every 50 s: never 60 s of quiet
        create_post(admin, title=f"Post {n}", slug=f"post-{n}")
        assert worker.run_once() == []
        clock.advance(seconds=50)
    # The first change is now 150 s old, past max_delay.
    create_post(admin, title="Post 3", slug="post-3")
    assert outcomes(worker.run_once()) == {"ping": ["sent"], "indexnow": ["sent"]}
    assert len(search_engine.received("/ping")) == 1
    [urls] = submitted_urls(search_engine)
    assert {post_url(f"post-{n}") for n in range(4)} <= set(urls)


def test_a_claim_takes_one_notification(notify_app, admin, worker, clock):
    """What a claim leases is the notification it returns: another worker takes the next."""
    create_post(admin, title="Hello", slug="hello")
    burst_over(clock, worker)
    assert worker.coalesce() == 2  # a ping and an IndexNow submission, both due now

    first = worker.claim()
    second = worker_of(notify_app).claim()
    assert second is not None
    assert {first.channel, second.channel} == {"ping", "indexnow"}


# Retries (S-602) ----------------------------------------------------------------------------


def test_a_503_is_retried_after_retry_seconds_then_sent(admin, worker, search_engine, clock):
    search_engine.answer("/ping", 503, 200)
    create_post(admin, title="Hello", slug="hello")
    burst_over(clock, worker)

    [first] = [a for a in worker.run_once() if a["channel"] == "ping"]
    assert first["outcome"] == "retry"
    assert first["http_status"] == 503
    waiting = ping_notification(admin)
    assert waiting["status"] == "pending"
    assert waiting["attempts"] == 1
    assert retry_wait(admin, first) == timedelta(seconds=RETRY)
    assert status(admin)["pending"]["notifications"] == 1

    clock.advance(seconds=RETRY - 2)
    assert worker.run_once() == []  # not due yet: nothing re-sent
    assert len(search_engine.received("/ping")) == 1

    clock.advance(seconds=3)
    assert [a["outcome"] for a in worker.run_once()] == ["sent"]
    pings = search_engine.received("/ping")
    assert len(pings) == 2
    assert pings[1]["query"] == pings[0]["query"]
    sent = ping_notification(admin)
    assert (sent["status"], sent["attempts"], sent["http_status"]) == ("sent", 2, 200)
    assert status(admin)["pending"]["notifications"] == 0


def test_the_wait_doubles_after_each_failure(admin, worker, search_engine, clock):
    search_engine.answer("/ping", 503, 502, 200)
    create_post(admin, title="Hello", slug="hello")
    burst_over(clock, worker)

    [first] = [a for a in worker.run_once() if a["channel"] == "ping"]
    assert retry_wait(admin, first) == timedelta(seconds=RETRY)
    clock.advance(seconds=RETRY + 1)
    [second] = worker.run_once()
    assert (second["outcome"], second["http_status"]) == ("retry", 502)
    assert retry_wait(admin, second) == timedelta(seconds=2 * RETRY)
    clock.advance(seconds=RETRY + 1)  # the first wait again is not enough now
    assert worker.run_once() == []
    clock.advance(seconds=RETRY)
    assert [a["outcome"] for a in worker.run_once()] == ["sent"]
    assert len(search_engine.received("/ping")) == 3


def test_a_429_waits_as_long_as_retry_after_asks(admin, worker, search_engine, clock):
    search_engine.answer("/ping", (429, {"Retry-After": "600"}), 200)
    create_post(admin, title="Hello", slug="hello")
    burst_over(clock, worker)

    [first] = [a for a in worker.run_once() if a["channel"] == "ping"]
    assert (first["outcome"], first["http_status"]) == ("retry", 429)
    assert retry_wait(admin, first) >= timedelta(seconds=600)
    clock.advance(seconds=599)
    assert worker.run_once() == []
    assert len(search_engine.received("/ping")) == 1
    clock.advance(seconds=2)
    assert [a["outcome"] for a in worker.run_once()] == ["sent"]


def test_a_connection_error_is_retried(other_app, clock):
    nobody = f"http://127.0.0.1:{free_port()}/ping?sitemap={{sitemap}}"
    admin, worker = other_app(**{"sitemap_server.ping.targets": nobody})
    create_post(admin, title="Hello", slug="hello")
    burst_over(clock, worker)

    [first] = [a for a in worker.run_once() if a["channel"] == "ping"]
    assert first["outcome"] == "retry"
    assert first["http_status"] is None
    assert "could not connect" in first["error"]
    assert ping_notification(admin)["status"] == "pending"

    clock.advance(seconds=RETRY + 1)
    [second] = worker.run_once()
    assert second["outcome"] == "retry"
    assert ping_notification(admin)["attempts"] == 2


# Giving up (S-602) ------------------------------------------------------------------------


def test_a_404_is_given_up_at_once_with_one_log_line(admin, worker, search_engine, clock, caplog):
    search_engine.answer("/ping", 404)
    create_post(admin, title="Hello", slug="hello")
    burst_over(clock, worker)

    with caplog.at_level(logging.INFO, logger=WORKER_LOG):
        attempts = worker.run_once()
    [ping] = [a for a in attempts if a["channel"] == "ping"]
    assert (ping["outcome"], ping["http_status"]) == ("failed", 404)
    failed = ping_notification(admin)
    assert (failed["status"], failed["attempts"], failed["next_attempt_at"]) == ("failed", 1, None)
    assert len(search_engine.received("/ping")) == 1
    [line] = gave_up_lines(caplog)
    assert f"{search_engine.url}/ping?sitemap={INDEX}" in line
    assert "404" in line

    clock.advance(hours=7)  # past any backoff: a refusal is never asked again
    assert worker.run_once() == []
    assert len(search_engine.received("/ping")) == 1


def test_5xx_is_given_up_after_max_attempts(other_app, search_engine, clock, caplog):
    admin, worker = other_app(**{"sitemap_server.notify.max_attempts": "2"})
    search_engine.answer("/ping", 503)
    create_post(admin, title="Hello", slug="hello")
    burst_over(clock, worker)

    assert outcomes(worker.run_once())["ping"] == ["retry"]
    clock.advance(seconds=RETRY + 1)
    with caplog.at_level(logging.INFO, logger=WORKER_LOG):
        [last] = worker.run_once()
    assert (last["outcome"], last["http_status"]) == ("failed", 503)
    assert "gave up after 2 attempts" in last["error"]
    assert ping_notification(admin)["status"] == "failed"
    assert len(gave_up_lines(caplog)) == 1

    clock.advance(hours=7)
    assert worker.run_once() == []
    assert len(search_engine.received("/ping")) == 2


# IndexNow (S-601) ---------------------------------------------------------------------------


def test_indexnow_gets_every_changed_url(admin, worker, search_engine, clock):
    """Created, updated, deleted and unlisted URLs; not one that did not change."""
    posts = {slug: create_post(admin, title=slug, slug=slug) for slug in "abcd"}
    burst_over(clock, worker)
    worker.run_once()
    search_engine.requests.clear()

    create_post(admin, title="e", slug="e")  # created
    admin.patch_json(f"/api/posts/{posts['a']['id']}", {"modified_at": FEB})  # updated
    admin.delete(f"/api/posts/{posts['b']['id']}", status=204)  # deleted
    admin.patch_json(f"/api/posts/{posts['c']['id']}", {"robots": "noindex"})  # unlisted
    burst_over(clock, worker)
    assert outcomes(worker.run_once()) == {"ping": ["sent"], "indexnow": ["sent"]}

    [submission] = search_engine.received("/indexnow", "POST")
    body = submission["body"]
    assert set(body) == {"host", "key", "keyLocation", "urlList"}
    assert (body["host"], body["key"], body["keyLocation"]) == (
        "sitemaps.test",
        KEY,
        f"{SITE_URL}/{KEY}.txt",
    )
    assert {post_url(s) for s in "eabc"} <= set(body["urlList"])
    assert post_url("d") not in body["urlList"]
    assert len(body["urlList"]) == len(set(body["urlList"]))


def test_indexnow_batches_cover_every_url_once(other_app, search_engine, clock):
    admin, worker = other_app(**{"sitemap_server.indexnow.batch_size": "2"})
    for n in range(4):  # with the home page: 5 changed URLs
        create_post(admin, title=f"Post {n}", slug=f"post-{n}")
    burst_over(clock, worker)

    attempts = worker.run_once()
    batches = submitted_urls(search_engine)
    every = [url for batch in batches for url in batch]
    assert {post_url(f"post-{n}") for n in range(4)} | {f"{SITE_URL}/"} <= set(every)
    assert len(every) == len(set(every))  # each URL exactly once
    assert all(1 <= len(batch) <= 2 for batch in batches)
    assert len(batches) == math.ceil(len(every) / 2)
    assert outcomes(attempts)["indexnow"] == ["sent"] * len(batches)
    assert len(search_engine.received("/ping")) == 1  # batches are IndexNow's only


def test_a_renamed_post_submits_its_old_url_too(admin, worker, search_engine, clock):
    post = create_post(admin, title="Hello", slug="old")
    burst_over(clock, worker)
    worker.run_once()
    search_engine.requests.clear()

    admin.patch_json(f"/api/posts/{post['id']}", {"slug": "new"})
    burst_over(clock, worker)
    assert outcomes(worker.run_once())["indexnow"] == ["sent"]
    [urls] = submitted_urls(search_engine)
    assert post_url("new") in urls
    assert post_url("old") in urls  # no longer listed: crawlers should drop it


@pytest.mark.parametrize("refusal", sorted(INDEXNOW_REFUSALS))
def test_an_indexnow_refusal_is_given_up_with_its_reason(
    admin, worker, search_engine, clock, caplog, refusal
):
    search_engine.answer("/indexnow", refusal)
    create_post(admin, title="Hello", slug="hello")
    burst_over(clock, worker)

    with caplog.at_level(logging.INFO, logger=WORKER_LOG):
        attempts = worker.run_once()
    [submission] = [a for a in attempts if a["channel"] == "indexnow"]
    assert (submission["outcome"], submission["http_status"]) == ("failed", refusal)
    assert INDEXNOW_REFUSALS[refusal] in submission["error"]
    [shown] = [n for n in status(admin)["notifications"] if n["channel"] == "indexnow"]
    assert shown["status"] == "failed"
    assert INDEXNOW_REFUSALS[refusal] in shown["error"]
    [line] = gave_up_lines(caplog)
    assert INDEXNOW_REFUSALS[refusal] in line

    clock.advance(hours=7)
    assert worker.run_once() == []
    assert len(search_engine.received("/indexnow")) == 1


@pytest.mark.parametrize("answer", [429, 500, 503])
def test_indexnow_429_and_5xx_are_retried(admin, worker, search_engine, clock, answer):
    search_engine.answer("/indexnow", answer, 200)
    create_post(admin, title="Hello", slug="hello")
    burst_over(clock, worker)

    assert outcomes(worker.run_once())["indexnow"] == ["retry"]
    clock.advance(seconds=RETRY + 1)
    assert [(a["channel"], a["outcome"]) for a in worker.run_once()] == [("indexnow", "sent")]
    first, second = search_engine.received("/indexnow", "POST")
    assert first["body"] == second["body"]


def test_coalesce_never_makes_a_batch_over_10000_urls(notify_app, clean_database):
    config = site_of_app(notify_app).notify
    assert config.channel("indexnow").batch == 10_000  # the default
    with site_of_app(notify_app).sessions() as session:
        rows = [
            {
                "created_at": datetime(2024, 1, 10, tzinfo=UTC),
                "sitemap": "post",
                "url": f"{SITE_URL}/p/{n}/",
                "change": "added",
            }
            for n in range(25_000)
        ]
        session.execute(insert(NotificationChange), rows)
        low, high = session.execute(
            select(func.min(NotificationChange.id), func.max(NotificationChange.id))
        ).one()

        made = outbox.coalesce(session, config, (low, high))

        sizes = [m.url_count for m in made if m.channel == "indexnow"]
        assert sizes == [10_000, 10_000, 5_000]
        stored = session.scalars(
            select(Notification.payload)
            .where(Notification.channel == "indexnow")
            .order_by(Notification.id)
        ).all()
        assert [len(payload["urlList"]) for payload in stored] == sizes
        assert session.scalars(select(Notification.changes)).all() == [25_000] * len(made)
        assert session.scalar(select(func.count()).select_from(NotificationChange)) == 0
        session.rollback()


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("sitemap_server.indexnow.batch_size", "10001"),
        ("sitemap_server.ping.targets", "https://engine.example/ping"),
        ("sitemap_server.indexnow.key", "not a key!"),
    ],
)
def test_bad_notification_settings_are_refused_at_start_up(app_settings, name, value):
    with pytest.raises(SettingsError, match=name):
        main({}, **{**app_settings, name: value})


# What is not sent (S-602) -------------------------------------------------------------------


def test_a_rejected_request_records_and_sends_nothing(admin, worker, search_engine, clock):
    response = admin.post_json(
        "/api/posts", {"type": "post", "title": "Bad", "slug": "Not A Slug"}, status=400
    )
    assert_problem(response, 400, "slug")
    assert status(admin)["pending"]["changes"] == 0

    burst_over(clock, worker)
    assert worker.run_once() == []
    assert search_engine.requests == []


class RefuseAfterTheOutbox:
    """A plugin whose ``sitemap_changed`` runs after the outbox's and meets an outage,
    which fails the pass of the maintainer that applies the change (a bug of the plugin
    fails only that sitemap's update: test_a_sitemap_whose_update_fails_announces_nothing)."""

    def __init__(self, error=None):
        self.rows_seen = []
        self.error = error or OperationalError(
            "INSERT", {}, Exception("refused after the outbox was written")
        )

    @hookimpl(trylast=True)
    def sitemap_changed(self, session, sitemap, urls):
        self.rows_seen.append(session.scalar(select(func.count()).select_from(NotificationChange)))
        raise self.error


def test_a_failed_maintainer_pass_keeps_the_change_and_sends_nothing(
    notify_app, admin, worker, search_engine, clock
):
    plugins = site_of_app(notify_app).plugins
    create_post(admin, title="Hello", slug="hello")
    refuser = RefuseAfterTheOutbox()
    plugins.register(refuser)
    try:
        with pytest.raises(OperationalError, match="refused after the outbox"):
            worker.maintain()
    finally:
        plugins.unregister(refuser)
    assert refuser.rows_seen[0] >= 1  # the change was in the outbox, in the transaction...
    assert status(admin)["pending"]["changes"] == 0  # ...that was rolled back
    burst_over(clock, worker)  # the next pass applies the change, which was kept
    assert outcomes(worker.run_once()) == {"ping": ["sent"], "indexnow": ["sent"]}
    [urls] = submitted_urls(search_engine)
    assert post_url("hello") in urls


def test_a_sitemap_whose_update_fails_announces_nothing(
    notify_app, admin, worker, search_engine, clock
):
    """A plugin's bug in ``sitemap_changed`` undoes that sitemap's update, its outbox rows
    with it: nothing is announced that is not served. The change is applied (not tried
    again forever), and the sitemap stays as stored until its content next changes."""
    plugins = site_of_app(notify_app).plugins
    create_post(admin, title="Hello", slug="hello")
    refuser = RefuseAfterTheOutbox(RuntimeError("a bug after the outbox was written"))
    plugins.register(refuser)
    try:
        worker.maintain()
    finally:
        plugins.unregister(refuser)
    assert refuser.rows_seen[0] >= 1  # in the outbox, in the savepoint that was undone
    assert status(admin)["pending"]["changes"] == 0
    burst_over(clock, worker)
    assert outcomes(worker.run_once()) == {}
    assert search_engine.received() == []


def test_a_draft_created_and_edited_sends_nothing(admin, worker, search_engine, clock):
    draft = create_post(admin, title="Draft", slug="draft", status="draft")
    admin.patch_json(f"/api/posts/{draft['id']}", {"title": "Still a draft", "modified_at": FEB})
    assert status(admin)["pending"]["changes"] == 0

    burst_over(clock, worker)
    assert worker.run_once() == []
    assert search_engine.requests == []


def test_without_targets_nothing_is_recorded(api, dbsession):
    post = create_post(api, title="Hello", slug="hello")
    api.patch_json(f"/api/posts/{post['id']}", {"modified_at": FEB})
    api.delete(f"/api/posts/{post['id']}", status=204)

    shown = status(api)
    assert shown["targets"] == {"ping": [], "indexnow": None}
    assert shown["pending"]["changes"] == 0
    assert dbsession.scalar(select(func.count()).select_from(NotificationChange)) == 0


# A private site (S-602) ---------------------------------------------------------------------


def test_a_private_site_records_and_sends_nothing(admin, worker, search_engine, clock):
    admin.patch_json("/api/settings", {"private": True})
    post = create_post(admin, title="Hello", slug="hello")
    admin.patch_json(f"/api/posts/{post['id']}", {"modified_at": FEB})
    assert status(admin)["site_private"] is True
    assert status(admin)["pending"]["changes"] == 0

    burst_over(clock, worker)
    assert worker.run_once() == []
    assert search_engine.requests == []


def test_changes_waiting_when_the_site_goes_private_are_not_sent(
    admin, worker, search_engine, clock
):
    create_post(admin, title="Hello", slug="hello")
    admin.patch_json("/api/settings", {"private": True})

    burst_over(clock, worker)
    assert worker.run_once() == []
    assert search_engine.requests == []
    assert status(admin)["pending"]["changes"] == 0


def test_a_pending_notification_is_cancelled_when_the_site_goes_private(
    admin, worker, search_engine, clock
):
    search_engine.answer("/ping", 503, 200)
    create_post(admin, title="Hello", slug="hello")
    burst_over(clock, worker)
    assert outcomes(worker.run_once())["ping"] == ["retry"]

    admin.patch_json("/api/settings", {"private": True})
    clock.advance(seconds=RETRY + 1)
    [cancelled] = worker.run_once()
    assert (cancelled["channel"], cancelled["outcome"]) == ("ping", "cancelled")
    assert len(search_engine.received("/ping")) == 1
    assert ping_notification(admin)["status"] == "cancelled"

    clock.advance(hours=7)
    assert worker.run_once() == []


def test_a_site_made_public_again_pings_its_index(admin, worker, search_engine, clock):
    admin.patch_json("/api/settings", {"private": True})
    worker.maintain()  # as a running worker does after each write
    create_post(admin, title="Hello", slug="hello")
    worker.maintain()
    admin.patch_json("/api/settings", {"private": False})

    burst_over(clock, worker)
    assert outcomes(worker.run_once()) == {"ping": ["sent"]}
    [ping] = search_engine.received("/ping")
    assert ping["query"] == {"sitemap": f"{SITE_URL}/sitemap_index.xml"}
    assert search_engine.received("/indexnow") == []  # no URL list to submit


def test_a_new_site_url_pings_the_new_index(admin, worker, search_engine, clock):
    admin.patch_json("/api/settings", {"site_url": "https://www.example.com"})

    burst_over(clock, worker)
    assert outcomes(worker.run_once()) == {"ping": ["sent"]}
    [ping] = search_engine.received("/ping")
    assert ping["query"] == {"sitemap": "https://www.example.com/sitemap_index.xml"}


# The key file (S-601) -----------------------------------------------------------------------


def test_the_key_file_holds_the_key(notify_app):
    response = client(notify_app).get(f"/{KEY}.txt", status=200)
    assert response.content_type == "text/plain"
    assert response.text == KEY


def test_no_other_key_file(notify_app):
    client(notify_app).get("/xyz.txt", status=404)


def test_no_key_no_key_file(testapp):
    testapp.get(f"/{KEY}.txt", status=404)


# Scheduled posts (S-601) --------------------------------------------------------------------


def test_a_scheduled_post_is_announced_when_its_time_comes(admin, worker, search_engine, clock):
    publish_at = clock.now() + timedelta(hours=1)
    create_post(admin, title="Later", slug="later", published_at=publish_at.isoformat())
    burst_over(clock, worker)
    assert worker.run_once() == []  # not live yet: nothing changed for crawlers
    assert search_engine.requests == []

    clock.advance(hours=1)
    worker.run_once()  # it goes live: its change starts a burst
    burst_over(clock, worker)
    assert outcomes(worker.run_once()) == {"ping": ["sent"], "indexnow": ["sent"]}
    [urls] = submitted_urls(search_engine)
    month = publish_at.strftime("%Y/%m")
    assert f"{SITE_URL}/{month}/later/" in urls


# The admin API (S-601, S-602, S-702) --------------------------------------------------------


def test_notifications_need_a_token(notify_app, clean_database):
    anonymous = client(notify_app)
    anonymous.get("/api/notifications", status=401)
    anonymous.post("/api/notifications/flush", status=401)


def test_notifications_show_targets_pending_and_attempts(admin, worker, search_engine, clock):
    search_engine.answer("/ping", 503)
    create_post(admin, title="Hello", slug="hello")
    worker.maintain()
    waiting = status(admin)
    assert waiting["site_private"] is False
    assert waiting["targets"] == {
        "ping": [f"{search_engine.url}/ping?sitemap={INDEX}"],
        "indexnow": {
            "endpoint": f"{search_engine.url}/indexnow",
            "key_location": f"{SITE_URL}/{KEY}.txt",
        },
    }
    assert waiting["settings"]["quiet_seconds"] == QUIET
    assert waiting["pending"]["changes"] >= 1
    assert waiting["pending"]["notifications"] == 0
    assert (waiting["notifications"], waiting["attempts"]) == ([], [])

    burst_over(clock, worker)
    made = worker.run_once()
    shown = status(admin)
    assert shown["pending"]["changes"] == 0
    assert shown["pending"]["notifications"] == 1  # the ping, to retry
    assert shown["pending"]["next_attempt_at"] == ping_notification(admin)["next_attempt_at"]
    assert {(n["channel"], n["status"]) for n in shown["notifications"]} == {
        ("ping", "pending"),
        ("indexnow", "sent"),
    }
    [indexnow] = [n for n in shown["notifications"] if n["channel"] == "indexnow"]
    assert indexnow["url_count"] == len(submitted_urls(search_engine)[0])
    assert sorted(a["id"] for a in shown["attempts"]) == sorted(a["id"] for a in made)
    assert {(a["channel"], a["outcome"]) for a in shown["attempts"]} == {
        ("ping", "retry"),
        ("indexnow", "sent"),
    }


def test_the_google_preset_is_the_ping_url_of_the_specification(app_with, api_token):
    admin = client(app_with(**{"sitemap_server.ping.targets": "google"}), api_token)
    assert status(admin)["targets"]["ping"] == [f"https://www.google.com/ping?sitemap={INDEX}"]


def test_notifications_limit_is_checked(admin):
    assert_problem(admin.get("/api/notifications?limit=0", status=400), 400, "limit")


def test_flush_sends_now_without_waiting_for_the_burst_to_end(admin, search_engine):
    create_post(admin, title="Hello", slug="hello")

    flushed = admin.post("/api/notifications/flush").json
    assert outcomes(flushed["attempts"]) == {"ping": ["sent"], "indexnow": ["sent"]}
    assert flushed["pending"]["changes"] == 0
    assert flushed["pending"]["notifications"] == 0
    assert len(search_engine.received("/ping")) == 1
    [urls] = submitted_urls(search_engine)
    assert post_url("hello") in urls


def test_flush_retries_a_waiting_notification_now(admin, worker, search_engine, clock):
    search_engine.answer("/ping", 503, 200)
    create_post(admin, title="Hello", slug="hello")
    burst_over(clock, worker)
    assert outcomes(worker.run_once())["ping"] == ["retry"]

    flushed = admin.post("/api/notifications/flush").json  # the clock has not moved
    assert [(a["channel"], a["outcome"]) for a in flushed["attempts"]] == [("ping", "sent")]
    assert flushed["pending"]["notifications"] == 0
    assert len(search_engine.received("/ping")) == 2


# The command (S-601, S-602) -----------------------------------------------------------------


@pytest.fixture
def notify_ini(tmp_path, database_url, search_engine):
    """An ini file for the test database, pinging the local search engine (no logging
    sections: the command then leaves the test run's logging alone)."""
    path = tmp_path / "notify.ini"
    lines = [
        "[app:main]",
        "use = egg:sitemap-server",
        f"sqlalchemy.url = {database_url.replace('%', '%%')}",
        f"sitemap_server.site_url = {SITE_URL}",
        f"sitemap_server.load_entrypoints = {str(installed_plugins_loaded()).lower()}",
        *(f"{name} = {value}" for name, value in notify_settings(search_engine).items()),
    ]
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.fixture
def cli(notify_ini, capsys, monkeypatch):
    """Run ``sitemap-server --config notify.ini …``: what it printed. ``cli.sites``: the
    sites the commands built (their engines disposed afterwards, whatever the command
    did)."""
    sites: list[Site] = []

    class Recorded(Site):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            sites.append(self)

    monkeypatch.setattr(cli_module, "Site", Recorded)

    def run(*args):
        assert cli_module.main(["--config", str(notify_ini), *args]) == 0
        return capsys.readouterr().out

    run.sites = sites
    yield run
    for site in sites:
        site.database.dispose()


def test_the_command_shows_targets_and_what_is_waiting(cli, admin, worker, search_engine):
    create_post(admin, title="Hello", slug="hello")
    worker.maintain()
    out = cli("notifications")
    assert f"ping {search_engine.url}/ping?sitemap={INDEX}" in out
    assert f"IndexNow {search_engine.url}/indexnow (key at {SITE_URL}/{KEY}.txt)" in out
    [changes] = re.findall(r"^waiting: (\d+) change\(s\), 0 notification\(s\)$", out, re.M)
    assert int(changes) >= 1  # the post, and the pages that list it


def test_the_worker_command_sends_once_the_burst_is_over(cli, admin, worker, search_engine, clock):
    create_post(admin, title="Hello", slug="hello")
    assert cli("worker", "--once") == "nothing to send\n"
    assert search_engine.requests == []

    burst_over(clock, worker)
    out = cli("worker", "--once")
    assert f"sent\tping {search_engine.url}/ping?sitemap={INDEX}\tHTTP 200" in out
    assert f"sent\tindexnow {search_engine.url}/indexnow\tHTTP 200" in out
    assert len(search_engine.received("/ping")) == 1

    out = cli("notifications")
    assert "sent after 1 attempt(s)" in out
    assert "waiting: 0 change(s), 0 notification(s)" in out


def test_the_flush_command_sends_now(cli, admin, search_engine):
    create_post(admin, title="Hello", slug="hello")
    out = cli("notifications", "flush")
    assert f"sent\tping {search_engine.url}/ping?sitemap={INDEX}" in out
    assert "waiting: 0 change(s), 0 notification(s)" in out
    assert len(search_engine.received("/ping")) == 1
    assert len(search_engine.received("/indexnow")) == 1


def test_the_commands_leave_no_database_connection_open(cli, admin):
    create_post(admin, title="Hello", slug="hello")
    cli("worker", "--once")
    cli("notifications", "flush")
    cli("notifications")
    engines = [site.database for site in cli.sites]
    assert engines
    assert [engine.pool.checkedin() for engine in engines] == [0] * len(engines)
