"""Text that never breaks the XML (S-404) and dates in W3C format (S-402)."""

from __future__ import annotations

import re
from datetime import UTC, datetime, tzinfo

# Characters XML 1.0 does not allow (C0 controls but tab/LF/CR, surrogates, U+FFFE/F).
_INVALID = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")
_ESCAPES = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&apos;"})


def valid_chars(value: str) -> str:
    """``value`` without the characters XML 1.0 cannot carry (for templates that escape)."""
    return _INVALID.sub("", value)


def xml_text(value: str) -> str:
    """``value`` escaped for element content or an attribute, invalid characters removed."""
    return _INVALID.sub("", value).translate(_ESCAPES)


def w3c(value: datetime | None, zone: tzinfo = UTC) -> str | None:
    """``2019-10-21T12:37:01+02:00``: seconds precision, the offset of ``zone`` (the
    site's time zone, as WordPress writes them)."""
    if value is None:
        return None
    return value.astimezone(zone).replace(microsecond=0).isoformat()


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
