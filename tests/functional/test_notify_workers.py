"""Notification workers under failure and concurrency (S-602), against a local search engine.

What the outbox and the leases promise: a change committed while no worker runs, or whose
worker dies mid-send, is still sent; two workers never send one notification twice, nor
make two pings of one burst; the admin request never waits on a search engine; and
``sitemap-server worker`` stops cleanly when asked to. Workers run as real
``sitemap-server worker`` processes where a process must die, and in threads of this
process where the clock must move (a subprocess's clock cannot be moved from here).
"""

import json
import signal
import threading
import time
from collections import Counter

import pytest
from sqlalchemy import event, select, text
from sqlalchemy.orm import Session

from sitemap_server.app import main, site_of_app
from sitemap_server.models import (
    Notification,
    NotificationAttempt,
    NotificationChange,
    SitemapChange,
)
from sitemap_server.models.meta import utcnow
from sitemap_server.models.notifications import PENDING, SENT
from sitemap_server.notify import outbox, report
from sitemap_server.notify.worker import Worker
from sitemap_server.testing import (
    SITE_URL,
    client,
    installed_plugins_loaded,
    server_environment,
    worker_process,
)

KEY = "a1b2c3d4e5f6a7b8"
JAN = "2024-01-10T12:00:00+00:00"
INDEX_URL = f"{SITE_URL}/sitemap_index.xml"
# Bounds on waiting for another process or thread; a passing run takes a fraction of them.
DEADLINE = 20.0


# Helpers -----------------------------------------------------------------------------------


def ping_target(search_engine, path):
    return f"{search_engine.url}{path}?sitemap={{sitemap}}"


def notify_settings(search_engine, *ping_paths, indexnow=True, **extra):
    """Settings that send to ``search_engine``: a ping per path, IndexNow at /indexnow."""
    settings = {
        "sitemap_server.ping.targets": " ".join(ping_target(search_engine, p) for p in ping_paths),
        "sitemap_server.notify.quiet_seconds": "0",
        "sitemap_server.notify.retry_seconds": "300",
    }
    if indexnow:
        settings["sitemap_server.indexnow.key"] = KEY
        settings["sitemap_server.indexnow.endpoint"] = f"{search_engine.url}/indexnow"
    settings.update(extra)
    return settings


def in_process_worker(app, name=None):
    return Worker(site_of_app(app), name=name)


def create_post(api, **fields):
    body = {"type": "post", "status": "publish", "published_at": JAN, "modified_at": JAN}
    return api.post_json("/api/posts", {**body, **fields}, status=201).json


def write_ini(path, database_url, settings):
    """An ini file for ``sitemap-server --config``: the test database plus ``settings``,
    logging the worker's INFO lines (its "started" line tells that it is running)."""
    values = {
        "use": "egg:sitemap-server",
        "sqlalchemy.url": database_url,
        "sitemap_server.site_url": SITE_URL,
        "sitemap_server.load_entrypoints": str(installed_plugins_loaded()).lower(),
        **settings,
    }
    path.write_text(
        "[app:main]\n"
        + "".join(f"{name} = {value.replace('%', '%%')}\n" for name, value in values.items())
        + "\n[loggers]\nkeys = root\n[handlers]\nkeys = console\n[formatters]\nkeys = generic\n"
        "[logger_root]\nlevel = INFO\nhandlers = console\n"
        "[handler_console]\nclass = StreamHandler\nargs = (sys.stderr,)\nlevel = NOTSET\n"
        "formatter = generic\n[formatter_generic]\nformat = %(levelname)s %(name)s %(message)s\n"
    )
    return path


def wait_for(found, what, process=None, log=None, timeout=DEADLINE):
    """Poll ``found()`` until it is truthy (bounded): its value. Fails early if ``process``
    exited meanwhile, showing its ``log``."""
    deadline = time.monotonic() + timeout
    while not (value := found()):
        if process is not None and process.poll() is not None:
            pytest.fail(f"the worker exited ({process.returncode}) before {what}:\n{read(log)}")
        if time.monotonic() > deadline:
            pytest.fail(f"no {what} within {timeout} s" + (f":\n{read(log)}" if log else ""))
        time.sleep(0.02)  # polling, bounded by the deadline
    return value


def read(log):
    return log.read_text(errors="replace") if log is not None and log.exists() else ""


def notifications(engine):
    with Session(engine) as session:
        return session.scalars(select(Notification).order_by(Notification.id)).all()


def attempts(engine):
    with Session(engine) as session:
        return session.scalars(select(NotificationAttempt).order_by(NotificationAttempt.id)).all()


def change_log(engine):
    with Session(engine) as session:
        return session.execute(select(SitemapChange.kind, SitemapChange.object_id)).all()


def outbox_urls(engine):
    with Session(engine) as session:
        return session.scalars(select(NotificationChange.url)).all()


