"""The write path: a write only records what it changed; the maintainer applies it.

What a client sees: a write answers with the number of its change (``Sitemap-Change``),
``GET /api/sitemaps/status`` says whether it is served, the sitemaps show it once the
maintainer has applied it (or once it has waited ``max_staleness``), and a maintainer pass
that fails leaves the change to the next one.
"""

from __future__ import annotations

import json
import threading
from typing import Any

import pytest
from sqlalchemy import func, select
from sqlalchemy.exc import OperationalError

from sitemap_server.app import site_of_app
from sitemap_server.hookspecs import hookimpl
from sitemap_server.models import SitemapChange, SitemapEntry, SitemapVersion
from sitemap_server.sitemaps import maintenance
from sitemap_server.sitemaps.presence import Presence
from sitemap_server.testing import (
    SITE_URL,
    apply_changes,
    assert_problem,
    client,
    forget_rendered,
    url_locs,
)

JAN = "2024-01-15T10:00:00+00:00"


def create_post(api: Any, **fields: Any) -> Any:
    body = {"type": "post", "status": "publish", "published_at": JAN, "modified_at": JAN}
    return api.post_json("/api/posts", {**body, **fields}, status=201)


def status(api: Any, **params: Any) -> dict[str, Any]:
    return dict(api.get("/api/sitemaps/status", params=params, status=200).json)


def stored(engine: Any) -> tuple[int, int, int]:
    """(entries, the post provider's version, change-log rows)."""
    with engine.connect() as conn:
        entries = conn.scalar(select(func.count()).select_from(SitemapEntry))
        version = conn.scalar(
            select(SitemapVersion.version).where(SitemapVersion.provider == "post")
        )
        waiting = conn.scalar(select(func.count()).select_from(SitemapChange))
    return entries, version or 0, waiting


def test_a_write_records_its_change_and_the_status_says_when_it_is_served(
    api, testapp, clean_database
):
    testapp.get("/sitemap_index.xml")  # every sitemap built
    before = stored(clean_database)
    response = create_post(api, title="Hello", slug="hello")
    change = int(response.headers["Sitemap-Change"])

    # The write's transaction touched no sitemap: one row waits in the change log.
    entries, version, waiting = stored(clean_database)
    assert (entries, version) == before[:2]
    assert waiting == before[2] + 1
    found = status(api, change=change)
    assert found["applied"] is False
    assert found["waiting"] == 1
    assert found["oldest_waiting_seconds"] >= 0
    assert found["max_staleness_seconds"] == 0

    assert apply_changes(api) == 1
    assert status(api, change=change) == {
        "waiting": 0,
        "oldest_waiting_seconds": None,
        "max_staleness_seconds": 0,
        "change": change,
        "applied": True,
    }
    assert f"{SITE_URL}/2024/01/hello/" in url_locs(testapp, "/post-sitemap.xml")


def test_a_change_number_never_recorded_is_not_found(api, testapp, clean_database):
    """Not "applied": a number no write was given (the status endpoint tells the
    truth), also once the log it was in is emptied."""
    response = api.get("/api/sitemaps/status", params={"change": 99_999_999}, status=404)
    assert_problem(response, 404, "change")
    change = int(create_post(api, title="Counted", slug="counted").headers["Sitemap-Change"])
    assert status(api, change=change)["applied"] is False
    response = api.get("/api/sitemaps/status", params={"change": change + 1}, status=404)
    assert f"the newest is {change}" in response.json["detail"]
    assert apply_changes(api) == 1
    assert status(api, change=change)["applied"] is True
    api.get("/api/sitemaps/status", params={"change": change + 1}, status=404)


# Late answers allowed, read by each request: a PostgreSQL process's versions watch reads
# the oldest waiting change again in real time (every max_staleness / 2), which the
# tests' movable clock does not drive (tests/functional/test_versions_watch.py).
WAITING = {"sitemap_server.max_staleness": "30", "sitemap_server.versions_watch": "false"}


def site_with_a_waiting_post(app_with: Any, api_token: str) -> tuple[Any, Any, Any, str]:
    """An app with ``max_staleness`` 30 s whose sitemaps are built, then a post written:
    (app, admin client, crawler client, the post's URL)."""
    app = app_with(**WAITING)
    admin = client(app, api_token)
    reader = client(app)
    reader.get("/sitemap_index.xml")
    create_post(admin, title="Hello", slug="hello")
    return app, admin, reader, f"{SITE_URL}/2024/01/hello/"


def test_a_read_does_not_apply_a_fresh_change_but_one_that_waited_max_staleness(
    app_with, api_token, clock
):
    _app, admin, reader, url = site_with_a_waiting_post(app_with, api_token)

    assert url not in url_locs(reader, "/post-sitemap.xml")  # 0 s old: may wait
    clock.advance(seconds=31)
    assert url in url_locs(reader, "/post-sitemap.xml")  # 31 s old: applied first
    assert status(admin)["waiting"] == 0


