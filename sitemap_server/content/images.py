"""The images of a post (S-403): featured, ``<img>`` in the content, explicit extras."""

from __future__ import annotations

from html.parser import HTMLParser
from urllib.parse import urljoin, urlsplit

from ..models.content import MAX_URL_LENGTH

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
        if len(pieces) > 1 and pieces[1][:-1].replace(".", "", 1).isdigit():
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
    """Absolute image URLs, de-duplicated in order, on the site's host or an allowed one.

    Relative URLs are resolved against the page they appear on (``page_url``); images on
    other hosts are kept only when their host is an allowed CDN.
    """
    site = urlsplit(site_url)
    site_host = (site.hostname or "").lower()
    origin = f"{site.scheme}://{site.netloc}"
    allowed = {site_host, *(h.lower() for h in allowed_hosts)}
    seen: dict[str, None] = {}
    for raw in [featured or "", *content_images(content), *extras]:
        raw = raw.strip()
        if not raw or raw.startswith("data:"):
            continue
        if raw.startswith("/") and not raw.startswith("//") and "/." not in raw:
            absolute = origin + raw  # the common case, without urljoin's cost
        elif raw.startswith(("http://", "https://")) and "/." not in raw:
            absolute = raw
        else:
            absolute = urljoin(page_url, raw)
        parts = urlsplit(absolute)
        if parts.scheme not in ("http", "https") or (parts.hostname or "").lower() not in allowed:
            continue
        absolute = absolute.split("#", 1)[0]
        if len(absolute) > MAX_URL_LENGTH:
            continue
        seen.setdefault(absolute, None)
        if len(seen) >= MAX_IMAGES_PER_URL:
            break
    return list(seen)