def waiting(engine):
    with Session(engine) as session:
        return report.pending(session)


def run_together(*functions):
    """Run each function in its own thread, all released at once: their results in order."""
    barrier = threading.Barrier(len(functions))
    results = [None] * len(functions)
    errors = []

    def run(index, function):
        try:
            barrier.wait(timeout=DEADLINE)
            results[index] = function()
        except BaseException as exc:  # re-raised in the test's thread below
            errors.append(exc)

    threads = [
        threading.Thread(target=run, args=(n, f), name=f"test-worker-{n}")
        for n, f in enumerate(functions)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=DEADLINE)
    assert not any(t.is_alive() for t in threads), "a worker thread did not finish"
    if errors:
        raise errors[0]
    return results


# 1. A crash between commit and send loses nothing -----------------------------------------


def test_a_change_committed_while_no_worker_runs_is_sent_by_a_worker_started_later(
    app_with, api_token, search_engine, clean_database, database_url, tmp_path
):
    settings = notify_settings(search_engine, "/ping")
    admin = client(app_with(**settings), api_token)

    post = create_post(admin, title="Written offline", slug="written-offline")

    # Recorded with the post, although nothing will apply or send it for now.
    assert ("post", post["id"]) in change_log(clean_database)
    assert outbox_urls(clean_database) == []
    assert notifications(clean_database) == []
    assert search_engine.requests == []

    ini = write_ini(
        tmp_path / "worker.ini",
        database_url,
        {**settings, "sitemap_server.notify.poll_seconds": "0.1"},
    )
    log = tmp_path / "worker.log"
    with worker_process(str(ini), server_environment(), log) as process:
        wait_for(lambda: all_sent(clean_database, 2), "ping and submission sent", process, log)
        process.terminate()
        assert process.wait(timeout=DEADLINE) == 0, read(log)

    [ping] = search_engine.received("/ping", "GET")
    assert ping["query"] == {"sitemap": INDEX_URL}
    [submission] = search_engine.received("/indexnow", "POST")
    assert post["permalink"] in submission["body"]["urlList"]
    assert submission["body"]["key"] == KEY
    assert waiting(clean_database)["changes"] == 0
    assert waiting(clean_database)["notifications"] == 0


def all_sent(engine, count):
    found = notifications(engine)
    return len(found) == count and all(n.status == SENT for n in found)


def test_a_worker_killed_mid_send_leaves_the_notification_to_the_next_one_after_its_lease(
    app_with, api_token, search_engine, clean_database, database_url, tmp_path, clock
):
    lease = 150  # more than twice the timeout, as the settings demand
    settings = notify_settings(
        search_engine,
        "/slow",
        indexnow=False,
        **{
            "sitemap_server.notify.lease_seconds": str(lease),
            "sitemap_server.notify.timeout_seconds": "60",
        },
    )
    app = app_with(**settings)
    create_post(client(app, api_token), title="Sent twice", slug="sent-twice")
    search_engine.answer("/slow", ("sleep", 30, 200))  # answers long after the kill

    ini = write_ini(
        tmp_path / "worker.ini",
        database_url,
        {**settings, "sitemap_server.notify.poll_seconds": "0.1"},
    )
    log = tmp_path / "worker.log"
    with worker_process(str(ini), server_environment(), log) as process:
        wait_for(lambda: search_engine.received("/slow"), "ping received", process, log)
        process.kill()
        assert process.wait(timeout=DEADLINE) == -signal.SIGKILL

    # The send was never recorded: the notification is still pending, leased by the dead
    # worker, and no attempt is logged.
    [notification] = notifications(clean_database)
    assert notification.status == PENDING
    assert notification.attempts == 0
    assert f":{process.pid}:" in notification.claimed_by  # host:pid:n, the dead worker
    assert notification.lease_until > utcnow()
    assert attempts(clean_database) == []
    assert waiting(clean_database)["notifications"] == 1

    search_engine.answer("/slow", 200)
    rescuer = in_process_worker(app, name="rescuer")
    # While the lease holds, nobody else sends it (the dead worker might still be sending).
    assert rescuer.run_once() == []
    assert len(search_engine.received("/slow")) == 1

    clock.advance(seconds=lease + 1)
    [attempt] = rescuer.run_once()
    assert attempt["outcome"] == SENT
    assert attempt["worker"] == "rescuer"

    [notification] = notifications(clean_database)
    assert notification.status == SENT
    assert notification.attempts == 1
    assert notification.lease_until is None
    assert [a.worker for a in attempts(clean_database)] == ["rescuer"]
    assert waiting(clean_database) == {
        "changes": 0,
        "oldest_change_at": None,
        "notifications": 0,
        "next_attempt_at": None,
    }
    # At least once: the engine heard the killed worker's request and the resent one.
    pings = search_engine.received("/slow")
    assert len(pings) == 2
    assert all(p["query"] == {"sitemap": INDEX_URL} for p in pings)


