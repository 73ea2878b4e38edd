"""The images of a post (S-403): featured, ``<img>`` in the content, explicit extras."""

from __future__ import annotations

import logging
import re
from html.parser import HTMLParser
from urllib.parse import urlsplit

from .sanitize import UnsafeUrl, host_of, normal_host, normal_url

log = logging.getLogger(__name__)

# A srcset candidate's width or density ("640w", "1.5x"); ASCII digits only: "²w" is
# a digit to str.isdigit, not to float().
_DESCRIPTOR = re.compile(r"(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)[wx]")
# Protocol limit: Google reads at most 1,000 image:image elements per URL.
MAX_IMAGES_PER_URL = 1000


class _ImageCollector(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.found: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag != "img":
            return
        values = dict(attrs)
        if values.get("src"):
            self.found.append(values["src"] or "")
        largest = _largest_candidate(values.get("srcset") or "")
        if largest:
            self.found.append(largest)


def _largest_candidate(srcset: str) -> str | None:
    """The candidate of a ``srcset`` with the largest width (or density) descriptor."""
    best, best_size = None, -1.0
    for candidate in srcset.split(","):
        pieces = candidate.split()
        if not pieces:
            continue
        size = 1.0
        if len(pieces) > 1 and _DESCRIPTOR.fullmatch(pieces[1]):
            size = float(pieces[1][:-1])
        if size > best_size:
            best, best_size = pieces[0], size
    return best


def content_images(html: str) -> list[str]:
    if "<img" not in html and "<IMG" not in html:
        return []  # most posts: no need to parse at all
    collector = _ImageCollector()
    collector.feed(html)
    collector.close()
    return collector.found


def post_images(
    featured: str | None,
    content: str,
    extras: list[str],
    site_url: str,
    page_url: str,
    allowed_hosts: list[str],
) -> list[str]:
    """Absolute image URLs in normal form (``sanitize.normal_url``), de-duplicated in
    order, on the site's host or an allowed one.

    Relative URLs are resolved against the page they appear on (``page_url``); images on
    other hosts are kept only when their host is an allowed CDN (S-403). An image that is
    no http(s) URL we can write (a bad port or host, ``javascript:``) is left out with one
    log line for the page.
    """
    site = urlsplit(site_url)
    origin = f"{site.scheme}://{site.netloc}"
    allowed = {normal_host(host) for host in [site.hostname or "", *allowed_hosts]}
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
        if host_of(absolute) not in allowed:
            continue
        seen.setdefault(absolute, None)
        if len(seen) >= MAX_IMAGES_PER_URL:
            break
    if unusable:
        log.warning(
            "images of %s left out (%d): %s", page_url, len(unusable), "; ".join(unusable[:3])
        )
    return list(seen)
