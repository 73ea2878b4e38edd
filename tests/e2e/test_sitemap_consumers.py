"""The text and gzip forms read by a second consumer that is not ours (S-313, issue 33).

ultimate-sitemap-parser reads every form in tests/e2e/test_browser.py. Here trafilatura,
a widely used Python library for crawling sites and extracting their text, which gathers a
site's URLs from its sitemaps, reads them too, over HTTP from one ``pserve production.ini``
serving the demo site:

- each sitemap page's ``.txt``, with trafilatura's sitemap reader (its download, decoding,
  test of "is this XML?" and link extraction, as ``sitemap_search`` runs them for each
  sitemap; ``sitemap_search`` itself takes only ``.xml``, ``.gz`` and ``…sitemap`` URLs as
  sitemaps): one URL per line, the same URLs as the page's XML, in its order;
- each page's ``.xml.gz`` and ``/sitemap_index.xml.gz``, with ``sitemap_search``, which
  gunzips by the bytes (not the headers) and follows the index to every page it lists:
  the same URLs again.

trafilatura is lenient where a crawler has to be: it reads XML served at a ``.txt`` URL
as XML, a plain body at a ``.xml.gz`` URL as it is, and a text cut short as the URLs it
got. So the checks here also say which form it read (no XML where text is promised, gzip
bytes where gzip is), and compare every URL with the XML's; the last test serves broken
twins from a stand-in and shows that each would be seen.

Two things trafilatura, made for the public web, refuses and a test on one machine needs:

- a host that is an IP address or ``localhost`` (courlan, its URL library, finds no domain
  and drops every link): the site's URL here is ``http://sitemap-server.test:PORT``, a
  name under a top-level domain reserved for tests (RFC 6761), which this process alone
  resolves to 127.0.0.1;
- a server on a non-public address (its SSRF protection, ``SSRF_PROTECTION``, which its
  settings turn off "for intranet use cases").

And ``sitemap_search`` first asks (HEAD) for the home page of the sitemap's host and reads
nothing when it answers 400 or more; this server answers ``/`` with a 404 (the demo has
no home page of its own, though its page sitemap lists it), so that check is passed for
this host alone.

The commands run behind a proxy that refuses, so the test never touches the network.
"""

from __future__ import annotations

import socket
from collections import Counter
from collections.abc import Iterator
from configparser import ConfigParser
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import urlsplit

import pytest
import requests

from sitemap_server.testing import (
    SITEMAP_NS,
    free_port,
    http_server,
    production_command,
    serve_production,
    server_environment,
    xml_parser,
)

pytestmark = pytest.mark.slow

# Reserved for tests (RFC 6761): resolved to 127.0.0.1 in this process, nowhere else.
HOST = "sitemap-server.test"
# Anything that would reach out (none should: oEmbed is off unless configured, and the
# demo's videos carry their metadata) fails at once instead of touching the network.
REFUSING_PROXY = "http://127.0.0.1:9"
NO_NETWORK = {
    **{name: REFUSING_PROXY for name in ("HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy")},
    **{name: "" for name in ("NO_PROXY", "no_proxy")},
}
NS = {"s": SITEMAP_NS}
GZIP_MAGIC = b"\x1f\x8b\x08"  # RFC 1952: a gzip member, deflate


# Fixtures: one server for the module, trafilatura set up for it ------------------------------