# 2. Two workers never send the same row twice ---------------------------------------------

PINGS = ("/ping-a", "/ping-b", "/ping-c")
CHANGED = 40


def import_posts(api, count):
    """``count`` listed posts in one request: one burst of changes."""
    fields = {"type": "post", "status": "publish", "published_at": JAN, "modified_at": JAN}
    lines = "".join(
        json.dumps({"post": {**fields, "title": f"Post {n}", "slug": f"p-{n}"}}) + "\n"
        for n in range(count)
    )
    response = api.post(
        "/api/import", lines.encode(), headers={"Content-Type": "application/x-ndjson"}
    )
    assert response.json["created"] == {"post": count}


@pytest.fixture
def busy_app(app_with, search_engine):
    """Many notifications per burst: a ping per target, one IndexNow submission per URL."""
    return app_with(
        **notify_settings(search_engine, *PINGS, **{"sitemap_server.indexnow.batch_size": "1"})
    )


def test_two_workers_send_every_notification_exactly_once(
    busy_app, api_token, search_engine, clean_database
):
    import_posts(client(busy_app, api_token), CHANGED)
    in_process_worker(busy_app).maintain()
    urls = {u for u in outbox_urls(clean_database) if u.startswith(f"{SITE_URL}/")}
    assert len(urls) >= CHANGED
    made = in_process_worker(busy_app).coalesce()
    assert made == len(PINGS) + len(urls)  # batch_size 1: one submission per URL
    # Slow enough answers that the two workers interleave.
    for path in (*PINGS, "/indexnow"):
        search_engine.answer(path, ("sleep", 0.02, 200))

    first = in_process_worker(busy_app, name="first")
    second = in_process_worker(busy_app, name="second")
    done = run_together(first.run_once, second.run_once)

    # Each request reached the engine once: every ping path, every URL.
    for path in PINGS:
        assert len(search_engine.received(path, "GET")) == 1, path
    submitted = Counter(
        url for r in search_engine.received("/indexnow", "POST") for url in r["body"]["urlList"]
    )
    assert set(submitted) == urls
    assert max(submitted.values()) == 1, [u for u, n in submitted.items() if n > 1]
    assert len(search_engine.requests) == made

    found = notifications(clean_database)
    assert len(found) == made
    assert all(n.status == SENT and n.attempts == 1 for n in found)
    logged = attempts(clean_database)
    assert sorted(a.notification_id for a in logged) == [n.id for n in found]
    assert sum(len(d) for d in done) == made
    by_worker = Counter(a.worker for a in logged)
    assert by_worker == Counter({"first": len(done[0]), "second": len(done[1])})
    # Both took part, or "exactly once" would prove nothing. Each request takes 20 ms and
    # a claim about 1 ms, so they interleave: 22 each in every run so far. One worker
    # sending everything would still be correct, but would mean the other was starved for
    # the whole test (about a second), which no scheduler does.
    assert set(by_worker) == {"first", "second"}, by_worker


def test_two_workers_coalescing_one_burst_at_once_make_one_ping_per_target(
    app_with, api_token, search_engine, clean_database
):
    app = app_with(**notify_settings(search_engine, *PINGS))
    admin = client(app, api_token)
    for n in range(3):
        create_post(admin, title=f"Post {n}", slug=f"post-{n}")
    in_process_worker(app).maintain()
    sessions = site_of_app(app).sessions
    config = site_of_app(app).notify
    # Both workers saw the same burst ready before either took it.
    with sessions.begin() as session:
        ready = outbox.burst_ready(session, config)
    assert ready is not None

    # The first takes the rows and holds its transaction open...
    first = sessions()
    first.begin()
    made_first = outbox.coalesce(first, config, ready)
    assert len(made_first) == len(PINGS) + 1

    # ... while the second tries to take the same ones.
    second_made = []
    second_deleting = threading.Event()

    def second():
        with sessions.begin() as session:
            second_made.extend(outbox.coalesce(session, config, ready))

    @event.listens_for(site_of_app(app).database, "before_cursor_execute")
    def deleting(conn, cursor, statement, *args):
        if threading.current_thread() is thread and statement.startswith(
            "DELETE FROM notification_changes"
        ):
            second_deleting.set()

    thread = threading.Thread(target=second, name="second-coalescer")
    try:
        thread.start()
        assert second_deleting.wait(timeout=DEADLINE)
        if clean_database.dialect.name == "postgresql":
            wait_for(lambda: blocked_on_a_lock(clean_database), "second DELETE waiting on a lock")
        first.commit()
    finally:
        first.close()
        thread.join(timeout=DEADLINE)
        event.remove(site_of_app(app).database, "before_cursor_execute", deleting)
    assert not thread.is_alive()
    assert second_made == []  # it found the rows gone

    assert len(notifications(clean_database)) == len(PINGS) + 1
    sent = in_process_worker(app).run_once()
    assert [a["outcome"] for a in sent] == [SENT] * (len(PINGS) + 1)
    for path in PINGS:
        assert len(search_engine.received(path, "GET")) == 1, path
    assert len(search_engine.received("/indexnow", "POST")) == 1


