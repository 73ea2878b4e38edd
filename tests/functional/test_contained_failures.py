"""No single row, entry or plugin can stop the maintainer (issue 29, cases 1 and 2).

A failure while one sitemap or one entry is computed (a provider's or a plugin's code
raising, a date no layer can shift) is contained: that entry is left out or left as
stored, the failure is logged and reported by ``check``, every other change is applied,
and no request answers 500 because of it. An outage is not contained: the pass fails and
the change waits for the next one.

The bugs are those of ``tests/faulty_plugin.py``, an ordinary plugin registered by name.
"""

from __future__ import annotations

import logging
import threading
from datetime import UTC, datetime
from typing import Any

import faulty_plugin
import pytest
from sqlalchemy import select, update
from sqlalchemy.exc import OperationalError

from sitemap_server.app import site_of_app
from sitemap_server.hookspecs import hookimpl
from sitemap_server.models import Post
from sitemap_server.sitemaps import maintenance
from sitemap_server.sitemaps.check import check
from sitemap_server.sitemaps.engine import engine_of
from sitemap_server.testing import SITE_URL, apply_changes, client, fetch_sitemap, url_locs

JAN = "2024-01-15T10:00:00+00:00"
FAULTY = {"sitemap_server.extra_plugins": "faulty_plugin"}


@pytest.fixture
def faulty(app_with, api_token, clean_database):
    """(the application with the faulty plugin, a signed-in client, a crawler)."""
    faulty_plugin.FAILING_LISTENER.clear()
    app = app_with(**FAULTY)
    admin, crawler = client(app, api_token), client(app)
    crawler.get("/sitemap_index.xml", status=200)  # every sitemap built
    yield app, admin, crawler
    faulty_plugin.FAILING_LISTENER.clear()


def create_post(api: Any, slug: str, **fields: Any) -> int:
    body = {"type": "post", "status": "publish", "published_at": JAN, "modified_at": JAN}
    return int(
        api.post_json("/api/posts", {**body, "title": slug, "slug": slug, **fields}).json["id"]
    )


def post_url(slug: str) -> str:
    return f"{SITE_URL}/2024/01/{slug}/"


def checked(app: Any) -> Any:
    with site_of_app(app).sessions() as session, session.begin():
        return check(session)


def test_a_provider_that_fails_on_one_post_lists_every_other(faulty, caplog):
    app, admin, crawler = faulty
    caplog.set_level(logging.ERROR, "sitemap_server.sitemaps")
    one = create_post(admin, "one")
    boom = create_post(admin, "provider-boom")
    two = create_post(admin, "two")

    # One pass applies the three posts: the faulty sitemap fails on one of them.
    locs = url_locs(crawler, "/faulty-sitemap.xml")
    assert locs == [f"{SITE_URL}/faulty/one/", f"{SITE_URL}/faulty/two/"]
    assert set(url_locs(crawler, "/post-sitemap.xml")) >= {
        post_url("one"),
        post_url("provider-boom"),
        post_url("two"),
    }
    assert f"the entry with key {boom} in the faulty sitemap could not be computed" in caplog.text
    assert "ValueError: the faulty provider cannot list 'provider-boom'" in caplog.text
    assert {one, two} < set(range(1, two + 1))

    # check reports it; the other sitemaps are what the content implies.
    report = checked(app)
    assert report.failures
    assert all("faulty sitemap" in failure for failure in report.failures)
    assert all(d.provider == "faulty" for d in report.differences)


def test_a_filter_that_fails_on_one_entry_leaves_only_that_entry_out(faulty, caplog):
    app, admin, crawler = faulty
    caplog.set_level(logging.ERROR, "sitemap_server.sitemaps")
    boom = create_post(admin, "entry-boom")
    create_post(admin, "fine")

    assert post_url("fine") in url_locs(crawler, "/post-sitemap.xml")
    assert post_url("entry-boom") not in url_locs(crawler, "/post-sitemap.xml")
    assert f"post {boom} in the post sitemap (sitemap_entry) could not be computed" in caplog.text
    assert "is left out: RuntimeError: the faulty filter fails" in caplog.text
    assert any(f"post {boom} in the post sitemap" in f for f in checked(app).failures)
    explained = admin.get(f"/api/explain?post={boom}", status=200).json
    assert explained["listed"] is False
    assert [r["rule"] for r in explained["reasons"]] == ["computation"]
    assert "RuntimeError: the faulty filter fails" in explained["reasons"][0]["reason"]


