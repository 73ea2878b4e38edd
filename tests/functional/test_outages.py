"""The database down or locked: 503 with Retry-After, never a 500, and recovery (issue 14).

The real thing in both cases: an application whose database server does not answer (a
port on 127.0.0.1 where nothing listens), and on SQLite a second connection holding the
write lock. ``tests/deploy/test_outage.py`` stops a real PostgreSQL under a real server.
"""

import sqlite3

import pytest
from sqlalchemy import func, select

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


def test_a_write_waiting_for_a_locked_sqlite_database_is_a_503_then_works(
    app_with, api_token, app_session, clean_database
):
    if clean_database.dialect.name != "sqlite":
        pytest.skip("SQLite's database lock; PostgreSQL locks rows (test_api_races.py)")
    app = client(app_with(**{"sitemap_server.sqlite.busy_timeout_ms": "100"}), api_token)
    post = {"type": "post", "title": "Hello", "status": "publish"}
    app.get("/sitemap_index.xml")  # built once: reading it then needs no write
    other = sqlite3.connect(clean_database.url.database, isolation_level=None)
    try:
        other.execute("BEGIN IMMEDIATE")  # another process holds the write lock
        assert_unavailable(app.post_json("/api/posts", post, expect_errors=True))
        # Readers are not held up (WAL): crawlers are served meanwhile.
        assert app.get("/sitemap_index.xml").status_int == 200
    finally:
        other.execute("ROLLBACK")
        other.close()
    with app_session.begin():
        assert app_session.scalar(select(func.count()).select_from(Post)) == 0

    assert app.post_json("/api/posts", post).status_int == 201