def test_a_read_leaves_the_log_to_a_live_worker(app_with, api_token, clock):
    """While a worker is alive (its mark held: ``sitemaps/presence.py``) a read never
    applies the log, however long a change has waited: under load, readers that helped
    stalled the worker (issue 29, case 3). Once no worker is alive, reads apply again."""
    app, admin, reader, url = site_with_a_waiting_post(app_with, api_token)
    clock.advance(seconds=31)
    worker = Presence(site_of_app(app).database)
    worker.hold()
    try:
        assert url not in url_locs(reader, "/post-sitemap.xml")
        assert status(admin)["waiting"] == 1
    finally:
        worker.release()
    forget_rendered(app)  # a new process: it has not seen the worker
    assert url in url_locs(reader, "/post-sitemap.xml")
    assert status(admin)["waiting"] == 0


def test_a_read_applies_a_bounded_number_of_waiting_changes(
    app_with, api_token, clock, monkeypatch
):
    """Without a worker, an import's changes are applied a few at a time by the requests
    that find them waiting too long, never all of them (or a rebuild) in one request."""
    from sitemap_server.sitemaps import reader as reader_module

    monkeypatch.setattr(reader_module, "READER_CHANGES", 4)
    app = app_with(**WAITING)
    admin = client(app, api_token)
    reader = client(app)
    reader.get("/sitemap_index.xml")
    post = {"type": "post", "status": "publish", "published_at": JAN}
    lines = "".join(json.dumps({"post": {**post, "title": f"P{n}"}}) + "\n" for n in range(10))
    admin.post("/api/import", lines, headers={"Content-Type": "application/x-ndjson"})
    assert status(admin)["waiting"] == 10
    clock.advance(seconds=31)

    waiting = []
    for _ in range(3):
        reader.get("/sitemap_index.xml", status=200)
        waiting.append(status(admin)["waiting"])
    assert waiting == [6, 2, 0]
    listed = set(url_locs(reader, "/post-sitemap.xml"))
    assert {f"{SITE_URL}/2024/01/p{n}/" for n in range(10)} <= listed


def test_writes_that_change_nothing_answer_without_a_change_number(api):
    post = create_post(api, title="Hello", slug="hello").json
    assert "Sitemap-Change" not in api.get(f"/api/posts/{post['id']}").headers
    refused = api.patch_json(f"/api/posts/{post['id']}", {"status": "nonsense"}, status=400)
    assert "Sitemap-Change" not in refused.headers


class FailingListener:
    """A plugin whose ``sitemap_changed`` meets an outage: the maintainer's pass fails with
    it (a plugin's bug is contained instead: test_contained_failures.py)."""

    @hookimpl
    def sitemap_changed(self, session: Any, sitemap: str, urls: Any) -> None:
        raise OperationalError("INSERT", {}, Exception("the listener failed"))


def test_a_failed_pass_keeps_the_change_for_the_next_one(wsgi_app, api, testapp, clean_database):
    testapp.get("/sitemap_index.xml")
    change = int(create_post(api, title="Kept", slug="kept").headers["Sitemap-Change"])
    plugins = site_of_app(wsgi_app).plugins
    listener = FailingListener()
    plugins.register(listener)
    try:
        with pytest.raises(OperationalError, match="the listener failed"):
            apply_changes(api)
    finally:
        plugins.unregister(listener)
    assert status(api, change=change)["applied"] is False  # rolled back: still waiting

    assert apply_changes(api) == 1
    assert f"{SITE_URL}/2024/01/kept/" in url_locs(testapp, "/post-sitemap.xml")


def test_a_read_never_waits_for_a_maintainer_at_work(app_with, api_token, clock):
    """A read that finds a change waiting too long applies it only if no one else is
    applying the log (or, on SQLite, writing) at that moment: otherwise it answers with
    what is stored, and a later read (or that maintainer) shows the change."""
    app, admin, reader, url = site_with_a_waiting_post(app_with, api_token)
    clock.advance(seconds=31)

    sessions = site_of_app(app).sessions
    with sessions.begin() as busy:
        assert maintenance.try_lock(busy, maintenance.MAINTAINER)  # someone at work
        assert url not in url_locs(reader, "/post-sitemap.xml")  # 200, what is stored
    assert status(admin)["waiting"] == 1
    assert url in url_locs(reader, "/post-sitemap.xml")  # free again: applied first
    assert status(admin)["waiting"] == 0


def test_two_maintainers_at_once_apply_each_change_once(wsgi_app, api, testapp, clean_database):
    """One holds the maintainer's lock: the other finds it taken (PostgreSQL) or waits for
    SQLite's write lock and then finds nothing left; no change is applied twice."""
    testapp.get("/sitemap_index.xml")
    create_post(api, title="Once", slug="once")
    sessions = site_of_app(wsgi_app).sessions
    version_before = stored(clean_database)[1]
    second: list[int | None] = []

    on_postgresql = clean_database.dialect.name == "postgresql"
    with sessions.begin() as first:
        assert maintenance.apply_pending(first) == 1

        def other() -> None:
            with sessions.begin() as session:
                second.append(maintenance.apply_pending(session))

        thread = threading.Thread(target=other)
        thread.start()
        if on_postgresql:  # the try-lock answers at once, while the first holds it
            thread.join(timeout=10)
    thread.join(timeout=10)  # SQLite: it had to wait for the first one's commit
    assert second == ([None] if on_postgresql else [0])
    assert stored(clean_database)[1] == version_before + 1  # one new version, not two


