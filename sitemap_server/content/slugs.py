"""Slugs made from titles, WordPress style: "Héllo, World!" → "hello-world"."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable

from ..models.content import MAX_SLUG_LENGTH

_NOT_SLUG = re.compile(r"[^a-z0-9]+")


def slugify(text: str, fallback: str) -> str:
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    slug = _NOT_SLUG.sub("-", ascii_text.lower()).strip("-")
    return slug[: MAX_SLUG_LENGTH - 10].rstrip("-") or fallback


def unique_slug(base: str, taken: Callable[[str], bool]) -> str:
    """``base``, or ``base-2``, ``base-3`` … whichever is free first."""
    candidate, n = base, 1
    while taken(candidate):
        n += 1
        candidate = f"{base}-{n}"
    return candidate
