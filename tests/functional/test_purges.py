"""Purges (S-314): each applied change names exactly the documents whose bytes it changed.

A site of three pages of posts is changed in the ways content changes (an edit, a new
post, a deletion that moves every later post a page up, a draft, a setting every document
shows). Before and after each change every document is read as a crawler reads it (each
page the index lists or listed, the index, the feed, robots.txt); the purges the change
stored for the Varnish channel must name every document that changed and, for pages and
the index, no other one. The worker then sends them to a stand-in Varnish: ``PURGE /``
with the tags in ``xkey-purge``.
"""

from __future__ import annotations

import threading
from typing import Any

import pytest
from purge_mirror import FEED, ROBOTS, documents, reached
from sqlalchemy import select
from sqlalchemy.orm import Session

from sitemap_server.models import Notification
from sitemap_server.testing import SITE_URL, run_worker, wait_until

JAN = "2024-01-10T12:00:00+00:00"


@pytest.fixture
def site(app_for, search_engine) -> Any:
    """The API and the documents of an application that purges ``search_engine``."""
    app = app_for(signed_in=True, **{"sitemap_server.purge.varnish": search_engine.url})
    app.patch_json("/api/settings", {"entries_per_page": 3}, status=200)
    return app


def new_post(app: Any, n: int, **fields: Any) -> int:
    body = {
        "type": "post",
        "status": "publish",
        "title": f"Post {n}",
        "slug": f"post-{n}",
        "published_at": JAN,
        **fields,
    }
    created: int = app.post_json("/api/posts", body, status=201).json["id"]
    return created


def purged(app: Any, engine: Any, after: int) -> tuple[int, set[str]]:
    """The tags the Varnish purges stored after the notification ``after`` name, and the
    last notification's id."""
    with Session(engine) as session:
        rows = session.execute(
            select(Notification.id, Notification.payload)
            .where(Notification.channel == "varnish", Notification.id > after)
            .order_by(Notification.id)
        ).all()
    tags = {tag for _, payload in rows for tag in payload["tags"]}
    return (rows[-1].id if rows else after), tags


def test_each_change_purges_exactly_the_documents_it_changed(site, clean_database):
    ids = [new_post(site, n) for n in range(8)]
    site.post_json("/api/posts", {"type": "page", "status": "publish", "title": "About"})
    known: set[str] = set()
    before = documents(site, SITE_URL, known)
    last, _ = purged(site, clean_database, 0)
    run_worker(site)  # sent: a purge the same as one still waiting is not stored again

    def edit_title_on_page_two() -> None:
        site.patch_json(f"/api/posts/{ids[4]}", {"title": "Edited"}, status=200)

    def draft() -> None:
        new_post(site, 20, status="draft")

    def delete_the_second() -> None:
        site.delete(f"/api/posts/{ids[1]}", status=204)

    def publish_one_more() -> None:
        new_post(site, 21)

    def retitle_the_site() -> None:
        site.patch_json("/api/settings", {"title": "Another title"}, status=200)

    for change in (
        edit_title_on_page_two,
        draft,
        delete_the_second,
        publish_one_more,
        retitle_the_site,
    ):
        known |= {tag.removeprefix("doc:") for tag in before if "-sitemap" in tag}
        change()
        after = documents(site, SITE_URL, known)
        last, tags = purged(site, clean_database, last)
        every = set(before) | set(after)
        changed = {doc for doc in every if before.get(doc) != after.get(doc)}
        told = reached(tags, every)
        assert changed <= told, (change.__name__, changed - told)
        exact = {doc for doc in every if doc not in (FEED, ROBOTS)}
        assert told & exact == changed & exact, (change.__name__, tags, changed)
        if change is draft:
            assert not tags
        run_worker(site)
        before = after


def test_the_worker_sends_the_purges_to_varnish(site, search_engine):
    """``PURGE /`` with the tags, blank-separated, in ``xkey-purge``; a site's private
    documents are purged too (they changed)."""
    new_post(site, 1)
    site.get("/sitemap_index.xml")
    run_worker(site)  # the first build: every document
    new_post(site, 2)
    site.get("/sitemap_index.xml")
    run_worker(site)
    site.patch_json("/api/settings", {"private": True}, status=200)
    site.get("/sitemap_index.xml")
    run_worker(site)
    purges = search_engine.received(path="/", method="PURGE")
    assert purges, search_engine.requests
    sent = [set(request["headers"]["xkey-purge"].split()) for request in purges]
    assert sent[0] == {"sitemaps"}
    assert {"doc:post-sitemap", "index", "doc:sitemap.atom"} <= sent[1]
    assert "sitemaps" not in sent[1]
    assert sent[-1] == {"sitemaps"}
    status = site.get("/api/notifications", status=200).json
    assert status["purges"] == {"varnish": [search_engine.url], "fastly": None, "cloudflare": None}


def test_a_purge_waiting_is_not_stored_twice(site, clean_database):
    new_post(site, 1)
    site.get("/sitemap_index.xml")
    for title in ("One", "Two"):
        site.patch_json("/api/settings", {"title": title}, status=200)
        site.get("/sitemap_index.xml")
    with Session(clean_database) as session:
        waiting = session.scalars(
            select(Notification.payload).where(Notification.channel == "varnish")
        ).all()
    assert waiting == [{"tags": ["sitemaps"]}]


