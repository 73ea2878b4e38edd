"""``pserve production.ini`` really serves the API over HTTP (S-801)."""

import socket
import subprocess
from urllib.parse import urlsplit

import pytest
import requests

from sitemap_server.testing import (
    PROJECT_ROOT,
    free_port,
    pserve_production,
    serve_production,
)
from sitemap_server.testing import server_environment as environment

pytestmark = pytest.mark.slow

SITE_URL = "https://www.example.test"


@pytest.fixture
def server(database_url, clean_database, tmp_path):
    """A running ``pserve production.ini`` on the test database: its base URL."""
    with serve_production(
        database_url, SITE_URL, tmp_path / "pserve.log", ready_path="/api/openapi.json"
    ) as base:
        yield base


def test_serves_the_openapi_document(server):
    response = requests.get(f"{server}/api/openapi.json", timeout=10)
    assert response.status_code == 200
    assert response.headers["Content-Type"].startswith("application/json")
    assert "/api/posts" in response.json()["paths"]


def test_serves_authenticated_api_requests(server, api):
    api.post_json("/api/posts", {"type": "post", "title": "Over HTTP", "status": "publish"})
    token = api.authorization[1]

    response = requests.get(
        f"{server}/api/posts", headers={"Authorization": f"Bearer {token}"}, timeout=10
    )
    assert response.status_code == 200
    posts = response.json()
    assert posts["total"] == 1
    # The site URL came from SITEMAP_SERVER_SITE_URL.
    assert posts["items"][0]["permalink"].startswith(f"{SITE_URL}/")

    refused = requests.get(f"{server}/api/posts", timeout=10)
    assert refused.status_code == 401
    assert refused.headers["WWW-Authenticate"] == "Bearer"
    assert refused.headers["Content-Type"].startswith("application/problem+json")


def test_serves_writes_over_http(server, api_token, dbsession):
    response = requests.post(
        f"{server}/api/authors",
        json={"slug": "ada", "name": "Ada"},
        headers={"Authorization": f"Bearer {api_token}"},
        timeout=10,
    )
    assert response.status_code == 201
    assert response.headers["Location"].endswith(f"/api/authors/{response.json()['id']}")


def test_import_over_http_streams_the_body(server, api_token, api):
    lines = "".join(
        f'{{"post": {{"type": "post", "title": "Post {n}", "slug": "p-{n}"}}}}\n'
        for n in range(2000)
    )
    response = requests.post(
        f"{server}/api/import",
        data=lines.encode(),
        headers={"Authorization": f"Bearer {api_token}", "Content-Type": "application/x-ndjson"},
        timeout=60,
    )
    assert response.status_code == 200, response.text
    assert response.json() == {"lines": 2000, "created": {"post": 2000}, "dry_run": False}
    assert api.get("/api/posts", params={"per_page": 1}).json["total"] == 2000


@pytest.mark.parametrize(
    ("given", "missing"),
    [
        ([], "SITEMAP_SERVER_DATABASE_URL"),
        (["SITEMAP_SERVER_SITE_URL"], "SITEMAP_SERVER_DATABASE_URL"),
        (["SITEMAP_SERVER_DATABASE_URL"], "SITEMAP_SERVER_SITE_URL"),
    ],
    ids=["nothing", "no-database", "no-site-url"],
)
def test_production_ini_without_the_environment_does_not_start(given, missing, tmp_path):
    values = {
        "SITEMAP_SERVER_DATABASE_URL": f"sqlite:///{tmp_path / 'unused.sqlite'}",
        "SITEMAP_SERVER_SITE_URL": SITE_URL,
    }
    finished = subprocess.run(
        pserve_production(free_port()),
        cwd=PROJECT_ROOT,
        env=environment(**{name: values[name] for name in given}),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert finished.returncode != 0
    assert missing in finished.stderr


def raw_request(base: str, head: bytes, chunks: int = 0) -> bytes:
    """What the server answers to ``head`` (then ``chunks`` chunks of 64 KiB), sent on a
    plain socket: the first bytes of its answer."""
    address = urlsplit(base)
    with socket.create_connection((address.hostname, address.port), timeout=10) as sock:
        sock.sendall(head)
        try:
            for _ in range(chunks):
                sock.sendall(b"10000\r\n" + b"x" * 65536 + b"\r\n")
        except (BrokenPipeError, ConnectionResetError):
            pass  # the server stopped reading: its answer is already there
        return sock.recv(200)


def test_a_body_over_the_limit_is_refused_before_it_is_read(server):
    """No token, and a Content-Length of 300 MiB: 413 before a byte of the body is sent."""
    head = (
        b"POST /api/import HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-ndjson\r\n"
        b"Content-Length: 314572800\r\n\r\n"
    )
    assert raw_request(server, head).startswith(b"HTTP/1.1 413 ")


def test_a_chunked_body_is_cut_when_it_passes_the_limit(server):
    head = (
        b"POST /api/import HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-ndjson\r\n"
        b"Transfer-Encoding: chunked\r\n\r\n"
    )
    # 1,100 chunks of 64 KiB: 68.75 MiB, past the 64 MiB limit.
    assert raw_request(server, head, chunks=1100).startswith(b"HTTP/1.1 413 ")
