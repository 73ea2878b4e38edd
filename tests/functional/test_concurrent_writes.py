"""Invariants under concurrency (issue 29): requests sent at the same moment from real
threads through the application, on SQLite and on PostgreSQL.

- Three re-parentings that close a cycle (a→b, b→c, c→a) never all pass: two are stored,
  the third is refused (422), and none is a 5xx.
- A deadlock between two writes is retried; on the last attempt it is a 409, never the
  503 of a database outage.
- Creates with one title (no slug) all succeed, with distinct slugs.
- ``check`` reports a parent cycle or a URL listed twice, should one ever be stored.

Where an interleaving matters, the test arranges it (a barrier where each request flushes)
rather than hoping for it; every wait is on a condition, bounded generously.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from sqlalchemy import event, select, update
from sqlalchemy.orm import Session

from sitemap_server.models import Post, Term
from sitemap_server.sitemaps.check import check
from sitemap_server.sitemaps.engine import engine_of
from sitemap_server.testing import assert_problem, client

# Bounds for waits that end as soon as their condition holds: only a machine that has
# stopped reaches them.
THREAD_TIMEOUT = 120.0
# How long a request that passed its checks waits at the flush barrier for the others to
# pass theirs: long enough for requests that are not blocked to get there on a busy
# machine; requests that are blocked behind its lock never do, and it then goes on.
CHECKS_PASSED_WAIT = 2.0
ROUNDS = 8
SIMULTANEOUS_CREATES = 24


def at_once(requests: list[Callable[[], Any]]) -> list[Any]:
    """Run each request in a thread of its own, all released together; their answers."""
    barrier = threading.Barrier(len(requests), timeout=THREAD_TIMEOUT)
    answers: list[Any] = [None] * len(requests)
    failures: list[BaseException] = []

    def run(index: int, request: Callable[[], Any]) -> None:
        try:
            barrier.wait()
            answers[index] = request()
        except BaseException as error:  # reported by the main thread
            failures.append(error)

    threads = [
        threading.Thread(target=run, args=(i, r), daemon=True) for i, r in enumerate(requests)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(THREAD_TIMEOUT)
        assert not thread.is_alive(), "a request never finished"
    assert not failures, failures
    return answers


@pytest.fixture
def at_first_flush() -> Iterator[Callable[[Callable[[Session], None]], None]]:
    """``at_first_flush(action)``: ``action(session)`` runs in each request thread (not
    the test's) when its request first flushes, once per thread: a retried request runs
    free."""
    listeners: list[Callable[..., None]] = []

    def arrange(action: Callable[[Session], None]) -> None:
        done: set[int] = set()

        def before_flush(session: Session, *_: Any) -> None:
            thread = threading.get_ident()
            if threading.current_thread() is threading.main_thread() or thread in done:
                return
            done.add(thread)
            action(session)

        event.listen(Session, "before_flush", before_flush)
        listeners.append(before_flush)

    yield arrange
    for listener in listeners:
        event.remove(Session, "before_flush", listener)


@pytest.fixture
def patient_app(app_with: Callable[..., Any]) -> Any:
    """The application, its SQLite writers waiting as long as it takes for the write lock
    (one writer at a time: the last of many simultaneous requests waits for all the
    others, which a busy machine makes slow). PostgreSQL's locks wait anyway."""
    return app_with(**{"sitemap_server.sqlite.busy_timeout_ms": str(int(THREAD_TIMEOUT * 1000))})


def clients(app: Any, token: str, count: int) -> list[Any]:
    # Made here, in the test's thread: making one forgets what the application rendered.
    return [client(app, token) for _ in range(count)]


def assert_consistent(app_session: Session) -> None:
    with app_session.begin():
        assert check(app_session).differences == []


# Hierarchies: posts of a hierarchical type, terms of a hierarchical taxonomy.
HIERARCHIES = {
    "page": ("/api/posts", {"type": "page", "status": "publish"}, "title"),
    "category": ("/api/terms", {"taxonomy": "category"}, "name"),
}


def make_three(api: Any, kind: str) -> list[str]:
    collection, body, name = HIERARCHIES[kind]
    made = [api.post_json(collection, {**body, name: n}, status=201).json for n in "abc"]
    # A post so that the categories are listed, and their URLs are in a sitemap.
    if kind == "category":
        api.post_json(
            "/api/posts",
            {"type": "post", "title": "In c", "status": "publish", "terms": [made[2]["id"]]},
            status=201,
        )
    return [f"{collection}/{m['id']}" for m in made]


def close_the_cycle(app: Any, api_token: str, paths: list[str]) -> list[Any]:
    """a→b, b→c and c→a, sent at once."""
    ids = [int(path.rsplit("/", 1)[1]) for path in paths]
    senders = clients(app, api_token, 3)
    return at_once(
        [
            lambda i=i: senders[i].patch_json(
                paths[i], {"parent": ids[(i + 1) % 3]}, expect_errors=True
            )
            for i in range(3)
        ]
    )


def parents(api: Any, paths: list[str]) -> dict[int, int | None]:
    found = (api.get(path).json for path in paths)
    return {obj["id"]: obj["parent"] for obj in found}


def assert_two_stored_and_one_refused(answers: list[Any], api: Any, paths: list[str]) -> None:
    statuses = sorted(answer.status_int for answer in answers)
    assert statuses == [200, 200, 422], [answer.text for answer in answers]
    (refused,) = (answer for answer in answers if answer.status_int == 422)
    assert_problem(refused, 422, field="parent")
    stored = parents(api, paths)
    assert sum(parent is not None for parent in stored.values()) == 2, stored
    assert cycles(stored) == [], stored


def cycles(parent_of: dict[int, int | None]) -> list[list[int]]:
    found = []
    for start in parent_of:
        path, node = [start], parent_of[start]
        while node is not None and node not in path and node in parent_of:
            path.append(node)
            node = parent_of[node]
        if node == start and start == min(path):
            found.append(path)
    return found


@pytest.mark.parametrize("kind", HIERARCHIES)
def test_three_reparentings_that_close_a_cycle_never_all_pass(
    kind, patient_app, api, api_token, at_first_flush, app_session
):
    """Each of the three checks, alone, sees no cycle: the three requests wait where they
    flush until all three have checked (or, when a lock keeps the others from checking,
    for a moment), then write. Only two may be stored; the third is a 422."""
    paths = make_three(api, kind)
    checked = threading.Barrier(3, timeout=CHECKS_PASSED_WAIT)

    def wait_for_the_others(_session: Session) -> None:
        # Broken: the others are blocked behind this one, as they should be.
        with contextlib.suppress(threading.BrokenBarrierError):
            checked.wait()

    at_first_flush(wait_for_the_others)
    answers = close_the_cycle(patient_app, api_token, paths)

    assert_two_stored_and_one_refused(answers, api, paths)
    assert_consistent(app_session)


@pytest.mark.parametrize("kind", HIERARCHIES)
def test_reparentings_sent_at_once_are_never_an_outage(
    kind, patient_app, api, api_token, app_session
):
    """The same three requests, free-running, round after round: no 5xx (a deadlock is
    not an outage), never a cycle."""
    paths = make_three(api, kind)
    for _round in range(ROUNDS):
        answers = close_the_cycle(patient_app, api_token, paths)
        assert_two_stored_and_one_refused(answers, api, paths)
        for path in paths:
            api.patch_json(path, {"parent": None}, status=200)
    assert_consistent(app_session)


# Deadlocks (serialization failures, the same SQLSTATE class: tests/unit/test_outages.py)


def deadlock_on_flush(at_first_flush: Any, model: type[Any], ids: list[int]) -> None:
    """Each of two requests, once it holds its own row, locks the other's: a deadlock,
    which PostgreSQL breaks by failing one of them (SQLSTATE 40P01)."""
    both_hold_their_rows = threading.Barrier(2, timeout=THREAD_TIMEOUT)

    def lock_the_other_row(session: Session) -> None:
        (mine,) = (obj.id for obj in session.dirty if isinstance(obj, model))
        (other,) = (i for i in ids if i != mine)
        both_hold_their_rows.wait()
        session.execute(select(model.id).where(model.id == other).with_for_update())

    at_first_flush(lock_the_other_row)


@pytest.fixture
def on_postgresql(engine: Any) -> None:
    if engine.dialect.name != "postgresql":
        pytest.skip(
            "SQLite has one writer at a time (a write takes the database's write lock "
            "before it reads: models.take_write_lock), so two writes cannot deadlock"
        )


def two_renames_that_deadlock(
    app: Any, api: Any, api_token: str, at_first_flush: Any
) -> tuple[list[Any], list[str]]:
    made = [
        api.post_json("/api/terms", {"taxonomy": "category", "name": n}, status=201).json
        for n in ("first", "second")
    ]
    paths = [f"/api/terms/{m['id']}" for m in made]
    deadlock_on_flush(at_first_flush, Term, [m["id"] for m in made])
    senders = clients(app, api_token, 2)
    answers = at_once(
        [
            lambda i=i: senders[i].patch_json(
                paths[i], {"name": f"renamed {i}"}, expect_errors=True
            )
            for i in range(2)
        ]
    )
    return answers, paths


def test_a_deadlock_is_retried(on_postgresql, wsgi_app, api, api_token, at_first_flush):
    answers, paths = two_renames_that_deadlock(wsgi_app, api, api_token, at_first_flush)

    assert [a.status_int for a in answers] == [200, 200], [a.text for a in answers]
    assert [api.get(path).json["name"] for path in paths] == ["renamed 0", "renamed 1"]


def test_a_deadlock_on_the_last_attempt_is_a_409(
    on_postgresql, app_with, api, api_token, at_first_flush
):
    once = app_with(**{"sitemap_server.api.attempts": "1"})
    answers, paths = two_renames_that_deadlock(once, api, api_token, at_first_flush)

    assert sorted(a.status_int for a in answers) == [200, 409], [a.text for a in answers]
    (lost,) = (a for a in answers if a.status_int == 409)
    detail = assert_problem(lost, 409)["detail"]
    assert "at the same time" in detail
    assert "Retry-After" not in lost.headers
    # Nothing of the lost request was stored.
    names = [api.get(path).json["name"] for path in paths]
    assert sum(name.startswith("renamed") for name in names) == 1, names


# Slugs made from one title at once -----------------------------------------------------


@pytest.mark.parametrize(
    ("collection", "body"),
    [
        ("/api/posts", {"type": "post", "title": "Hello world", "status": "publish"}),
        ("/api/terms", {"taxonomy": "category", "name": "Hello world"}),
    ],
)
def test_creates_with_one_title_at_once_all_get_a_slug_of_their_own(
    collection, body, patient_app, api_token, app_session
):
    senders = clients(patient_app, api_token, SIMULTANEOUS_CREATES)
    answers = at_once(
        [lambda s=s: s.post_json(collection, body, expect_errors=True) for s in senders]
    )

    assert [a.status_int for a in answers] == [201] * SIMULTANEOUS_CREATES, [
        a.text for a in answers if a.status_int != 201
    ]
    slugs = sorted((a.json["slug"] for a in answers), key=lambda s: (len(s), s))
    expected = ["hello-world"] + [f"hello-world-{n}" for n in range(2, SIMULTANEOUS_CREATES + 1)]
    assert slugs == expected
    assert_consistent(app_session)


# What check finds, should one ever be stored -------------------------------------------


def problems(app_session: Session) -> list[tuple[str, str, str]]:
    with app_session.begin():
        report = check(app_session)
    return [(d.provider, d.field, d.where) for d in report.differences]


@pytest.mark.parametrize("kind", HIERARCHIES)
def test_check_reports_a_parent_cycle(kind, api, app_session, dbsession, cli):
    paths = make_three(api, kind)
    ids = [int(path.rsplit("/", 1)[1]) for path in paths]
    model = Post if kind == "page" else Term
    # As the races above used to leave it: a→b→c→a.
    for child, parent in zip(ids, ids[1:] + ids[:1], strict=True):
        dbsession.execute(update(model).where(model.id == child).values(parent_id=parent))
    dbsession.commit()

    found = [p for p in problems(app_session) if p[1] == "parent cycle"]
    what = "post" if kind == "page" else "term"
    assert found == [(kind, "parent cycle", f"{what}s {ids[0]} → {ids[1]} → {ids[2]} → {ids[0]}")]
    status, out, _err = cli("check")
    assert status == 1
    assert "parent cycle" in out
    # A rebuild cannot repair the content: --repair says so rather than "repaired".
    status, out, err = cli("check", "--repair")
    assert "problem(s) of the content itself (a parent cycle" in err
    assert cli("check")[0] == 1


def test_check_reports_a_url_listed_twice(api, app_session, dbsession, cli):
    made = [
        api.post_json("/api/posts", {"type": t, "title": t, "status": "publish"}, status=201).json
        for t in ("post", "page")
    ]
    for post in made:
        dbsession.execute(update(Post).where(Post.id == post["id"]).values(path="/same/"))
    dbsession.commit()
    with app_session.begin():
        engine_of(app_session).rebuild(app_session)

    found = [p for p in problems(app_session) if p[1] == "duplicate URL"]
    assert found == [("page", "duplicate URL", "/same/")]
    status, out, _err = cli("check")
    assert status == 1
    assert "duplicate URL" in out