@pytest.fixture(scope="module")
def resolved() -> Iterator[None]:
    """``HOST`` resolves to 127.0.0.1 in this process while the module runs (as Chromium's
    ``--host-resolver-rules`` do in test_browser.py); every other name as before."""
    real = socket.getaddrinfo

    def getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
        return real("127.0.0.1" if host == HOST else host, *args, **kwargs)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(socket, "getaddrinfo", getaddrinfo)
        yield


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory, resolved: None) -> Iterator[str]:
    """The demo site, served by ``pserve production.ini``: its URL, on ``HOST``."""
    tmp = tmp_path_factory.mktemp("consumers-site")
    port = free_port()
    site_url = f"http://{HOST}:{port}"
    database_url = f"sqlite:///{tmp / 'site.sqlite'}"
    env = server_environment(
        SITEMAP_SERVER_DATABASE_URL=database_url, SITEMAP_SERVER_SITE_URL=site_url, **NO_NETWORK
    )
    production_command(env, "migrate")
    production_command(env, "seed-demo")
    with serve_production(database_url, site_url, tmp / "pserve.log", port=port):
        yield site_url


@pytest.fixture(scope="module")
def pages(site: str) -> dict[str, list[str]]:
    """Each page the index lists (``post-sitemap`` …): its ``<loc>`` URLs, in order, from
    its XML as a crawler gets it, parsed with lxml."""
    found = {}
    for loc in xml_locs(site + "/sitemap_index.xml", "s:sitemap/s:loc/text()"):
        assert loc.startswith(site + "/") and loc.endswith(".xml"), loc
        found[loc.removeprefix(site + "/").removesuffix(".xml")] = xml_locs(
            loc, "s:url/s:loc/text()"
        )
    assert {"post-sitemap", "page-sitemap", "video-sitemap", "news-sitemap"} <= found.keys()
    assert all(found.values()), found
    return found


@pytest.fixture
def reader_config(monkeypatch: pytest.MonkeyPatch, resolved: None) -> ConfigParser:
    """trafilatura's own settings, but for a server on this machine: no SSRF protection,
    and downloads given up after 10 s (not 30). Its home-page check passes for ``HOST``."""
    from trafilatura import sitemaps
    from trafilatura.settings import use_config

    config = use_config()
    config.set("DEFAULT", "SSRF_PROTECTION", "off")
    config.set("DEFAULT", "DOWNLOAD_TIMEOUT", "10")
    real = sitemaps.is_live_page

    def is_live_page(url: str, config: ConfigParser = config) -> bool:
        return urlsplit(url).hostname == HOST or real(url, config)

    monkeypatch.setattr(sitemaps, "is_live_page", is_live_page)
    return config


# Reading, with what trafilatura gives -------------------------------------------------------


def xml_locs(url: str, path: str) -> list[str]:
    response = requests.get(url, timeout=10)
    assert response.status_code == 200, f"{url}: {response.status_code}"
    return list(etree_root(response.content).xpath(path, namespaces=NS))


def etree_root(body: bytes) -> Any:
    from lxml import etree

    return etree.fromstring(body, xml_parser())


def as_read(urls: list[str]) -> list[str]:
    """``urls`` as trafilatura returns them: put through courlan's ``clean_url``, as its
    sitemap reader does with every link (the home page ``http://host/`` loses its slash)."""
    from trafilatura.sitemaps import clean_url

    return [clean_url(url) or "" for url in urls]


def read_text(config: ConfigParser, url: str) -> list[str]:
    """The URLs trafilatura reads in the text sitemap at ``url``, in order; asserts that it
    read it as text (it would read XML there as XML) and found no sitemap in it."""
    from trafilatura.sitemaps import SITEMAP_FORMAT, SitemapObject, get_hostinfo

    domain, base = get_hostinfo(url)
    assert domain is not None, url
    reader = SitemapObject(base, domain, [], config=config)
    reader.current_url = url
    reader.fetch()
    assert reader.content, f"{url}: nothing downloaded"
    assert not SITEMAP_FORMAT.match(reader.content), f"{url}: read as XML, not text"
    reader.process()
    assert reader.sitemap_urls == [], reader.sitemap_urls
    return reader.urls


