"""HTTP for sitemap documents: conditional requests (304), the headers every sitemap
answer carries, the per-process cache of rendered documents, and the 404 (S-305).

``sitemap_response`` is what every sitemap view returns through: the versions the
request read name the document (its ETag and its cache key), so a client that has them
gets a 304, a process that rendered them answers with the cached bytes, and only a
new version is rendered, once, however many requests ask for it at the same moment.
"""

from __future__ import annotations

import hashlib
import zlib
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from datetime import datetime
from threading import Lock
from typing import Any, Generic, Protocol, TypeVar

from pyramid.request import Request
from pyramid.response import Response
from sqlalchemy.engine import Connection

from ..documents import ALL_TAG, FEED, GZIP_FILE, TEXT, XML
from .reader import Reader, ReadState

X_ROBOTS_TAG = "noindex, follow"
# A 404 echoes at most this much of the URL asked for (S-305: a small body).
NOT_FOUND_ECHO_CHARS = 200
# Documents larger than this are cached gzipped only (a 50,000-URL page is 9 MB plain),
# and sent plain in pieces of this size, decompressed as they go.
KEEP_PLAIN_BYTES = 1024 * 1024
PLAIN_PIECE_BYTES = 256 * 1024
# zlib's wbits for the gzip format (RFC 1952) rather than a bare zlib stream.
GZIP_WBITS = 31
XML_CONTENT_TYPE = "text/xml"
# Each form of a document (``documents.XML`` …) as it is sent: the gzip file is the
# gzipped XML as it is, with no Content-Encoding (RFC 6713's type).
CONTENT_TYPES = {
    XML: XML_CONTENT_TYPE,
    GZIP_FILE: "application/gzip",
    TEXT: "text/plain",
    FEED: "application/atom+xml",
}
# zlib's fast levels (1-3) against the default 6, on a 1,000-URL page of the benchmark
# site (180 KB): 0.28 ms and 11.3 KB at 3, 0.83 ms and 10.2 KB at 6; a 50,000-URL page
# takes 15 ms instead of 33. Every new version is compressed once, before it is served.
GZIP_LEVEL = 3


@dataclass
class Rendered:
    """A rendered document. Large ones keep only their gzipped bytes (about a sixth):
    the few clients that take no gzip get them decompressed piece by piece."""

    body: bytes | None
    gzipped: bytes
    size: int  # of the plain document
    etag: str
    last_modified: datetime | None

    @property
    def cost(self) -> int:
        return len(self.body or b"") + len(self.gzipped)

    def plain(self) -> Iterator[bytes]:
        if self.body is not None:
            yield self.body
            return
        unzip = zlib.decompressobj(GZIP_WBITS)
        data = self.gzipped
        while data:
            yield unzip.decompress(data, PLAIN_PIECE_BYTES)
            data = unzip.unconsumed_tail
        yield unzip.flush()


class Costly(Protocol):
    @property
    def cost(self) -> int: ...


Key = TypeVar("Key", bound=Hashable)
Value = TypeVar("Value", bound=Costly)


class LeastRecentlyUsed(Generic[Key, Value]):
    """Values by key, ``max_bytes`` of them at most (each its ``cost``), the least
    recently used out first; a value of more than a quarter of that is not kept."""

    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        self.size = 0
        self.items: OrderedDict[Key, Value] = OrderedDict()
        self.lock = Lock()

    def get(self, key: Key) -> Value | None:
        with self.lock:
            found = self.items.get(key)
            if found is not None:
                self.items.move_to_end(key)
            return found

    def clear(self) -> None:
        with self.lock:
            self.items.clear()
            self.size = 0

    def put(self, key: Key, value: Value) -> None:
        with self.lock:
            old = self.items.pop(key, None)
            if old is not None:
                self.size -= old.cost
            if value.cost > self.max_bytes // 4:
                return
            self.items[key] = value
            self.size += value.cost
            while self.size > self.max_bytes:
                _, out = self.items.popitem(last=False)
                self.size -= out.cost


class RenderCache(LeastRecentlyUsed[tuple[Any, ...], Rendered]):
    """Rendered documents by (path, versions)."""

    # Documents rendered at once by one process, at most; a document renders once at a
    # time (see ``rendering``).
    STRIPES = 64

    def __init__(self, max_bytes: int) -> None:
        super().__init__(max_bytes)
        self.stripes = [Lock() for _ in range(self.STRIPES)]

    def rendering(self, what: tuple[Any, ...]) -> Lock:
        """Held while ``what`` is rendered: the requests that find the same document
        missing after a change wait for one rendering instead of each making their own
        (after a write, every crawler connection would otherwise render it at once)."""
        return self.stripes[hash(what) % self.STRIPES]


# Render a document: its text in pieces, or None when it does not exist (a 404).
Render = Callable[[Connection, ReadState], "Iterable[str] | None"]