def blocked_on_a_lock(engine):
    with engine.connect() as conn:
        return conn.scalar(
            text(
                "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'"
                " AND query LIKE 'DELETE FROM notification_changes%'"
            )
        )


# 3. The admin request does not wait on the network ----------------------------------------


def test_the_admin_request_does_not_wait_for_a_slow_search_engine(
    app_settings, api, api_token, search_engine, clean_database
):
    """The engine answers only when the test lets it: each PATCH returns while the ping
    is unanswered (no attempt recorded), however slow the machine is."""
    # Written through an application that tells nobody: the burst under test is the PATCH.
    post = create_post(api, title="Before", slug="slow-engine")
    release = threading.Event()
    search_engine.answer("/slow", ("hold", release, 200))
    settings = {
        **app_settings,
        **notify_settings(
            search_engine,
            "/slow",
            indexnow=False,
            **{
                "sitemap_server.notify.worker_thread": "true",
                "sitemap_server.notify.poll_seconds": "0.1",
                # The worker never gives up on the held answer while the test runs.
                "sitemap_server.notify.timeout_seconds": "120",
                "sitemap_server.notify.lease_seconds": "600",
            },
        ),
    }
    # Not app_with: that keeps its applications, and so this worker thread, for the session.
    app = main({}, **settings)
    thread = site_of_app(app).worker_thread
    try:
        admin = client(app, api_token)
        admin.patch_json(
            f"/api/posts/{post['id']}", {"modified_at": "2024-02-01T08:00:00+00:00"}, status=200
        )
        assert attempts(clean_database) == []  # it did not wait for the engine's answer

        # The worker thread sends it afterwards, on its own.
        [ping] = wait_for(lambda: search_engine.received("/slow"), "ping received")
        assert ping["query"] == {"sitemap": INDEX_URL}

        # While that request hangs, writes go on: the send holds no transaction (on
        # SQLite, a send inside one would keep every writer waiting for the lock).
        admin.patch_json(f"/api/posts/{post['id']}", {"title": "After"}, status=200)
        assert attempts(clean_database) == []  # the ping is still unanswered
        assert len(search_engine.received("/slow")) == 1  # still the first one in flight
        release.set()
        wait_for(lambda: attempts(clean_database), "the ping to be answered")
    finally:
        release.set()
        thread.stop(timeout=DEADLINE)  # lets the request in flight finish
        site_of_app(app).close()
    assert not thread.thread.is_alive()
    sent = [n for n in notifications(clean_database) if n.status == SENT]
    assert len(sent) == 1


# 4. Stopping ------------------------------------------------------------------------------


def test_the_worker_stops_cleanly_on_sigterm(search_engine, clean_database, database_url, tmp_path):
    # A long poll: it must not wait for the next pass to notice the signal.
    settings = notify_settings(
        search_engine, "/ping", **{"sitemap_server.notify.poll_seconds": "30"}
    )
    ini = write_ini(tmp_path / "worker.ini", database_url, settings)
    log = tmp_path / "worker.log"
    with worker_process(str(ini), server_environment(), log) as process:
        wait_for(lambda: "started" in read(log), "worker started", process, log)
        stopping = time.monotonic()
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=DEADLINE) == 0, read(log)
        assert time.monotonic() - stopping < 5
    assert "stopped" in read(log)
    assert "Traceback" not in read(log)


def test_sigterm_mid_send_finishes_and_records_the_send_before_stopping(
    app_with, api_token, search_engine, clean_database, database_url, tmp_path
):
    settings = notify_settings(search_engine, "/slow", indexnow=False)
    create_post(client(app_with(**settings), api_token), title="Stopping", slug="stopping")
    search_engine.answer("/slow", ("sleep", 0.5, 200))
    ini = write_ini(
        tmp_path / "worker.ini",
        database_url,
        {**settings, "sitemap_server.notify.poll_seconds": "0.1"},
    )
    log = tmp_path / "worker.log"
    with worker_process(str(ini), server_environment(), log) as process:
        wait_for(lambda: search_engine.received("/slow"), "ping received", process, log)
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=DEADLINE) == 0, read(log)
    [notification] = notifications(clean_database)
    assert notification.status == SENT
    assert [a.outcome for a in attempts(clean_database)] == [SENT]
    assert len(search_engine.received("/slow")) == 1
