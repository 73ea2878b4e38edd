"""A process keeps the versions between requests, and reads them again when the database
says they changed (``sitemaps/watch.py``): what a crawler sees of it.

On SQLite the watch is exact (the commit count of other connections); on PostgreSQL a
thread listens for the notification a trigger sends when ``sitemap_versions`` changes, and
is used when ``max_staleness`` lets an answer be late (the tests' default of 0 does not:
these tests ask for 60 s, so that only a notification, not the thread's periodic read,
can show a change within a second). Whenever the watch cannot vouch for its rows, the
requests read the versions themselves.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import Any

import pytest
from sqlalchemy import Engine, text

from sitemap_server.app import site_of_app
from sitemap_server.testing import client

LATE = {"sitemap_server.max_staleness": "60"}


@pytest.fixture
def watched(app_with: Callable[..., Any], clean_database: Engine) -> Any:
    app = app_with(**LATE)
    watch = site_of_app(app).reader.watch
    assert watch is not None
    return app


def bump(engine: Engine) -> None:
    """A new version of every provider, committed by another connection (as the worker's
    maintainer would)."""
    with engine.begin() as conn:
        conn.execute(text("UPDATE sitemap_versions SET version = version + 1"))


def etag_within(testapp: Any, seconds: float, unlike: str) -> tuple[str, int]:
    """The index's ETag once it differs from ``unlike`` (or after ``seconds``: a deadline
    that only ends the wait on a loaded machine), and how many requests it took."""
    deadline = time.monotonic() + seconds
    asked = 0
    while True:
        etag = testapp.get("/sitemap_index.xml").headers["ETag"]
        asked += 1
        if etag != unlike or time.monotonic() > deadline:
            return etag, asked
        time.sleep(0.005)


def until(condition: Callable[[], bool], seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


def test_a_commit_of_another_connection_is_in_the_next_answers(watched, clean_database):
    testapp = client(watched)
    watch = site_of_app(watched).reader.watch
    sqlite = clean_database.dialect.name == "sqlite"
    before = testapp.get("/sitemap_index.xml").headers["ETag"]
    if not sqlite:
        assert until(lambda: watch.listening, 5)
    for _ in range(3):
        bump(clean_database)
        after, asked = etag_within(testapp, 10, unlike=before)
        assert after != before
        if sqlite:  # exact: the very next request
            assert asked == 1
        before = after
    assert testapp.get("/sitemap_index.xml", headers={"If-None-Match": before}).status_int == 304


def test_requests_read_the_versions_themselves_while_the_watch_is_cut_off(watched, clean_database):
    testapp = client(watched)
    watch = site_of_app(watched).reader.watch
    before = testapp.get("/sitemap_index.xml").headers["ETag"]
    if clean_database.dialect.name == "sqlite":
        watch.conn.connection.driver_connection.close()  # behind its back
    else:
        assert until(lambda: watch.listening, 5)
        with clean_database.connect() as conn:
            killed = conn.execute(
                text(
                    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                    "WHERE application_name = 'sitemap-server versions watch' "
                    "AND datname = current_database()"
                )
            ).scalars()
            assert any(killed)
        assert until(lambda: watch.rows() is None, 5)

    bump(clean_database)
    cut_off = testapp.get("/sitemap_index.xml").headers["ETag"]
    assert cut_off != before  # read by the request itself

    # The watch comes back by itself, and is told of the next change.
    assert until(lambda: watch.rows() is not None, 5)
    bump(clean_database)
    after, _ = etag_within(testapp, 10, unlike=cut_off)
    assert after != cut_off


def test_postgresql_is_watched_only_when_an_answer_may_be_late(app_with, clean_database):
    exact = app_with()  # max_staleness 0: every answer shows every write before it
    watch = site_of_app(exact).reader.watch
    if clean_database.dialect.name == "sqlite":
        assert watch is not None  # exact anyway
    else:
        assert watch is None


def test_a_change_that_waited_max_staleness_is_applied_by_a_read_while_watched(
    app_with, api_token, clean_database
):
    """The watch keeps the oldest waiting change too (read again every max_staleness / 2
    on PostgreSQL, where writes do not notify): with no worker, a read applies a change
    once it has waited max_staleness, as without a watch, and not before."""
    app = app_with(**{"sitemap_server.max_staleness": "0.6"})
    admin, crawler = client(app, api_token), client(app)
    assert site_of_app(app).reader.watch is not None
    crawler.get("/sitemap_index.xml")
    body = {"type": "post", "status": "publish", "title": "Hello", "slug": "hello"}
    written = time.monotonic()
    url = admin.post_json("/api/posts", body, status=201).json["permalink"]

    def listed() -> bool:
        return url in crawler.get("/post-sitemap.xml").text

    # How soon after that depends on the machine's load: a deadline only ends the wait.
    assert until(listed, 30)
    assert time.monotonic() - written >= 0.6


def test_a_forked_process_watches_on_a_connection_of_its_own(watched, clean_database):
    """A server that forks its workers after loading the application (gunicorn's
    preload): each child opens its own connection, or starts its own thread."""
    testapp = client(watched)
    watch = site_of_app(watched).reader.watch
    before = testapp.get("/sitemap_index.xml").headers["ETag"]
    sqlite = clean_database.dialect.name == "sqlite"
    if sqlite:
        parents = watch.conn
    else:
        assert until(lambda: watch.listening, 5)
        parents = watch.thread
    watch.pid = -1  # as a child sees the parent's watch

    bump(clean_database)
    after, _ = etag_within(testapp, 10, unlike=before)
    assert after != before
    assert watch.pid == os.getpid()
    if sqlite:
        assert watch.conn is not None and watch.conn is not parents
    else:
        assert until(lambda: watch.listening, 5)
        assert watch.thread is not parents
        assert until(lambda: not parents.is_alive(), 5)


def test_a_request_asking_for_no_cache_reads_the_versions_from_the_database(
    watched, clean_database, monkeypatch
):
    """A watch a commit behind (as a PostgreSQL watch is for a moment after it) answers
    the versions it has; a request with ``Cache-Control: no-cache`` (a purged cache's
    fetch, deploy/varnish/sitemaps.vcl) or ``Pragma: no-cache`` gets the committed ones."""
    testapp = client(watched)
    watch = site_of_app(watched).reader.watch
    before = testapp.get("/sitemap_index.xml").headers["ETag"]
    behind = watch.rows()
    monkeypatch.setattr(watch, "rows", lambda: behind)  # it has not heard of the bump
    bump(clean_database)
    assert testapp.get("/sitemap_index.xml").headers["ETag"] == before
    for asking in ({"Cache-Control": "no-cache"}, {"Pragma": "no-cache"}):
        fresh = testapp.get("/sitemap_index.xml", headers=asking)
        assert fresh.headers["ETag"] != before, asking
    for not_asking in ({"Cache-Control": "max-age=0"}, {"Cache-Control": "no-cachex"}):
        assert testapp.get("/sitemap_index.xml", headers=not_asking).headers["ETag"] == before
