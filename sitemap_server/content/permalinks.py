"""Permalinks (SPEC S-103, S-104, S-105): the one place that turns content into URLs."""

from __future__ import annotations

import contextlib
import re
from collections.abc import Sequence
from datetime import UTC, datetime, tzinfo
from typing import Any
from urllib.parse import quote

from .sanitize import normal_path
from .urls import is_site_path

PATTERN_FIELDS = (
    "slug",
    "path",
    "id",
    "year",
    "month",
    "day",
    "hour",
    "minute",
    "second",
    "type",
    "author",
    "category",
)
# The fields of the post's date, as WordPress writes them: its local time in the site's
# time zone (``post_date``, not ``post_date_gmt``).
DATE_FIELDS = frozenset({"year", "month", "day", "hour", "minute", "second"})
# The {category} of a post in no category: the slug of WordPress's default category (a
# WordPress post is always in one; a post of another type may be in none).
NO_CATEGORY = "uncategorized"
_EMPTY_SEGMENTS = re.compile(r"//+")
_FIELD = re.compile(r"\{([^{}]*)\}")


def pattern_problem(pattern: str) -> str | None:
    """Why a post type's permalink pattern is unusable, or None."""
    if not pattern.startswith("/"):
        return "must start with /"
    fields = _FIELD.findall(pattern)
    unknown = sorted(set(fields) - set(PATTERN_FIELDS))
    if unknown:
        return f"unknown field {{{unknown[0]}}}; use " + ", ".join(
            f"{{{f}}}" for f in PATTERN_FIELDS
        )
    if not {"slug", "path", "id"} & set(fields):
        return "must contain {slug}, {path} or {id} so that every post gets its own URL"
    if "?" in pattern or "#" in pattern:
        return "must not contain a query string or fragment"
    # What is left once the fields are filled in must be a valid path on the site.
    if not is_site_path(_FIELD.sub("x", pattern)):
        return "must be a path on the site: no spaces, stray braces or characters to escape"
    return None


def post_path(
    pattern: str,
    *,
    post_id: int,
    slug: str,
    post_type: str,
    date: datetime | None,
    ancestors: Sequence[str] = (),
    explicit_path: str | None = None,
    zone: tzinfo = UTC,
    author: str = "",
    category: Sequence[str] = (),
) -> str:
    """The site-relative path of a post.

    ``ancestors`` are the slugs of the post's parents, outermost first (pages). ``date`` is
    the publication time (drafts without one use their last change), whose fields are
    its local time in ``zone``, the site's time zone, as WordPress's are. ``author`` is
    its author's slug; ``category`` the slugs of its first category (the lowest id, as
    WordPress takes it) and of that one's parents, outermost first. An explicit path
    stored on the post wins over the pattern. A field with no value (a post without an
    author) leaves no empty segment.
    """
    if explicit_path:
        return normal_path(explicit_path)
    local = date
    if date is not None:
        # A date the zone would push past the calendar (only stored by hand: the API
        # takes 1000 to 9999) keeps its UTC fields; its entry is left out when rendered.
        with contextlib.suppress(OverflowError):
            local = date.astimezone(zone)
    values = {
        "slug": segment(slug),
        "path": "/".join(map(segment, [*ancestors, slug])),
        "id": str(post_id),
        "type": post_type,
        **date_fields(local),
        "author": segment(author) if author else "",
        "category": "/".join(map(segment, category)) if category else NO_CATEGORY,
    }
    path = _FIELD.sub(lambda m: values[m.group(1)], pattern)
    return _EMPTY_SEGMENTS.sub("/", path) if "//" in path else path


def date_fields(local: datetime | None) -> dict[str, str]:
    """The date's fields of a permalink (``local``: the date in the site's time zone),
    empty for none."""
    if local is None:
        return dict.fromkeys(DATE_FIELDS, "")
    return {
        "year": f"{local.year:04d}",
        "month": f"{local.month:02d}",
        "day": f"{local.day:02d}",
        "hour": f"{local.hour:02d}",
        "minute": f"{local.minute:02d}",
        "second": f"{local.second:02d}",
    }


def fields_of(pattern: str | None) -> set[str]:
    """The fields ``pattern`` holds (``{author}`` …)."""
    return set(_FIELD.findall(pattern or ""))


def dated(pattern: str | None) -> bool:
    """Whether ``pattern`` holds a field of the date (its URLs move with the time zone)."""
    return not DATE_FIELDS.isdisjoint(fields_of(pattern))


def absolute(site_url: str, path: str) -> str:
    """``path`` (starting with "/") on the site, keeping the site's own path prefix."""
    return site_url.rstrip("/") + path


def part_url(permalink: str, part: int) -> str:
    """Part ``part`` ≥ 2 of a multi-part post (S-103): ``{permalink}{n}/``."""
    base = permalink if permalink.endswith("/") else permalink + "/"
    return f"{base}{part}/"


def segment(slug: str) -> str:
    """A slug as a URL's path segment: percent-encoded UTF-8 ("über" → "%C3%BCber"), the
    way browsers send it and WordPress writes it (upper-case hex, RFC 3986's normal form)."""
    return slug if slug.isascii() else quote(slug, safe="")


def author_path(slug: str) -> str:
    return f"/author/{segment(slug)}/"


def term_path(archive_base: str, slugs: Sequence[str]) -> str:
    """A term archive: ``/{base}/{parent}/{child}/`` for hierarchical taxonomies."""
    base = archive_base.strip("/")
    prefix = f"/{base}" if base else ""
    return f"{prefix}/{'/'.join(map(segment, slugs))}/"


def home_path() -> str:
    return "/"


def is_static_front_page(settings: Any, post_id: int) -> bool:
    """Whether the post ``post_id`` is the site's front page (``settings``: the site's
    ``SiteSettings``, showing a static page on the front): its URL is the home page's."""
    return bool(settings.front_page == "page" and post_id == settings.front_page_id)
