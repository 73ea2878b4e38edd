"""``pserve production.ini``'s serving settings (issue 12): idle and slowloris
connections do not shut other clients out, and no URL comes from the request's host or
proxy headers.

How fast the client is answered meanwhile is measured by ``bench/idle_connections.py``;
here only that it is answered, within a bounded wait.
"""

import resource
import socket
from urllib.parse import urlsplit

import pytest
import requests

from sitemap_server.testing import SITEMAP_NS, parse_sitemap, serve_production

pytestmark = pytest.mark.slow

SITE_URL = "https://www.example.test"
IDLE_CONNECTIONS = 1000
# What a slowloris client sends before it stops: half of a request line.
HALF_REQUEST_LINE = b"GET /sitemap_ind"
# The idle sockets, in this process and in the server (which inherits the limit), plus
# what both use besides.
DESCRIPTORS_NEEDED = IDLE_CONNECTIONS + 1000
FORGED = {
    "Host": "evil.example",
    "X-Forwarded-Host": "evil.example",
    "X-Forwarded-Proto": "http",
    "X-Forwarded-Port": "8443",
    "Forwarded": "host=evil.example;proto=http",
}


@pytest.fixture
def descriptors():
    """A soft file-descriptor limit high enough for the idle connections, while the test runs."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY or soft >= DESCRIPTORS_NEEDED:
        yield
        return
    assert hard == resource.RLIM_INFINITY or hard >= DESCRIPTORS_NEEDED, (
        f"needs {DESCRIPTORS_NEEDED} file descriptors; the hard limit is {hard}"
    )
    resource.setrlimit(resource.RLIMIT_NOFILE, (DESCRIPTORS_NEEDED, hard))
    yield
    resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


@pytest.fixture
def server(descriptors, database_url, clean_database, api, tmp_path):
    """A running ``pserve production.ini`` serving one published post: its base URL."""
    api.post_json("/api/posts", {"type": "post", "title": "Hello", "status": "publish"})
    with serve_production(database_url, SITE_URL, tmp_path / "pserve.log") as base:
        yield base


@pytest.fixture
def idle_connections(server):
    """``IDLE_CONNECTIONS`` open connections to the server: half send nothing, half send
    half a request line and stop. All closed afterwards."""
    address = ("127.0.0.1", urlsplit(server).port)
    sockets = []
    try:
        for n in range(IDLE_CONNECTIONS):
            sock = socket.create_connection(address, timeout=5)
            sockets.append(sock)
            if n % 2:
                sock.sendall(HALF_REQUEST_LINE)
        yield sockets
    finally:
        for sock in sockets:
            sock.close()


def index_locs_of(response):
    assert response.status_code == 200
    root = parse_sitemap(response.content)
    assert root.tag == f"{{{SITEMAP_NS}}}sitemapindex"
    return [loc.text for loc in root.iterfind("s:sitemap/s:loc", {"s": SITEMAP_NS})]


def test_idle_connections_do_not_shut_other_clients_out(server, idle_connections):
    # Waitress's defaults (100 connections at most, idle ones closed after 120 s) kept
    # this request waiting for minutes.
    response = requests.get(f"{server}/sitemap_index.xml", timeout=5)
    assert f"{SITE_URL}/post-sitemap.xml" in index_locs_of(response)
    # And once more on a new connection: the server is still accepting.
    assert requests.get(f"{server}/robots.txt", timeout=5).status_code == 200


def test_no_url_comes_from_the_host_or_proxy_headers(server):
    """Sent from 127.0.0.1, where a reverse proxy would be: none of it is trusted."""
    locs = index_locs_of(requests.get(f"{server}/sitemap_index.xml", headers=FORGED, timeout=10))
    assert locs
    assert all(loc.startswith(f"{SITE_URL}/") for loc in locs)
    redirect = requests.get(
        f"{server}/sitemap.xml", headers=FORGED, allow_redirects=False, timeout=10
    )
    assert redirect.status_code == 301
    assert redirect.headers["Location"] == f"{SITE_URL}/sitemap_index.xml"
    robots = requests.get(f"{server}/robots.txt", headers=FORGED, timeout=10)
    assert f"Sitemap: {SITE_URL}/sitemap_index.xml" in robots.text
    for path in (
        "/post-sitemap.xml",
        "/post-sitemap1.xml",
        "/main-sitemap.xsl",
        "/sitemaps",
        "/sitemaps/",
        "/sitemaps/post-sitemap.html",
    ):
        response = requests.get(
            f"{server}{path}", headers=FORGED, allow_redirects=False, timeout=10
        )
        assert response.status_code in (200, 301), path
        assert "evil.example" not in response.text, path
        assert "evil.example" not in response.headers.get("Location", ""), path