def varnish_purges(engine: Any) -> list[tuple[list[str], int]]:
    with Session(engine) as session:
        rows = session.execute(
            select(Notification.payload, Notification.attempts)
            .where(Notification.channel == "varnish")
            .order_by(Notification.id)
        ).all()
    return [(payload["tags"], attempts) for payload, attempts in rows]


def test_passes_faster_than_the_worker_sends_make_one_purge(site, clean_database):
    """A purge that waits untried takes the next passes' tags (while they fit in one
    request); one the worker has tried is left as it is."""
    for n in range(1, 8):
        new_post(site, n)
    site.get("/sitemap_index.xml")
    run_worker(site)
    sent = len(varnish_purges(clean_database))
    site.patch_json(f"/api/posts/{new_post(site, 8)}", {"title": "Eight"}, status=200)
    site.get("/sitemap_index.xml")  # a pass: page 3 and the index, the feed
    site.patch_json("/api/posts/1", {"title": "First"}, status=200)
    site.get("/sitemap_index.xml")  # another: page 1 as well
    purges = varnish_purges(clean_database)[sent:]
    assert len(purges) == 1, purges
    tags, attempts = purges[0]
    assert attempts == 0
    assert {"doc:post-sitemap", "doc:post-sitemap3", "index"} <= set(tags)
    assert tags == sorted(set(tags))
    run_worker(site)
    site.patch_json("/api/posts/2", {"title": "Second"}, status=200)
    site.get("/sitemap_index.xml")
    purges = varnish_purges(clean_database)[sent:]
    assert [attempts for _, attempts in purges] == [1, 0]
    assert "doc:post-sitemap" in purges[1][0]


def test_a_purge_takes_no_more_tags_than_one_request_holds(site, clean_database, monkeypatch):
    from sitemap_server.notify.purge import VarnishPurge

    monkeypatch.setattr(VarnishPurge, "tags_per_request", 3)
    for n in range(1, 8):
        new_post(site, n)
    site.get("/sitemap_index.xml")
    run_worker(site)
    sent = len(varnish_purges(clean_database))
    for post in (1, 7):  # page 1, then page 3: each pass names three tags or more
        site.patch_json(f"/api/posts/{post}", {"title": f"Changed {post}"}, status=200)
        site.get("/sitemap_index.xml")
    purges = varnish_purges(clean_database)[sent:]
    assert len(purges) >= 2 and all(len(tags) <= 3 for tags, _ in purges), purges


def test_each_batchs_purge_is_sent_before_the_next_batch_is_applied(
    site, search_engine, clean_database, monkeypatch
):
    """Under a steady stream of writes the change log may not empty for a long while:
    the worker sends what each batch made due (its purge) as soon as it is committed."""
    from sqlalchemy import func

    from sitemap_server.models import SitemapChange
    from sitemap_server.notify.worker import Worker
    from sitemap_server.sitemaps import maintenance

    new_post(site, 1)
    site.get("/sitemap_index.xml")
    run_worker(site)
    # One change a batch (and no rebuild instead, which a small site would choose).
    monkeypatch.setattr(maintenance, "APPLY_BATCH", 1)
    monkeypatch.setattr(maintenance, "_cheaper_to_rebuild", lambda session: False)
    for n in (2, 3):
        new_post(site, n)
    waiting: list[int] = []
    sending = Worker.send_due

    def send_due(worker: Worker) -> Any:
        with Session(clean_database) as session:
            waiting.append(session.scalar(select(func.count()).select_from(SitemapChange)))
        return sending(worker)

    monkeypatch.setattr(Worker, "send_due", send_due)
    search_engine.requests.clear()
    attempts = run_worker(site)
    purges = search_engine.received(path="/", method="PURGE")
    assert purges and len(attempts) >= len(purges)
    # The first was sent while changes still waited to be applied.
    assert waiting[0] > 0, waiting


def test_a_purge_another_maintainer_stored_is_sent_within_the_apply_poll(
    site, search_engine, monkeypatch
):
    """A request that finds a scheduled post due, or a command, applies the change log
    itself and stores its purge: a worker that applies nothing sends it at its next look
    (``maintainer.poll_seconds``), not at its next notification pass (an hour here)."""
    from dataclasses import replace

    from sitemap_server.app import site_of_app
    from sitemap_server.notify.worker import Worker

    new_post(site, 1)
    site.get("/sitemap_index.xml")
    run_worker(site)
    # This worker never applies a change: whatever it sends, another maintainer stored.
    monkeypatch.setattr(Worker, "maintain", lambda worker, sent=None: 0)
    app_site = site_of_app(site)
    worker = Worker(app_site, replace(app_site.notify, poll_seconds=3600), apply_poll_seconds=0.05)
    first_pass = threading.Event()
    once = worker.run_once
    monkeypatch.setattr(worker, "run_once", lambda: (once(), first_pass.set()))
    stop = threading.Event()
    thread = threading.Thread(target=worker.run, args=(stop,))
    thread.start()
    try:
        wait_until(first_pass.is_set, "the worker's first pass")
        search_engine.requests.clear()
        new_post(site, 2)
        site.get("/sitemap_index.xml")  # every request applies what waits (the tests')

        def purged_the_page() -> bool:
            return any(
                "doc:post-sitemap" in request["headers"]["xkey-purge"].split()
                for request in search_engine.received(path="/", method="PURGE")
            )

        wait_until(purged_the_page, "the worker to send the purge", seconds=30)
    finally:
        stop.set()
        thread.join()
        worker.close()
