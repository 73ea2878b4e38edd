"""Text that never breaks the XML (S-404), entries fit to be stored (S-208, S-403, S-404)
and dates in W3C format (S-402)."""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta, timezone, tzinfo
from typing import Any

from ..content.images import MAX_IMAGES_PER_URL, ImageSources
from ..content.sanitize import (
    UnsafeUrl,
    clean_text,
    normal_path,
    normal_url,
)
from ..models.content import LANGUAGE_TAG, MAX_LANGUAGE_TAG, MAX_URL_LENGTH
from .entries import Entry

# The namespaces of a ``urlset``'s own extensions: images, and hreflang annotations
# (``<xhtml:link rel="alternate">``, S-405).
IMAGE_NS = "http://www.google.com/schemas/sitemap-image/1.1"
XHTML_NS = "http://www.w3.org/1999/xhtml"

_ESCAPES = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&apos;"})


def valid_chars(value: str) -> str:
    """``value`` without the characters XML 1.0 cannot carry (for templates that escape)."""
    return clean_text(value)


def xml_text(value: str) -> str:
    """``value`` escaped for element content or an attribute, invalid characters removed."""
    return clean_text(value).translate(_ESCAPES)


def w3c(value: datetime | None, zone: tzinfo = UTC) -> str | None:
    """``2019-10-21T12:37:01+02:00``: seconds precision, the offset of ``zone`` (the
    site's time zone, as WordPress writes them)."""
    if value is None:
        return None
    local = value.astimezone(zone)
    offset = local.utcoffset()
    if offset is not None and offset % _MINUTE:
        # A zone's local mean time (before it took a standard time: -10:29:20 in
        # Kiritimati until 1901) has seconds, which a W3C date cannot write: the same
        # instant with the offset to the nearest minute.
        local = value.astimezone(timezone(_MINUTE * round(offset / _MINUTE)))
    return local.replace(microsecond=0).isoformat()


_MINUTE = timedelta(minutes=1)


def local_w3c(value: str | None, zone: tzinfo) -> str | None:
    """A W3C date-time (as plugins store them) in ``zone``; other text unchanged."""
    if not value:
        return value
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        return value
    if parsed.tzinfo is None:
        return value
    return w3c(parsed, zone)


def is_url_key(key: str) -> bool:
    """Whether a value of an entry's ``extra`` under ``key`` is a URL (``thumbnail_loc``,
    ``uploader_url``, ``href``): written as a URL, or not at all."""
    return key in URL_KEYS or key.endswith(URL_KEY_ENDINGS)


# What an hreflang may say: a language tag, or x-default (the page for everyone else).
HREFLANG = re.compile(f"{LANGUAGE_TAG}|x-default")
URL_KEYS = frozenset({"loc", "url", "href", "src"})
URL_KEY_ENDINGS = ("_loc", "_url", "_href", "_src")
# The image origins whose judgement an ``EntryRules`` remembers: a site's images are on a
# few hosts, and content that names a host per image costs no more than this memory.
REMEMBERED_ORIGINS = 1000