def document_etag(what: tuple[Any, ...], versions: tuple[tuple[str, int, str], ...]) -> str:
    """``post-2-*.3-post.7-…``: the document, its versions and a digest of their change
    times."""
    numbers = "-".join(f"{name}.{number}" for name, number, _ in versions)
    times = "|".join(changed_at for _, _, changed_at in versions).encode()
    digest = hashlib.blake2b(times, digest_size=6).hexdigest()
    return "-".join(map(str, what)) + f"-{numbers}-{digest}"


def sitemap_response(
    request: Request,
    what: tuple[Any, ...],
    names: list[str],
    render: Render,
    form: str = XML,
    finished: bool = False,
) -> Response:
    """304, cached bytes, or a fresh rendering; always with the sitemap headers.

    ``what`` names the document (``("post", 3)``) and ``names`` the providers whose
    versions it depends on; the site version is always one of them. ``form``: how it is
    sent (``CONTENT_TYPES``); the gzip file is the XML's rendering, its gzipped bytes.
    ``finished``: the maintainer may have stored this rendering (``finished.py``), read
    before rendering it here.
    """
    reader: Reader = request.site.reader
    cache: RenderCache = request.site.render_cache
    state = request.read_state
    as_file = form == GZIP_FILE
    wants_gzip = as_file or accepts_gzip(request)

    versions = state.version_of(*names)
    etag = document_etag(what, versions)
    last_modified = state.changed_at(*names)
    unchanged = not_modified(request, etag, last_modified, wants_gzip, as_file)
    if unchanged is not None:
        return unchanged
    key = (*what, state.site.site_url, versions)
    rendered = cache.get(key)
    if rendered is None:
        with cache.rendering(what):
            rendered = cache.get(key)  # made while this request waited
            if rendered is None and finished:
                stored = request.site.finished(state, what, names)
                if stored is not None:
                    gzipped, size = stored
                    rendered = Rendered(None, gzipped, size, etag, last_modified)
                    cache.put(key, rendered)
            if rendered is None:
                found = _render(reader, cache, what, names, render)
                if found is None:
                    return not_found(request, request.path)
                rendered = found
    # A gzip file is bytes: no charset.
    response = Response(content_type=CONTENT_TYPES[form], charset=None if as_file else "UTF-8")
    return send(request, response, rendered, wants_gzip, as_file)


def accepts_gzip(request: Request) -> bool:
    """No (or an unreadable) Accept-Encoding gets plain bytes: curl, urllib and many
    validators send none and do not decompress."""
    accept_encoding = request.accept_encoding
    return bool(accept_encoding) and bool(accept_encoding.acceptable_offers(["gzip"]))


def send(
    request: Request, response: Response, rendered: Rendered, gzipped: bool, as_file: bool = False
) -> Response:
    """``rendered`` as the body of ``response``, gzipped or not (as a transfer, or as the
    file it is: ``as_file``), with the sitemap headers."""
    sitemap_headers(request, response, rendered.etag, gzipped, as_file)
    response.last_modified = rendered.last_modified
    if gzipped:
        response.body = rendered.gzipped
        if not as_file:
            response.content_encoding = "gzip"
    else:
        response.app_iter = rendered.plain()
        response.content_length = rendered.size
    return response


def _render(
    reader: Reader, cache: RenderCache, what: tuple[Any, ...], names: list[str], render: Render
) -> Rendered | None:
    """``what`` as of a snapshot (from the cache when that version was rendered already),
    stored in the cache; None when it does not exist.

    The pieces go to the compressor as they come from the database: a page of 50,000
    entries is never one string, only the gzipped bytes it becomes."""
    with reader.snapshot() as conn:
        # Read again inside the snapshot: the key must name what is rendered.
        state = reader.state(conn)
        versions = state.version_of(*names)
        key = (*what, state.site.site_url, versions)
        cached = cache.get(key)
        if cached is not None:
            return cached
        pieces = render(conn, state)
        if pieces is None:
            return None
        rendered = pack(
            (piece.encode("utf-8") for piece in pieces),
            document_etag(what, versions),
            state.changed_at(*names),
        )
    cache.put(key, rendered)
    return rendered


def pack(pieces: Iterable[bytes], etag: str, last_modified: datetime | None) -> Rendered:
    """A document from its pieces, compressed as they come: the plain bytes are kept
    only while they are few (``KEEP_PLAIN_BYTES``)."""
    compressor = zlib.compressobj(GZIP_LEVEL, zlib.DEFLATED, GZIP_WBITS)
    gzipped: list[bytes] = []
    plain: list[bytes] | None = []
    size = 0
    for data in pieces:
        size += len(data)
        gzipped.append(compressor.compress(data))
        if plain is not None and size <= KEEP_PLAIN_BYTES:
            plain.append(data)
        else:
            plain = None
    gzipped.append(compressor.flush())
    joined = b"".join(plain) if plain is not None else None
    return Rendered(joined, b"".join(gzipped), size, etag, last_modified)


