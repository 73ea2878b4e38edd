"""Two admin requests on the same object at the same time (issue 13).

A PATCH that loaded a post just before another request deleted it used to flush an UPDATE
of a row that was gone: SQLAlchemy's ``StaleDataError``, a 500. Whatever the order in which
two such requests reach the database, each answers 2xx, 404 or 409, never a 500, and the
stored sitemaps still equal a rebuild.

The race is made deterministic: while the first request flushes its change (a
``before_flush`` listener), the second request is sent from another thread, and the first
waits for it to finish, or, when the first holds a lock the second needs, for a moment.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from sqlalchemy import event
from sqlalchemy.orm import Session

from sitemap_server.sitemaps.check import check
from sitemap_server.testing import client

# Long enough for a request that is not blocked to finish on a busy machine; a request
# blocked behind the first one's lock is still waiting after it.
SECOND_REQUEST_WAIT = 1.0


@pytest.fixture
def during_flush() -> Iterator[Callable[[Callable[[], Any]], list[Any]]]:
    """``during_flush(second)``: ``second`` runs in a thread while the next request flushes;
    its answer lands in the returned list once it has finished."""
    listeners: list[Callable[..., None]] = []

    def arrange(second: Callable[[], Any]) -> list[Any]:
        answers: list[Any] = []
        fired = threading.Event()

        def before_flush(session: Session, *_: Any) -> None:
            if fired.is_set() or threading.current_thread() is not threading.main_thread():
                return
            fired.set()
            thread = threading.Thread(target=lambda: answers.append(second()), daemon=True)
            thread.start()
            thread.join(SECOND_REQUEST_WAIT)
            threads.append(thread)

        threads: list[threading.Thread] = []
        event.listen(Session, "before_flush", before_flush)
        listeners.append(before_flush)
        arrange.threads = threads  # type: ignore[attr-defined]
        return answers

    yield arrange
    for listener in listeners:
        event.remove(Session, "before_flush", listener)


def finished(during_flush: Any) -> None:
    for thread in during_flush.threads:
        thread.join(30)
        assert not thread.is_alive(), "the second request never finished"


def assert_consistent(app_session: Session) -> None:
    with app_session.begin():
        assert check(app_session).differences == []


OBJECTS = {
    "post": ("/api/posts", {"type": "post", "title": "Racing"}, {"title": "Renamed"}),
    "page": ("/api/posts", {"type": "page", "title": "Racing"}, {"title": "Renamed"}),
    "category": (
        "/api/terms",
        {"taxonomy": "category", "name": "Racing"},
        {"name": "Renamed", "noindex": True},
    ),
    "author": ("/api/authors", {"slug": "racer", "name": "Racer"}, {"noindex": True}),
}


def make(api: Any, kind: str) -> str:
    collection, body, _ = OBJECTS[kind]
    made = api.post_json(collection, body, status=201).json
    if kind in ("post", "page"):
        # Listed, so that the delete has sitemaps to change.
        api.patch_json(f"/api/posts/{made['id']}", {"status": "publish"}, status=200)
    return f"{collection}/{made['id']}"


@pytest.mark.parametrize("kind", OBJECTS)
def test_a_delete_during_a_patch(
    kind, wsgi_app, api, api_token, during_flush, app_session, testapp
):
    path = make(api, kind)
    other = client(wsgi_app, api_token)
    answers = during_flush(lambda: other.delete(path, expect_errors=True))

    patched = api.patch_json(path, OBJECTS[kind][2], expect_errors=True)
    finished(during_flush)

    (deleted,) = answers
    assert deleted.status_int == 204, deleted.text
    # Either the PATCH went first (the delete waited for its lock) or it found the object
    # gone; never a server error, never a traceback.
    assert patched.status_int in (200, 404, 409), patched.text
    assert "Traceback" not in patched.text
    if patched.status_int != 200:
        assert patched.content_type == "application/problem+json"
    api.get(path, status=404)
    assert_consistent(app_session)


@pytest.mark.parametrize("kind", OBJECTS)
def test_a_patch_during_a_delete(kind, wsgi_app, api, api_token, during_flush, app_session):
    path = make(api, kind)
    other = client(wsgi_app, api_token)
    answers = during_flush(lambda: other.patch_json(path, OBJECTS[kind][2], expect_errors=True))

    api.delete(path, status=204)
    finished(during_flush)

    (patched,) = answers
    assert patched.status_int in (200, 404, 409), patched.text
    api.get(path, status=404)
    assert_consistent(app_session)


@pytest.mark.parametrize("kind", OBJECTS)
def test_two_deletes(kind, wsgi_app, api, api_token, during_flush, app_session):
    path = make(api, kind)
    other = client(wsgi_app, api_token)
    answers = during_flush(lambda: other.delete(path, expect_errors=True))

    first = api.delete(path, expect_errors=True)
    finished(during_flush)

    statuses = sorted([first.status_int, answers[0].status_int])
    # One of them deleted it; the other found it gone (or already being deleted).
    assert statuses in ([204, 404], [204, 409]), (first.text, answers[0].text)
    assert_consistent(app_session)


def test_a_write_that_lost_a_race_it_did_not_lock_against_is_a_409(
    wsgi_app, api, api_token, during_flush, app_session, monkeypatch
):
    """Without the lock (as in a plugin's endpoint that reads without it), the PATCH finds
    the row gone when it writes: a 409 that says what happened, and nothing changed."""
    from sitemap_server.services import posts

    unlocked = posts.get_post
    monkeypatch.setattr(posts, "get_post", lambda session, post_id, **_: unlocked(session, post_id))
    path = make(api, "post")
    other = client(wsgi_app, api_token)
    answers = during_flush(lambda: other.delete(path, expect_errors=True))

    patched = api.patch_json(path, {"title": "Renamed"}, expect_errors=True)
    finished(during_flush)

    assert answers[0].status_int == 204
    assert patched.status_int == 409, patched.text
    assert patched.content_type == "application/problem+json"
    assert "another request at the same time" in patched.json["detail"]
    api.get(path, status=404)
    assert_consistent(app_session)


@pytest.mark.parametrize(
    ("collection", "body", "slug"),
    [
        ("/api/posts", {"type": "post", "title": "Hello world", "status": "publish"}, "slug"),
        ("/api/terms", {"taxonomy": "category", "name": "Hello world"}, "slug"),
    ],
)
def test_two_creates_with_the_same_title_at_once_get_the_next_free_slug(
    collection, body, slug, wsgi_app, api, api_token, during_flush, app_session
):
    """Both requests see "hello-world" free; the one that stores it second takes the next
    free slug (issue 14), as it would have had they come one after the other."""
    other = client(wsgi_app, api_token)
    answers = during_flush(lambda: other.post_json(collection, body, expect_errors=True))

    first = api.post_json(collection, body, expect_errors=True)
    finished(during_flush)

    assert first.status_int == 201, first.text
    assert answers[0].status_int == 201, answers[0].text
    assert sorted([first.json[slug], answers[0].json[slug]]) == ["hello-world", "hello-world-2"]
    assert_consistent(app_session)


def one_of_two_creates_lost(
    wsgi_app: Any, api: Any, api_token: str, during_flush: Any, first_body: Any, second_body: Any
) -> Any:
    """``second_body`` created while ``first_body``'s create flushes: one is stored (201),
    the other is refused (409, returned)."""
    other = client(wsgi_app, api_token)
    answers = during_flush(lambda: other.post_json("/api/posts", second_body, expect_errors=True))

    first = api.post_json("/api/posts", first_body, expect_errors=True)
    finished(during_flush)

    statuses = sorted([first.status_int, answers[0].status_int])
    assert statuses == [201, 409], (first.text, answers[0].text)
    return first if first.status_int == 409 else answers[0]


def test_a_create_that_loses_a_race_for_an_explicit_slug_is_a_409_in_our_words(
    wsgi_app, api, api_token, during_flush, app_session
):
    """A slug the client chose is not changed behind its back: 409, without the
    database's text (constraint names, DETAIL lines)."""
    body = {"type": "post", "title": "Mine", "slug": "mine"}
    lost = one_of_two_creates_lost(wsgi_app, api, api_token, during_flush, body, body)
    assert lost.content_type == "application/problem+json"
    detail = lost.json["detail"]
    assert "another request made at the same time" in detail or "already taken" in detail
    for database_text in ("uq_", "UNIQUE", "DETAIL", "constraint", "posts.slug"):
        assert database_text not in lost.text
    assert_consistent(app_session)


@pytest.mark.parametrize(
    ("first_body", "second_body"),
    [
        # Both choose one explicit path.
        (
            {"type": "post", "title": "A", "path": "/same/"},
            {"type": "page", "title": "B", "path": "/same/"},
        ),
        # A page's URL from its slug, and a post's explicit path.
        ({"type": "page", "title": "Place"}, {"type": "post", "title": "C", "path": "/place/"}),
    ],
)
def test_two_creates_of_one_url_at_once_store_one(
    first_body, second_body, wsgi_app, api, api_token, during_flush, app_session
):
    """Each checks the URL free before the other stored it: the primary key of
    ``object_urls`` lets one commit, the other is a 409 (issue 30), on both databases."""
    lost = one_of_two_creates_lost(wsgi_app, api, api_token, during_flush, first_body, second_body)
    for database_text in ("pk_", "UNIQUE", "DETAIL", "constraint", "object_urls"):
        assert database_text not in lost.text
    assert_consistent(app_session)