def test_a_provider_that_cannot_explain_a_date_leaves_only_that_date_unexplained(faulty):
    _app, admin, _crawler = faulty
    create_post(admin, "explain-boom")
    create_post(admin, "fine")

    def listing(path: str) -> Any:
        explained = admin.get("/api/explain", params={"url": path}, status=200).json
        [found] = explained["sitemaps"]
        return found

    assert listing("/faulty/explain-boom/")["lastmod_source"] == (
        "the faulty sitemap's provider could not say "
        "(RuntimeError: the faulty provider cannot explain /faulty/explain-boom/)"
    )
    assert listing("/faulty/fine/")["lastmod_source"] == (
        "computed by the faulty sitemap's provider"
    )


def test_a_listener_that_fails_for_one_sitemap_keeps_it_as_stored(faulty, caplog):
    app, admin, crawler = faulty
    caplog.set_level(logging.ERROR, "sitemap_server.sitemaps")
    before = url_locs(crawler, "/post-sitemap.xml")
    faulty_plugin.FAILING_LISTENER.add("post")
    change = admin.post_json(
        "/api/posts",
        {
            "type": "post",
            "status": "publish",
            "title": "Held",
            "slug": "held",
            "published_at": JAN,
            "modified_at": JAN,
        },
    ).headers["Sitemap-Change"]

    # The pass completes: the change is applied everywhere but in the post sitemap.
    assert url_locs(crawler, "/post-sitemap.xml") == before
    assert admin.get("/api/sitemaps/status", params={"change": change}).json["applied"]
    # Its entries, then each key, fail: the log names the sitemap either way.
    assert "the post sitemap could not be computed" in caplog.text

    faulty_plugin.FAILING_LISTENER.clear()
    report = checked(app)
    assert not report.failures
    assert {(d.provider, d.field) for d in report.differences} >= {("post", "listed")}
    with site_of_app(app).sessions() as session, session.begin():
        assert check(session, repair=True).repaired
    assert post_url("held") in url_locs(client(app), "/post-sitemap.xml")


def test_an_outage_in_a_pass_keeps_the_change_for_the_next_one(faulty):
    """An outage is not contained: nothing of the pass is kept, the change waits."""
    app, admin, crawler = faulty

    class Outage:
        @hookimpl
        def sitemap_changed(self, session: Any, sitemap: str, urls: Any) -> None:
            raise OperationalError("SELECT 1", {}, Exception("server closed the connection"))

    plugins = site_of_app(app).plugins
    plugins.register(outage := Outage())
    try:
        change = admin.post_json(
            "/api/posts",
            {
                "type": "post",
                "status": "publish",
                "title": "Kept",
                "slug": "kept",
                "published_at": JAN,
                "modified_at": JAN,
            },
        ).headers["Sitemap-Change"]
        with pytest.raises(OperationalError):
            apply_changes(app)
    finally:
        plugins.unregister(outage)
    assert admin.get("/api/sitemaps/status", params={"change": change}).json["applied"] is False
    assert apply_changes(app) == 1
    assert post_url("kept") in url_locs(crawler, "/post-sitemap.xml")


def test_a_request_answers_with_what_is_stored_when_applying_fails(
    api, testapp, monkeypatch, caplog
):
    testapp.get("/sitemap_index.xml", status=200)
    create_post(api, "waiting")

    def broken(*_: Any, **__: Any) -> None:
        raise RuntimeError("a bug in the maintainer")

    monkeypatch.setattr(maintenance, "apply_some", broken)
    caplog.set_level(logging.ERROR, "sitemap_server.sitemaps.reader")
    for path in ("/sitemap_index.xml", "/post-sitemap.xml", "/robots.txt"):
        testapp.get(path, status=200)
    assert post_url("waiting") not in url_locs(testapp, "/post-sitemap.xml")
    assert "answering with what is stored" in caplog.text


