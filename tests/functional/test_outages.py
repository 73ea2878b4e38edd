"""The database down or locked: 503 with Retry-After, never a 500, and recovery (issue 14).

The real thing in each case: an application whose database server does not answer (a
port on 127.0.0.1 where nothing listens); a busy one (SQLite's write lock held by another
connection, a PostgreSQL pool with every connection taken). ``tests/deploy/test_outage.py``
stops a real PostgreSQL under a real server.
"""

import sqlite3

import pytest
from sqlalchemy import func, select

from sitemap_server.app import site_of_app
from sitemap_server.models import Post
from sitemap_server.testing import X_ROBOTS_TAG, client, free_port

PROBLEM_JSON = "application/problem+json"
SITEMAP_PATHS = ["/sitemap_index.xml", "/post-sitemap.xml", "/sitemaps/", "/robots.txt"]


def assert_unavailable(response):
    assert response.status_int == 503, response.text
    assert response.headers["Retry-After"] == "5"
    assert b"Traceback" not in response.body
    if response.request.path.startswith("/api/"):
        assert response.content_type == PROBLEM_JSON
        assert response.json["status"] == 503
        assert "retry" in response.json["detail"]
    else:
        assert response.content_type == "text/plain"
        assert response.headers["X-Robots-Tag"] == X_ROBOTS_TAG
        assert response.text.startswith("the database is unavailable")


@pytest.fixture
def database_down(app_with, api_token):
    """The application with its database on a port where nothing listens."""
    url = f"postgresql+psycopg://nobody@127.0.0.1:{free_port()}/gone?connect_timeout=2"
    return client(app_with(**{"sqlalchemy.url": url}), api_token)


@pytest.mark.parametrize("path", SITEMAP_PATHS)
def test_sitemaps_answer_503_while_the_database_is_down(database_down, path):
    assert_unavailable(database_down.get(path, expect_errors=True))


@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        ("get", "/api/posts", None),
        ("post", "/api/posts", {"type": "post", "title": "Hello"}),
        ("patch", "/api/settings", {"private": True}),
        ("get", "/api/explain?url=/", None),
    ],
)
def test_the_api_answers_503_while_the_database_is_down(database_down, method, path, body):
    if body is None:
        response = getattr(database_down, method)(path, expect_errors=True)
    else:
        response = getattr(database_down, f"{method}_json")(path, body, expect_errors=True)
    assert_unavailable(response)


def test_a_busy_database_is_a_503_then_the_same_write_works(
    app_with, api_token, app_session, clean_database
):
    """Busy: on SQLite another connection holds the write lock past the busy timeout
    (readers are still served: WAL); on PostgreSQL every connection of the pool is taken
    past its timeout. Either way a 503 that changes nothing, then the write works."""
    post = {"type": "post", "title": "Hello", "status": "publish"}
    sqlite = clean_database.dialect.name == "sqlite"
    settings = (
        {"sitemap_server.sqlite.busy_timeout_ms": "100"}
        if sqlite
        else {"sqlalchemy.pool_size": "2", "sqlalchemy.max_overflow": "0"}
        | {"sqlalchemy.pool_timeout": "1"}
    )
    wsgi = app_with(**settings)
    app = client(wsgi, api_token)
    app.get("/sitemap_index.xml")  # built once: reading it then needs no write
    if sqlite:
        holder = sqlite3.connect(clean_database.url.database, isolation_level=None)
        holder.execute("BEGIN IMMEDIATE")  # another process holds the write lock
        holders = [holder]
    else:  # every connection of the pool
        holders = [site_of_app(wsgi).database.connect() for _ in range(2)]
    try:
        assert_unavailable(app.post_json("/api/posts", post, expect_errors=True))
        if sqlite:
            assert app.get("/sitemap_index.xml").status_int == 200
        else:
            assert_unavailable(app.get("/sitemap_index.xml", expect_errors=True))
    finally:
        if sqlite:
            holder.execute("ROLLBACK")
        for held in holders:
            held.close()
    with app_session.begin():
        assert app_session.scalar(select(func.count()).select_from(Post)) == 0

    assert app.post_json("/api/posts", post).status_int == 201


def test_a_read_with_changes_waiting_is_served_while_writes_cannot_be(
    app_with, api_token, clean_database, caplog
):
    """SQLite's write lock held elsewhere (or its disk full): a read that finds changes
    waiting cannot apply them, and answers with what is stored (200, one log line)
    instead of 503; it shows them once they can be applied (issue 29, case 13)."""
    if clean_database.dialect.name != "sqlite":
        pytest.skip("PostgreSQL has no database-wide write lock")
    app = client(app_with(**{"sitemap_server.sqlite.busy_timeout_ms": "100"}), api_token)
    app.get("/sitemap_index.xml", status=200)
    before = app.get("/post-sitemap.xml", status=200).body
    app.post_json("/api/posts", {"type": "post", "title": "Waiting", "status": "publish"})
    holder = sqlite3.connect(clean_database.url.database, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")  # another process holds the write lock
    try:
        for path in SITEMAP_PATHS:
            assert app.get(path).status_int == 200
        assert app.get("/post-sitemap.xml").body == before
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert "answering with what is stored" in caplog.text
    assert "Traceback" not in caplog.text
    assert b"/waiting/" in app.get("/post-sitemap.xml", status=200).body