def test_a_long_change_log_is_applied_as_one_rebuild(wsgi_app, api, testapp, clean_database):
    """After a full batch, as many changes still waiting as half the stored entries (an
    import): the maintainer rebuilds every sitemap at once instead of batch by batch. A few
    changes on a site of many entries are applied as they are."""
    testapp.get("/sitemap_index.xml")
    post = {"type": "post", "status": "publish", "published_at": JAN}
    lines = "".join(json.dumps({"post": {**post, "title": f"P{n}"}}) + "\n" for n in range(12))
    api.post("/api/import", lines, headers={"Content-Type": "application/x-ndjson"}, status=200)
    sessions = site_of_app(wsgi_app).sessions
    with sessions.begin() as session:
        assert maintenance.apply_pending(session, limit=3) == 12  # 3, then the other 9
    assert stored(clean_database)[2] == 0
    listed = url_locs(testapp, "/post-sitemap.xml")
    assert {f"{SITE_URL}/2024/01/p{n}/" for n in range(12)} <= set(listed)

    # 12 posts and more are stored now: 2 edits more are no import.
    for n in (1, 2):
        api.patch_json(f"/api/posts/{n}", {"title": f"Edited {n}"}, status=200)
    with sessions.begin() as session:
        assert maintenance.apply_pending(session, limit=1) == 1
    assert stored(clean_database)[2] == 1


def test_change_numbers_only_grow_even_after_the_log_was_emptied(api):
    first = int(create_post(api, title="One", slug="one").headers["Sitemap-Change"])
    apply_changes(api)  # the log is empty again
    second = int(create_post(api, title="Two", slug="two").headers["Sitemap-Change"])
    assert second > first
    assert status(api, change=first)["applied"] is True
    assert status(api, change=second)["applied"] is False


def test_the_worker_applies_the_log_more_rarely_on_sqlite_unless_told(app_with):
    """``maintainer.poll_seconds = auto``: SQLite's passes hold its one write lock."""
    from sitemap_server.notify.worker import Worker

    def poll(**settings: str) -> float:
        return Worker(site_of_app(app_with(**settings))).apply_poll_seconds

    sqlite = site_of_app(app_with()).database.dialect.name == "sqlite"
    assert poll() == (0.5 if sqlite else 0.1)
    assert poll(**{"sitemap_server.maintainer.poll_seconds": "0.25"}) == 0.25


def test_changes_written_during_a_pass_wait_for_the_next_call(
    wsgi_app, api, testapp, clean_database, monkeypatch
):
    """Under a steady stream of writes the maintainer applies them in batches a poll
    apart, not back to back a few at a time (a pass costs much the same for one change
    as for ten): a batch that was not full ends the call, and what was written meanwhile
    waits for the next. Full batches follow each other at once (an import)."""
    testapp.get("/sitemap_index.xml")
    engine = site_of_app(wsgi_app).engine
    create_post(api, title="First", slug="first")
    written: list[Any] = []

    def write_meanwhile(count: int) -> None:
        if not written:
            written.append(create_post(api, title="Meanwhile", slug="meanwhile"))

    assert engine.apply(progress=write_meanwhile) == 1
    assert stored(clean_database)[2] == 1  # the change written meanwhile waits
    assert engine.apply() == 1
    assert stored(clean_database)[2] == 0

    monkeypatch.setattr(maintenance, "APPLY_BATCH", 1)  # every batch full
    monkeypatch.setattr(maintenance, "_cheaper_to_rebuild", lambda session: False)
    for n in (1, 2):
        create_post(api, title=f"Batch {n}", slug=f"batch-{n}")
    assert engine.apply() == 2
    assert stored(clean_database)[2] == 0


def test_catching_up_applies_the_log_as_it_was_not_what_is_written_meanwhile(
    wsgi_app, api, testapp, clean_database, monkeypatch
):
    """``catch_up`` (a request that finds a scheduled post due, the worker's notification
    pass, ``check``) works in one transaction: chasing what is written meanwhile, under a
    steady stream of writes, it would never commit and none of it would be served."""
    from sitemap_server.sitemaps.changes import ContentChanges, log

    testapp.get("/sitemap_index.xml")
    post = create_post(api, title="First", slug="first").json["id"]
    refresh = maintenance.refresh
    written: list[int] = []

    def refresh_while_written(session: Any, changes: Any) -> Any:
        done = refresh(session, changes)
        if not written:  # a change recorded while the first batch is applied
            log(session, ContentChanges(posts={post}))
            written.append(post)
        return done

    monkeypatch.setattr(maintenance, "refresh", refresh_while_written)
    with site_of_app(wsgi_app).sessions.begin() as session:
        assert maintenance.catch_up(session) is True
    assert written and stored(clean_database)[2] == 1  # left to the next pass