@pytest.mark.parametrize(
    ("published", "modified"),
    [
        (datetime(2024, 1, 15, tzinfo=UTC), datetime(9999, 12, 31, 23, 59, 59, tzinfo=UTC)),
        (datetime(1, 1, 1, tzinfo=UTC), datetime(1, 1, 1, tzinfo=UTC)),
    ],
    ids=["modified-9999-12-31", "published-0001-01-01"],
)
def test_a_date_no_layer_can_shift_stops_nothing(
    api, testapp, app_session, published, modified, caplog
):
    """Dates are refused at the API's door outside 1000..9999; one stored before (or
    written by hand) is still contained: in a time zone that pushes it past the calendar
    the post is left out, reported, and everything else is served."""
    testapp.get("/sitemap_index.xml", status=200)
    api.patch_json("/api/settings", {"timezone": "Pacific/Kiritimati"}, status=200)
    odd = create_post(api, "odd")
    create_post(api, "ordinary")
    testapp.get("/sitemap_index.xml", status=200)
    app_session.execute(
        update(Post).where(Post.id == odd).values(modified_at=modified, published_at=published)
    )
    engine_of(app_session).record(app_session, posts={odd})
    app_session.commit()
    caplog.set_level(logging.ERROR, "sitemap_server.sitemaps")

    index = fetch_sitemap(testapp, "/sitemap_index.xml")  # applied first (max_staleness 0)
    locs = url_locs(testapp, "/post-sitemap.xml")
    assert post_url("ordinary") in locs
    assert not [loc for loc in locs if "/odd/" in loc]
    for loc in [loc.text for loc in index.iter("{*}loc")]:
        fetch_sitemap(testapp, loc[len(SITE_URL) :])  # 200, and valid
    assert f"post {odd} in the post sitemap could not be computed" in caplog.text
    report = checked(testapp.app)
    assert report.failures
    assert all(f"post {odd} in the " in failure for failure in report.failures)
    explained = api.get(f"/api/explain?post={odd}", status=200).json
    assert explained["listed"] is False
    [reason] = explained["reasons"]
    assert reason["rule"] == "computation"
    assert "could not be computed (OverflowError" in reason["reason"]


def test_posts_deleted_while_passes_run_fail_no_pass(app_with, api_token, clean_database):
    """Creates and deletes from one thread while another applies the change log, pass
    after pass (PostgreSQL: each statement of a pass sees the commits made before it).
    No pass fails, and afterwards the stored sitemaps are what the content implies."""
    # SQLite: the writes wait for the passes' write lock as long as a loaded machine needs.
    app = app_with(**{"sitemap_server.sqlite.busy_timeout_ms": "120000"})
    testapp = client(app)
    testapp.get("/sitemap_index.xml", status=200)
    sessions = site_of_app(app).sessions
    writer = client(app, api_token)
    done = threading.Event()
    failures: list[BaseException] = []

    def passes() -> None:
        while not done.is_set():
            try:
                maintenance.apply_all(sessions)
            except BaseException as error:
                failures.append(error)
                return
            done.wait(0.001)  # a moment between passes, as the worker leaves

    thread = threading.Thread(target=passes, daemon=True)
    thread.start()
    try:
        for round_ in range(40):
            ids = [create_post(writer, f"churn-{round_}-{n}") for n in range(3)]
            for post_id in ids[:2]:
                writer.delete(f"/api/posts/{post_id}", status=204)
    finally:
        done.set()
        thread.join(timeout=120)
    assert not thread.is_alive()
    assert failures == []
    apply_changes(testapp)
    report = checked(testapp.app)
    assert (report.count, report.failures) == (0, [])
    with sessions() as session:
        left = session.scalars(select(Post.slug).where(Post.slug.like("churn-%"))).all()
    assert len(left) == 40
