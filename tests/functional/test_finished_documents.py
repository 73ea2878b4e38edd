"""Finished documents (``sitemaps/finished.py``): the maintainer stores the bytes of each
document a change made, and only those; a process that has not rendered that version
serves the stored bytes, which are the bytes it would have rendered.
"""

from __future__ import annotations

import gzip
import re
import threading
from typing import Any

import pytest
from pyramid.request import Request
from sqlalchemy import delete, select, update
from sqlalchemy.orm import Session

from sitemap_server.app import site_of_app
from sitemap_server.models import FinishedDocument
from sitemap_server.sitemaps.reader import VERSIONS
from sitemap_server.testing import apply_changes, forget_rendered
from sitemap_server.testing.servers import wait_until

JAN = "2024-01-10T12:00:00+00:00"
# On whatever the database (by default only on PostgreSQL).
ON = {"sitemap_server.finished_documents": "true"}


@pytest.fixture
def site(app_for) -> Any:
    """The API of a site of three pages of posts (three entries a page)."""
    app = app_for(signed_in=True, **ON)
    app.patch_json("/api/settings", {"entries_per_page": 3}, status=200)
    for n in range(1, 10):
        new_post(app, n)
    apply_changes(app)
    return app


def new_post(app: Any, n: int, **fields: Any) -> int:
    body = {"type": "post", "status": "publish", "title": f"Post {n}", "slug": f"post-{n}"}
    created: int = app.post_json(
        "/api/posts", {**body, "published_at": JAN, **fields}, status=201
    ).json["id"]
    return created


def stored(engine: Any) -> dict[str, bytes]:
    with Session(engine) as session:
        rows = session.execute(select(FinishedDocument.name, FinishedDocument.gzipped)).all()
    return {name: gzip.decompress(body) for name, body in rows}


def served(app: Any, path: str) -> bytes:
    """``path`` as a process that has rendered and kept nothing serves it."""
    forget_rendered(app)
    return served_now(app, path)


def drop_all(engine: Any) -> None:
    with Session(engine) as session:
        session.execute(FinishedDocument.__table__.delete())
        session.commit()


def served_as_stored(app: Any, engine: Any, found: dict[str, bytes]) -> None:
    """Each of ``found`` is served as stored, and rendered with no row the same."""
    for name, body in found.items():
        assert served(app, f"/{name}.xml") == body
    drop_all(engine)  # rendered here, not read: the same bytes
    for name, body in found.items():
        assert served(app, f"/{name}.xml") == body


def test_a_post_edit_stores_the_pages_that_list_it_and_the_index(site, clean_database):
    drop_all(clean_database)
    site.patch_json("/api/posts/5", {"title": "Five"}, status=200)  # on page 2
    apply_changes(site)
    found = stored(clean_database)
    # The page that lists it, the first (the home page's date is the newest post's) and
    # the index (their dates moved): not pages 3 and 4. (The news plugin's sitemap, when
    # it is loaded, lists the post too.)
    posts = {name for name in found if not name.startswith("news-")}
    assert posts == {"post-sitemap", "post-sitemap2", "sitemap_index"}, set(found)
    served_as_stored(site, clean_database, found)


def test_a_process_serves_the_stored_bytes(site, clean_database):
    """Proved by changing them behind its back: what it serves is the row, not a
    rendering (which would not have the comment)."""
    site.patch_json("/api/posts/1", {"title": "One"}, status=200)
    apply_changes(site)
    original = stored(clean_database)["post-sitemap"]
    marked = original + b"<!-- from finished_documents -->"
    with Session(clean_database) as session:
        session.execute(
            update(FinishedDocument)
            .where(FinishedDocument.name == "post-sitemap")
            .values(gzipped=gzip.compress(marked), size=len(marked))
        )
        session.commit()
    assert served(site, "/post-sitemap.xml") == marked
    forget_rendered(site)
    # Plain to a client that takes no gzip, and as the gzip file.
    assert site.get("/post-sitemap.xml", status=200).body == marked
    forget_rendered(site)
    assert gzip.decompress(site.get("/post-sitemap.xml.gz", status=200).body) == marked


def mark(engine: Any, name: str, **values: Any) -> bytes:
    """Change the stored bytes of ``name`` (and any other column) behind the processes'
    backs: a comment no rendering has. Returns the marked bytes."""
    marked = stored(engine)[name] + b"<!-- from finished_documents -->"
    with Session(engine) as session:
        session.execute(
            update(FinishedDocument)
            .where(FinishedDocument.name == name)
            .values(gzipped=gzip.compress(marked), size=len(marked), **values)
        )
        session.commit()
    return marked


