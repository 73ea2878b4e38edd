"""The images of a page (S-403): of a post, its featured image, the images in its content
and its explicit extras; of a term, the images in its description. One extraction, which
every provider calls."""

from __future__ import annotations

import functools
import logging
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from html.parser import HTMLParser
from urllib.parse import urlsplit

from .sanitize import UnsafeUrl, host_of, normal_host, normal_url, origin_of

log = logging.getLogger(__name__)

# Protocol limit: Google reads at most 1,000 image:image elements per URL.
MAX_IMAGES_PER_URL = 1000
# Only HTML with one of these tags can hold an image; most has none and is not parsed.
# Any case: HTML tag names are case-insensitive.
_IMAGE_TAG = re.compile(r"<(?:img|source)", re.IGNORECASE)
# What a <source> belongs to: in a <picture> it offers an image (srcset); in a <video> or
# an <audio> a media file (src), which is no image.
_SOURCE_PARENTS = frozenset({"picture", "video", "audio"})
# A srcset candidate, as HTML parses it: the URL is a run of characters other than ASCII
# whitespace (commas too: "w_300,h_200" is one URL), after any whitespace and commas; its
# descriptors run to the next comma outside parentheses.
_CANDIDATE_URL = re.compile(r"[\t\n\f\r ,]*([^\t\n\f\r ,][^\t\n\f\r ]*)")
_DESCRIPTORS = re.compile(r"(?:[^,(]|\([^)]*\)?)*")
# A width ("640w"), a density ("1.5x") or a height ("480h", beside a width). ASCII digits
# only: "²w" is a digit to str.isdigit, not to float().
_WIDTH = re.compile(r"[0-9]+w")
_DENSITY = re.compile(r"(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?x")
_HEIGHT = re.compile(r"[0-9]+h")