@dataclass(frozen=True)
class EntryRules:
    """What every stored entry must be, whichever provider or plugin made it (S-208,
    S-403, S-404): its path a path on the site, its images absolute http(s) URLs on the
    site (its origin) or an allowed image host, the text of its ``extra`` valid XML characters
    and the URLs there (``is_url_key``) valid http(s) URLs, all in normal form."""

    site_url: str
    image_sources: ImageSources
    # ``image_sources.allow`` of each scheme and authority met (all it judges a URL by):
    # most entries of a site have their images on one or two hosts.
    _allowed: dict[str, bool] = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def of(cls, site_url: str, allowed_image_hosts: Iterable[str]) -> EntryRules:
        return cls(site_url, ImageSources.of(site_url, allowed_image_hosts))

    def apply(self, entry: Entry) -> tuple[Entry | None, list[str]]:
        """``entry`` as it may be stored (itself when nothing changes; None: it cannot be
        listed), and what was wrong with it, in words."""
        problems: list[str] = []
        try:
            path = normal_path(entry.path)
            if len(self.site_url) + len(path) > MAX_URL_LENGTH:
                raise UnsafeUrl(f"is longer than {MAX_URL_LENGTH:,} characters with the site URL")
        except UnsafeUrl as problem:
            return None, [f"its path {_shown(entry.path)} {problem}"]
        images = self._images(entry.images, problems)
        alternates = self._alternates(entry.alternates, problems)
        extra = entry.extra
        if extra is not None:
            try:
                extra = _clean_value(extra, "")
            except UnsafeUrl as problem:
                return None, [*problems, str(problem)]
        if (path, images, extra, alternates) == (
            entry.path,
            entry.images,
            entry.extra,
            entry.alternates,
        ):
            return entry, problems
        return replace(
            entry, path=path, images=images, extra=extra, alternates=alternates
        ), problems

    def _alternates(
        self, alternates: list[list[str]] | None, problems: list[str]
    ) -> list[list[str]] | None:
        """Each [hreflang, path] with a language tag (or x-default) and a path on the site;
        the others are left out."""
        if alternates is None:
            return None
        kept: list[list[str]] = []
        for hreflang, path in alternates:
            if not HREFLANG.fullmatch(hreflang) or len(hreflang) > MAX_LANGUAGE_TAG:
                problems.append(f"hreflang {_shown(hreflang)} is not a language tag")
                continue
            try:
                normal = normal_path(path)
            except UnsafeUrl as problem:
                problems.append(f"alternate {_shown(path)} {problem}")
                continue
            if len(self.site_url) + len(normal) > MAX_URL_LENGTH:
                problems.append(f"alternate {_shown(path)} is too long with the site URL")
                continue
            kept.append([hreflang, normal])
        return kept or None

    def _images(self, images: list[str], problems: list[str]) -> list[str]:
        kept: dict[str, None] = {}
        for image in images:
            try:
                url = normal_url(image).partition("#")[0]
            except UnsafeUrl as problem:
                problems.append(f"image {_shown(image)} {problem}")
                continue
            if not self._allows(url):
                problems.append(f"image {_shown(image)} is on a host images may not come from")
                continue
            kept.setdefault(url, None)
            if len(kept) >= MAX_IMAGES_PER_URL:
                break
        return list(kept)

    def _allows(self, url: str) -> bool:
        """Whether ``image_sources`` allows ``url`` (in normal form), asked once per
        scheme and authority: what comes before the first "/" after "://"."""
        end = url.find("/", url.find("://") + 3)
        origin = url if end < 0 else url[:end]
        allowed = self._allowed.get(origin)
        if allowed is None:
            allowed = self.image_sources.allow(url)
            if len(self._allowed) < REMEMBERED_ORIGINS:
                self._allowed[origin] = allowed
        return allowed


def _clean_value(value: Any, key: str) -> Any:
    """``value`` (JSON) with its text cleaned and the URLs under URL keys normalised;
    raises ``UnsafeUrl`` for a URL or a number that cannot be written."""
    if isinstance(value, str):
        if not is_url_key(key):
            return clean_text(value)
        try:
            return normal_url(value)
        except UnsafeUrl as problem:
            raise UnsafeUrl(f"its {key} {_shown(value)} {problem}") from None
    if isinstance(value, dict):
        return {name: _clean_value(item, str(name)) for name, item in value.items()}
    if isinstance(value, list | tuple):
        return [_clean_value(item, key) for item in value]
    if isinstance(value, float) and not math.isfinite(value):
        raise UnsafeUrl(f"its {key} is {value}, which no document can carry")
    return value


def _shown(value: str, limit: int = 80) -> str:
    """``value`` for a log line: quoted, escaped, cut short."""
    return repr(value[:limit] + ("…" if len(value) > limit else ""))
