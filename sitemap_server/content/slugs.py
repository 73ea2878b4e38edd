"""Slugs, WordPress style: what one may hold, and one made from a title.

A slug is kept as text, decoded and in NFC ("über-uns", "日本語のページ"), and written
percent-encoded (UTF-8) in every URL (``permalinks``). It holds lower-case ASCII letters,
digits, "-" and "_", and the letters, marks and digits of every other script that are not
upper or title case, and starts with a letter or digit.

A slug made from a title (``slugify``) is WordPress's ``sanitize_title``: tags and
entities out, accented Latin letters without their accents ("Héllo" → "hello", as
WordPress's ``remove_accents``), the letters of other scripts kept, the rest a "-".
"""

from __future__ import annotations

import html
import re
import unicodedata
from collections.abc import Callable

from ..models.content import MAX_SLUG_LENGTH

# The Unicode categories a non-ASCII slug character may have: letters that are not upper
# or title case (Ll, Lm, Lo), combining marks (Mn, Mc) and digits (Nd, Nl, No).
_SLUG_CATEGORIES = frozenset({"Ll", "Lm", "Lo", "Mn", "Mc", "Nd", "Nl", "No"})
_ASCII_SLUG = frozenset("abcdefghijklmnopqrstuvwxyz0123456789-_")
_TAG = re.compile(r"<[^>]*>")
_DASHES = re.compile(r"-{2,}")
# Latin letters with no decomposition, as WordPress's remove_accents writes them.
_LATIN = {"ß": "ss", "æ": "ae", "œ": "oe", "ø": "o", "đ": "d", "ð": "d", "þ": "th", "ł": "l"}

SLUG_RULE = 'lower-case letters of any script, digits, "-" and "_", starting with a letter or digit'


def is_slug(value: object) -> bool:
    """Whether ``value`` (once in NFC) is a slug; anything but a string passes (the
    schema's ``type`` says what it must be)."""
    if not isinstance(value, str):
        return True
    text = unicodedata.normalize("NFC", value)
    if not text or not _starts_a_slug(text[0]):
        return False
    return all(
        char in _ASCII_SLUG if char < "\x80" else unicodedata.category(char) in _SLUG_CATEGORIES
        for char in text
    )


def _starts_a_slug(char: str) -> bool:
    """A letter or a digit (a mark or "-" cannot begin a slug)."""
    if char < "\x80":
        return char in _ASCII_SLUG and char not in "-_"
    return unicodedata.category(char)[0] in "LN" and unicodedata.category(char) in _SLUG_CATEGORIES


def normal_slug(value: str) -> str:
    """A slug as it is stored: NFC (``is_slug`` has accepted it)."""
    return unicodedata.normalize("NFC", value)


def _slug_char(char: str) -> str:
    if char < "\x80":
        return char if char.isalnum() else "-"
    if char in _LATIN:
        return _LATIN[char]
    # é → e, ² → 2, ﬁ → fi: what is left of its compatibility decomposition without the
    # combining marks, when that is ASCII letters and digits.
    bare = "".join(c for c in unicodedata.normalize("NFKD", char) if not unicodedata.combining(c))
    if bare.isascii() and bare.isalnum():
        return bare.lower()
    return char if unicodedata.category(char) in _SLUG_CATEGORIES else "-"


def slugify(text: str, fallback: str) -> str:
    """A slug made from ``text`` (a title or a name), or ``fallback`` when nothing of it
    is left: "Tricky <b>bold</b>" → "tricky-bold", "Über uns" → "uber-uns"."""
    plain = html.unescape(_TAG.sub("", text))
    lowered = unicodedata.normalize("NFC", plain).lower()
    slug = unicodedata.normalize("NFC", "".join(map(_slug_char, lowered)))
    slug = _DASHES.sub("-", slug)
    start = next((i for i, char in enumerate(slug) if _starts_a_slug(char)), len(slug))
    slug = slug[start : start + MAX_SLUG_LENGTH - 10].rstrip("-_")
    return slug if is_slug(slug) else fallback


def unique_slug(base: str, taken: Callable[[str], bool]) -> str:
    """``base``, or ``base-2``, ``base-3`` … whichever is free first."""
    candidate, n = base, 1
    while taken(candidate):
        n += 1
        candidate = f"{base}-{n}"
    return candidate