def test_a_page_an_edit_did_not_change_is_still_served_from_its_row(site, clean_database):
    """An edit on page 2 makes a new version of the sitemap; page 3's row, stored at the
    version before, is what page 3 shows at the new one too."""
    site.patch_json("/api/posts/8", {"title": "Eight"}, status=200)  # on page 3
    apply_changes(site)
    marked = mark(clean_database, "post-sitemap3")
    before = site.get("/post-sitemap3.xml", status=200).headers["ETag"]
    site.patch_json("/api/posts/5", {"slug": "five"}, status=200)  # on page 2
    apply_changes(site)
    assert "post-sitemap3" in stored(clean_database)
    assert served(site, "/post-sitemap3.xml") == marked
    assert site.get("/post-sitemap3.xml", status=200).headers["ETag"] != before
    # The edited page's row was replaced: what it serves is new.
    assert b"/five/" in stored(clean_database)["post-sitemap2"]
    assert b"/five/" in served(site, "/post-sitemap2.xml")


def test_an_entry_changed_in_place_is_replaced_in_the_stored_page(site, clean_database):
    """The maintainer edits the row it stored before (proved by a mark no rendering has,
    which stays) instead of rendering the page again; the edit is what a rendering
    gives."""
    site.patch_json("/api/posts/5", {"slug": "five"}, status=200)  # on page 2
    apply_changes(site)
    marked = mark(clean_database, "post-sitemap2")
    assert b"/five/" in marked
    site.patch_json("/api/posts/5", {"slug": "five-again"}, status=200)
    apply_changes(site)
    edited = stored(clean_database)["post-sitemap2"]
    assert edited.endswith(b"<!-- from finished_documents -->")
    assert b"/five-again/" in edited and b"/five/" not in edited
    unmarked = edited.removesuffix(b"<!-- from finished_documents -->")
    drop_all(clean_database)
    assert served(site, "/post-sitemap2.xml") == unmarked


def test_a_recut_renders_the_pages_again(site, clean_database):
    site.patch_json("/api/posts/5", {"slug": "five"}, status=200)
    apply_changes(site)
    mark(clean_database, "post-sitemap2")
    site.delete("/api/posts/4", status=204)  # on page 2: every page from it is recut
    apply_changes(site)
    body = stored(clean_database)["post-sitemap2"]
    assert b"finished_documents" not in body and b"/post-4/" not in body
    assert served(site, "/post-sitemap2.xml") == body


def test_a_row_newer_than_the_version_a_request_read_is_not_served(site, clean_database):
    site.patch_json("/api/posts/8", {"title": "Eight"}, status=200)
    apply_changes(site)
    marked = mark(clean_database, "post-sitemap3", versions={"post": 10**9})
    body = served(site, "/post-sitemap3.xml")
    assert body != marked and b"post-8/" in body
    # Nor one that shows other sitemaps than the document does.
    mark(clean_database, "post-sitemap3", versions={"page": 0})
    assert served(site, "/post-sitemap3.xml") != marked


def test_a_process_that_renders_otherwise_does_not_take_them(site, app_for, clean_database):
    site.patch_json("/api/posts/1", {"title": "One"}, status=200)
    apply_changes(site)
    assert b"main-sitemap.xsl" in stored(clean_database)["post-sitemap"]
    other = app_for(**ON, **{"sitemap_server.xsl_instruction": "false"})
    body = other.get("/post-sitemap.xml", status=200).body
    assert b"main-sitemap.xsl" not in body and b"post-1/" in body


def test_a_change_of_every_document_drops_them(site, clean_database):
    site.patch_json("/api/posts/1", {"title": "One"}, status=200)
    apply_changes(site)
    assert stored(clean_database)
    site.patch_json("/api/settings", {"title": "Another name"}, status=200)
    apply_changes(site)
    assert stored(clean_database) == {}
    assert b"Another name" in served(site, "/post-sitemap.xml")


def test_a_private_site_keeps_none(site, clean_database):
    site.patch_json("/api/settings", {"private": True}, status=200)
    apply_changes(site)
    site.patch_json("/api/posts/1", {"title": "One"}, status=200)
    apply_changes(site)
    assert stored(clean_database) == {}