def read_gzip(config: ConfigParser, url: str) -> list[str]:
    """The URLs ``sitemap_search`` finds from the gzip file at ``url`` (an index's pages
    included); asserts that what it downloaded was gzip (it would read a plain body too)."""
    from trafilatura.downloads import fetch_response
    from trafilatura.sitemaps import sitemap_search

    response = fetch_response(url, config=config)
    assert response is not None and response.status == 200, url
    assert response.data[:3] == GZIP_MAGIC, f"{url}: not gzip: {response.data[:20]!r}"
    return sitemap_search(url, sleep_time=0, config=config)


# The tests ------------------------------------------------------------------------------------


def test_trafilatura_changes_no_url_but_the_home_pages_slash(site, pages):
    """What the comparisons below allow: trafilatura's URL cleaning, applied to every URL
    of the demo site, changes the home page alone (``http://host/`` → ``http://host``)."""
    changed = {url for urls in pages.values() for url in urls if as_read([url]) != [url]}
    assert changed == {site + "/"}


def test_trafilatura_reads_the_text_form_of_every_page(site, pages, reader_config):
    """A tool reading ``/post-sitemap.txt`` (and every other page's ``.txt``) as the text
    sitemap it is finds exactly the page's URLs, in its order."""
    read = {name: read_text(reader_config, f"{site}/{name}.txt") for name in pages}
    assert read == {name: as_read(urls) for name, urls in pages.items()}


def test_trafilatura_reads_the_gzip_form_of_every_page(site, pages, reader_config):
    """A tool given ``/post-sitemap.xml.gz`` (and every other page's) gunzips it itself and
    finds exactly the page's URLs, in its order."""
    read = {name: read_gzip(reader_config, f"{site}/{name}.xml.gz") for name in pages}
    assert read == {name: as_read(urls) for name, urls in pages.items()}


def test_trafilatura_follows_the_gzip_index_to_every_page(site, pages, reader_config):
    """A tool given only ``/sitemap_index.xml.gz`` reaches every page the index lists and
    finds every URL of each, as often as the pages list it (a post is in the post, video
    and news sitemaps alike). trafilatura reads the pages last listed first: their order is
    its own."""
    read = read_gzip(reader_config, site + "/sitemap_index.xml.gz")
    assert Counter(read) == Counter(as_read([url for urls in pages.values() for url in urls]))


def test_a_broken_twin_would_be_seen(site, pages, reader_config):
    """The checks above fail on what trafilatura would take without complaint: XML served
    as the text form, a plain body as the gzip form, either form cut short. A stand-in
    server on ``HOST`` serves such twins of the post sitemap, made from this server's
    bytes."""
    want = as_read(pages["post-sitemap"])
    xml = requests.get(site + "/post-sitemap.xml", timeout=10).content
    text = requests.get(site + "/post-sitemap.txt", timeout=10).content
    gzipped = requests.get(site + "/post-sitemap.xml.gz", timeout=10).content
    assert gzipped[:3] == GZIP_MAGIC
    twins = {
        "/xml.txt": xml,
        "/cut.txt": text[: len(text) // 2],
        "/plain.xml.gz": xml,
        "/cut.xml.gz": gzipped[: len(gzipped) // 2],
    }

    class Twins(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = twins[self.path]
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    with http_server(Twins) as stand_in:
        twin = f"http://{HOST}:{urlsplit(stand_in).port}"
        with pytest.raises(AssertionError, match="read as XML, not text"):
            read_text(reader_config, twin + "/xml.txt")
        # Fewer URLs, the last one perhaps cut within: seen only by comparing.
        cut = read_text(reader_config, twin + "/cut.txt")
        assert len(cut) < len(want)
        with pytest.raises(AssertionError, match="not gzip"):
            read_gzip(reader_config, twin + "/plain.xml.gz")
        # trafilatura alone takes the plain body: only the check above sees it.
        from trafilatura.sitemaps import sitemap_search

        assert sitemap_search(twin + "/plain.xml.gz", sleep_time=0, config=reader_config) == want
        assert read_gzip(reader_config, twin + "/cut.xml.gz") != want  # it reads nothing