class _ImageCollector(HTMLParser):
    """``<img src>``, the largest candidate of ``<img srcset>`` and of each ``<source
    srcset>`` of a ``<picture>``, in document order."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.found: list[str] = []
        # The open <picture>, <video> and <audio> elements, innermost last.
        self.open: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _SOURCE_PARENTS:
            self.open.append(tag)
            return
        if tag == "source" and not (self.open and self.open[-1] == "picture"):
            return
        if tag not in ("img", "source"):
            return
        values = dict(attrs)
        if tag == "img" and values.get("src"):
            self.found.append(values["src"] or "")
        largest = _largest_candidate(values.get("srcset") or "")
        if largest:
            self.found.append(largest)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        # As in HTML, "/>" closes nothing: "<picture/>" is an open picture.
        self.handle_starttag(tag, attrs)

    def handle_endtag(self, tag: str) -> None:
        if tag in self.open:
            # Closes it and whatever was left open inside it.
            del self.open[len(self.open) - 1 - self.open[::-1].index(tag) :]


def _candidates(srcset: str) -> Iterator[tuple[str, list[str]]]:
    """Each candidate of a ``srcset``: its URL and its descriptors."""
    position = 0
    while found := _CANDIDATE_URL.match(srcset, position):
        url, position = found.group(1), found.end()
        if url.endswith(","):  # "a.jpg, b.jpg 2x": no descriptors
            yield url.rstrip(","), []
            continue
        descriptors = _DESCRIPTORS.match(srcset, position)
        assert descriptors is not None  # it matches the empty string
        position = descriptors.end()
        yield url, descriptors.group().split()


def _size(descriptors: list[str]) -> float | None:
    """A candidate's width or density (1 without a descriptor), or None when its
    descriptors are not valid (a browser ignores such a candidate)."""
    size: float | None = None
    for descriptor in descriptors:
        if _HEIGHT.fullmatch(descriptor):
            continue
        if size is not None or not (_WIDTH.fullmatch(descriptor) or _DENSITY.fullmatch(descriptor)):
            return None
        size = float(descriptor[:-1])
        if descriptor.endswith("w") and size == 0:
            return None
    return 1.0 if size is None else size


def _largest_candidate(srcset: str) -> str | None:
    """The valid candidate of a ``srcset`` with the largest width (or density); the
    first of equals."""
    best, best_size = None, -1.0
    for url, descriptors in _candidates(srcset):
        size = _size(descriptors)
        if size is not None and size > best_size:
            best, best_size = url, size
    return best


def content_images(html: str) -> list[str]:
    """The image URLs of an HTML fragment as written (relative ones too), in order."""
    if not _IMAGE_TAG.search(html):
        return []
    collector = _ImageCollector()
    collector.feed(html)
    collector.close()
    return collector.found


@dataclass(frozen=True)
class ImageSources:
    """Where the images a sitemap lists may be (S-403): on the site itself, which is its
    origin (scheme, host and port: another port of the site's host is another server,
    whoever runs it), or on one of the allowed image hosts (CDNs, named by host name
    alone: any scheme or port). One judgement, for the extraction and for every stored
    entry (``sitemaps.xml.EntryRules``)."""

    site_origin: str
    hosts: frozenset[str]

    @classmethod
    def of(cls, site_url: str, allowed_hosts: Iterable[str]) -> ImageSources:
        try:
            site = normal_url(site_url)
        except UnsafeUrl:  # the settings hold only URLs that are not
            site = site_url
        hosts = {normal_host(host) for host in allowed_hosts}
        return cls(origin_of(site), frozenset(host for host in hosts if host))

    def allow(self, url: str) -> bool:
        """Whether the image at ``url`` (in normal form) may be listed."""
        return host_of(url) in self.hosts or origin_of(url) == self.site_origin


@functools.lru_cache(maxsize=64)
def _sources_of(site_url: str, allowed_hosts: tuple[str, ...]) -> tuple[str, ImageSources]:
    """The site's origin and where its images may be: the same for every post of a
    rebuild, made once (they were 10 to 15 µs of each post's images)."""
    site = urlsplit(site_url)
    return f"{site.scheme}://{site.netloc}", ImageSources.of(site_url, allowed_hosts)


def post_images(
    featured: str | None,
    content: str,
    extras: list[str],
    site_url: str,
    page_url: str,
    allowed_hosts: list[str],
) -> list[str]:
    """The images of the page at ``page_url``: ``featured``, those in the HTML
    ``content`` (``content_images``) and ``extras``, as absolute URLs in normal form
    (``sanitize.normal_url``), de-duplicated in order, on the site (its origin) or an
    allowed host (``ImageSources``), at most ``MAX_IMAGES_PER_URL``. A term has only its
    description as ``content``.

    Relative URLs are resolved against the page they appear on (``page_url``); images on
    other hosts are kept only when their host is an allowed CDN (S-403). An image that is
    no http(s) URL we can write (a bad port or host, ``javascript:``) is left out with one
    log line for the page.
    """
    origin, sources = _sources_of(site_url, tuple(allowed_hosts))
    seen: dict[str, None] = {}
    unusable: list[str] = []
    for raw in [featured or "", *content_images(content), *extras]:
        raw = raw.strip()
        if not raw or raw[:5].lower() == "data:":
            continue  # inline images have no URL to list
        if raw.startswith("/") and not raw.startswith("//") and "/." not in raw:
            raw = origin + raw  # the common case, without urljoin's cost
        try:
            absolute = normal_url(raw, page_url).partition("#")[0]
        except UnsafeUrl as problem:
            unusable.append(f"{raw[:80]!r} {problem}")
            continue
        if not sources.allow(absolute):
            continue
        seen.setdefault(absolute, None)
        if len(seen) >= MAX_IMAGES_PER_URL:
            break
    if unusable:
        log.warning(
            "images of %s left out (%d): %s", page_url, len(unusable), "; ".join(unusable[:3])
        )
    return list(seen)