def test_check_renders_them_again_and_repair_drops_one_that_differs(site, clean_database):
    from sitemap_server.app import site_of_app
    from sitemap_server.sitemaps.check import FINISHED, check

    site.patch_json("/api/posts/1", {"title": "One"}, status=200)
    apply_changes(site)
    sessions = site_of_app(site).sessions
    with sessions() as session, session.begin():
        assert check(session).count == 0
    marked = stored(clean_database)["post-sitemap"] + b"<!-- not what it renders -->"
    with Session(clean_database) as session:
        session.execute(
            update(FinishedDocument)
            .where(FinishedDocument.name == "post-sitemap")
            .values(gzipped=gzip.compress(marked))
        )
        session.commit()
    with sessions() as session, session.begin():
        report = check(session, repair=True)
    assert [(d.provider, d.where) for d in report.differences] == [(FINISHED, "post-sitemap")]
    # Dropped (and, as the repair rebuilt every sitemap, every other one with it).
    assert "post-sitemap" not in stored(clean_database)
    assert served(site, "/post-sitemap.xml") != marked


def test_off_nothing_is_stored_or_read(app_for, clean_database):
    app = app_for(signed_in=True, **{"sitemap_server.finished_documents": "false"})
    new_post(app, 1)
    apply_changes(app)
    assert stored(clean_database) == {}


def test_a_maintainer_that_does_not_store_them_drops_those_another_stored(
    site, app_for, clean_database
):
    """Two ini files that disagree: rows the one stored must not outlive a change the
    other applied."""
    site.patch_json("/api/posts/8", {"title": "Eight"}, status=200)
    apply_changes(site)
    assert "post-sitemap3" in stored(clean_database)
    other = app_for(signed_in=True, **{"sitemap_server.finished_documents": "false"})
    other.patch_json("/api/posts/8", {"slug": "eight"}, status=200)
    apply_changes(other)
    assert stored(clean_database) == {}
    assert b"/eight/" in served(site, "/post-sitemap3.xml")


def test_auto_is_on_for_postgresql_only(app_for, clean_database):
    from sitemap_server.app import site_of_app

    app = app_for()
    postgresql = clean_database.dialect.name == "postgresql"
    assert site_of_app(app).finishes_documents is postgresql


def documents_of(app: Any) -> set[str]:
    """Every document of the site's index, by name."""
    index = app.get("/sitemap_index.xml", status=200).text
    return {"sitemap_index"} | set(re.findall(r"/([a-z_-]+-sitemap\d*)\.xml</loc>", index))


def test_the_documents_no_change_stored_are_stored_a_moment_at_a_time(site, clean_database):
    """A sitemap rebuilt whole, a change of every document or a site built and never
    changed has no rows: the engine stores them (the worker, when it has nothing to
    apply), and then has nothing left to store."""
    drop_all(clean_database)
    engine = site_of_app(site).engine
    while engine.finish():
        pass
    found = stored(clean_database)
    assert set(found) == documents_of(site) and len(found) > 4
    assert engine.finish() == 0
    served_as_stored(site, clean_database, found)


def test_the_worker_stores_them_when_it_has_nothing_to_apply(site, clean_database):
    from sitemap_server.notify.worker import Worker

    worker = Worker(site_of_app(site))
    site.patch_json("/api/settings", {"title": "Another name"}, status=200)
    assert worker.maintain() > 0
    assert stored(clean_database) == {}  # a change of every document stores none
    while worker.finish():
        pass
    assert set(stored(clean_database)) == documents_of(site)
    assert b"Another name" in stored(clean_database)["post-sitemap"]
    # Until a version changes, it does not look again (a row gone behind its back,
    # which no maintainer does, stays gone).
    with Session(clean_database) as session:
        session.execute(delete(FinishedDocument).where(FinishedDocument.name == "post-sitemap3"))
        session.commit()
    assert worker.finish() == 0
    assert "post-sitemap3" not in stored(clean_database)
    site.patch_json("/api/posts/1", {"slug": "one"}, status=200)
    assert worker.maintain() > 0
    assert worker.finish() == 1
    assert "post-sitemap3" in stored(clean_database)
    worker.close()


def test_a_running_worker_stores_them(site, clean_database):
    from sitemap_server.notify.worker import Worker

    drop_all(clean_database)
    worker = Worker(site_of_app(site), apply_poll_seconds=0.01)
    stop = threading.Event()
    running = threading.Thread(target=worker.run, args=(stop,))
    running.start()
    try:
        wanted = documents_of(site)
        wait_until(lambda: set(stored(clean_database)) == wanted, "every document stored")
    finally:
        stop.set()
        running.join()
        worker.close()


def test_a_private_site_stores_none_a_moment_at_a_time_either(site, clean_database):
    site.patch_json("/api/settings", {"private": True}, status=200)
    apply_changes(site)
    assert site_of_app(site).engine.finish() == 0
    assert stored(clean_database) == {}