def not_modified(
    request: Request,
    etag: str,
    last_modified: datetime | None,
    gzipped: bool,
    as_file: bool = False,
) -> Response | None:
    """A 304, with the sitemap headers, when the client has the document (``etag`` of its
    plain form, its gzipped one ``-gz``: the same bytes as a transfer or as a file); else
    None."""
    if not is_not_modified(request, f"{etag}-gz" if gzipped else etag, last_modified):
        return None
    response = sitemap_headers(request, Response(status=304), etag, gzipped, as_file)
    response.last_modified = last_modified
    return response


def is_not_modified(request: Request, etag: str, last_modified: datetime | None) -> bool:
    if request.headers.get("If-None-Match"):
        return etag in request.if_none_match
    return (
        last_modified is not None
        and request.if_modified_since is not None
        and last_modified.replace(microsecond=0) <= request.if_modified_since
    )


def sitemap_headers(
    request: Request, response: Response, etag: str, gzipped: bool, as_file: bool = False
) -> Response:
    """The headers of every sitemap answer; a gzip file's bytes are the same whatever the
    client accepts (no ``Vary``)."""
    response.headers["X-Robots-Tag"] = X_ROBOTS_TAG
    if not as_file:
        response.headers["Vary"] = "Accept-Encoding"
    response.headers["ETag"] = f'"{etag}-gz"' if gzipped else f'"{etag}"'
    response.cache_control = request.site.cache_policy
    return response


def not_found(request: Request, what: str) -> Response:
    """A 404 (S-305), with the documents' cache policy: a shared cache that keeps it asks
    again as it would for a document (a page past the last one may exist tomorrow)."""
    if len(what) > NOT_FOUND_ECHO_CHARS:  # a small body, whatever the URL (S-305)
        what = what[:NOT_FOUND_ECHO_CHARS] + "…"
    response = Response(
        f"Not found: {what}\n", status=404, content_type="text/plain", charset="UTF-8"
    )
    response.headers["X-Robots-Tag"] = X_ROBOTS_TAG
    response.cache_control = request.site.cache_policy
    return response


def cache_policy(settings: Mapping[str, Any]) -> str:
    """The ``Cache-Control`` of every document: ``sitemap_server.cache_control`` as
    written, else made of the ``sitemap_server.cache.*`` settings. Browsers revalidate
    every use (``max-age=0``: a cheap 304); a shared cache keeps a copy ``s-maxage``
    seconds, and may serve it stale while it revalidates it (``stale-while-revalidate``)
    or while this server fails (``stale-if-error``)."""
    written: str = settings["sitemap_server.cache_control"]
    if written:
        return written
    policy = ["public", "max-age=0", f"s-maxage={settings['sitemap_server.cache.s_maxage']}"]
    for directive in ("stale_while_revalidate", "stale_if_error"):
        seconds = settings[f"sitemap_server.cache.{directive}"]
        if seconds:
            policy.append(f"{directive.replace('_', '-')}={seconds}")
    return ", ".join(policy)


# Headers whose tags are separated by commas (Cloudflare's, Akamai's); the others' by
# blanks (Fastly's Surrogate-Key, Varnish's xkey).
COMMA_SEPARATED = frozenset({"cache-tag", "edge-cache-tag"})


def tag(request: Request, *tags: str) -> None:
    """The answer to ``request``, whatever it is (the document, a 304, a redirect to it,
    a 404), names ``tags`` and ``ALL_TAG`` in the headers
    ``sitemap_server.cache.tag_headers`` names."""
    headers: tuple[str, ...] = request.site.settings["sitemap_server.cache.tag_headers"]
    if not headers:
        return
    values = (ALL_TAG, *tags)

    def add(_request: Request, response: Response) -> None:
        for name in headers:
            separator = ", " if name.lower() in COMMA_SEPARATED else " "
            response.headers[name] = separator.join(values)

    request.add_response_callback(add)


def not_found_view(request: Request) -> Response:
    """Any other unknown URL outside the admin API, with the same header (S-305)."""
    return not_found(request, request.path)


# What the documents of the read path answer: they are read, never written.
READ_METHODS = ("GET", "HEAD")


def not_allowed_view(request: Request) -> Response:
    """A document of the read path asked for with another method (``PUT
    /post-sitemap.xml``): 405 with ``Allow`` (RFC 9110), not a 404 that says it is not
    there."""
    path = request.path
    if len(path) > NOT_FOUND_ECHO_CHARS:
        path = path[:NOT_FOUND_ECHO_CHARS] + "…"
    allowed = " or ".join(READ_METHODS)
    response = Response(
        f"Method not allowed: {path} is read with {allowed}\n",
        status=405,
        content_type="text/plain",
        charset="UTF-8",
    )
    response.headers["Allow"] = ", ".join(READ_METHODS)
    response.headers["X-Robots-Tag"] = X_ROBOTS_TAG
    return response