# What a process keeps (finished.Recent) ---------------------------------------------------


def look(app: Any) -> None:
    """What a process's versions watch does after each change it hears of (on PostgreSQL,
    in a thread; here, now): read the versions, then the rows stored since it last did."""
    site = site_of_app(app)
    with site.reader.autocommit.connect() as conn:
        site.recent_documents.read(conn, conn.execute(VERSIONS).all())


def served_now(app: Any, path: str) -> bytes:
    """``path`` as the process serves it with nothing rendered, but keeping what its watch
    read."""
    site_of_app(app).render_cache.clear()
    # What the application sends (WebTest would decompress it).
    response = Request.blank(path, headers={"Accept-Encoding": "gzip"}).get_response(app.app)
    assert (response.status_int, response.content_encoding) == (200, "gzip")
    return gzip.decompress(response.body)


def test_a_process_serves_the_rows_its_watch_read_without_reading_them_again(site, clean_database):
    """Proved by changing the row behind its back after the look: it serves what it read
    then, with no query, and the database's row once it forgets."""
    look(site)
    site.patch_json("/api/posts/1", {"slug": "first"}, status=200)
    apply_changes(site)
    look(site)
    kept = stored(clean_database)["post-sitemap"]
    assert b"/first/" in kept
    marked = mark(clean_database, "post-sitemap")
    assert served_now(site, "/post-sitemap.xml") == kept
    site_of_app(site).recent_documents.forget()
    assert served_now(site, "/post-sitemap.xml") == marked


def test_a_request_that_read_newer_versions_than_the_look_reads_the_database(site, clean_database):
    look(site)
    site.patch_json("/api/posts/1", {"slug": "first"}, status=200)
    apply_changes(site)
    look(site)
    site.patch_json("/api/posts/2", {"slug": "second"}, status=200)  # the same page
    apply_changes(site)
    body = served_now(site, "/post-sitemap.xml")
    assert b"/first/" in body and b"/second/" in body
    assert body == stored(clean_database)["post-sitemap"]


def test_a_write_that_drops_rows_makes_the_processes_forget_what_they_kept(
    site, app_for, clean_database
):
    """A maintainer that does not store them drops every row: a row kept from before
    would show the page as it was."""
    look(site)
    site.patch_json("/api/posts/8", {"title": "Eight"}, status=200)
    apply_changes(site)
    look(site)
    other = app_for(signed_in=True, **{"sitemap_server.finished_documents": "false"})
    other.patch_json("/api/posts/8", {"slug": "eight"}, status=200)
    apply_changes(other)
    look(site)
    assert b"/eight/" in served_now(site, "/post-sitemap3.xml")


def test_a_row_stored_again_under_another_digest_makes_them_forget_too(
    site, app_for, clean_database
):
    """A maintainer with other output settings replaces the page's row with one of its
    own digest: the row this process kept under its digest is gone from the database."""
    look(site)
    site.patch_json("/api/posts/8", {"title": "Eight"}, status=200)
    apply_changes(site)
    look(site)
    other = app_for(signed_in=True, **ON, **{"sitemap_server.xsl_instruction": "false"})
    other.patch_json("/api/posts/8", {"slug": "eight"}, status=200)
    apply_changes(other)
    look(site)
    body = served_now(site, "/post-sitemap3.xml")
    assert b"/eight/" in body and b"main-sitemap.xsl" in body


def test_the_postgresql_watch_reads_the_rows_a_change_stored(app_for, clean_database):
    """On PostgreSQL the versions watch's thread reads the rows after each change it hears
    of (when answers may be late: max_staleness above 0); SQLite's watch reads none."""
    app = app_for(signed_in=True, **ON, **{"sitemap_server.max_staleness": "60"})
    new_post(app, 1)
    apply_changes(app)
    site = site_of_app(app)
    recent = site.recent_documents
    assert app.get("/post-sitemap.xml", status=200)
    if clean_database.dialect.name == "sqlite":
        assert recent.as_of is None
        return
    wait_until(lambda: recent.as_of is not None, "the watch's first look")
    app.patch_json("/api/posts/1", {"slug": "first"}, status=200)
    apply_changes(app)
    kept = stored(clean_database)["post-sitemap"]
    assert b"/first/" in kept
    wait_until(
        lambda: any(gzip.decompress(k.gzipped) == kept for k in recent.rows.items.values()),
        "the watch to read the row the change stored",
    )
    mark(clean_database, "post-sitemap")
    assert served_now(app, "/post-sitemap.xml") == kept
