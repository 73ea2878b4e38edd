"""Strict decoding of JSON at the edge: API bodies and import lines (S-703, S-704).

JSON text is UTF-8 (RFC 8259, section 8.1): a byte order mark, UTF-16 or UTF-32, and bytes
that are not UTF-8 are refused, saying which. Once decoded, every string and every object
key must be text that XML 1.0 can carry (its ``Char`` production), because what is stored
ends up in sitemaps and PostgreSQL cannot store U+0000: no C0 control character but tab,
LF and CR, no lone surrogate, no U+FFFE or U+FFFF. The check runs on the decoded value, so
``"\\u0000"`` and ``"\\ud800"`` are caught as surely as the raw bytes ``ED A0 80``, and the
problem names the field.
"""

from __future__ import annotations

import codecs
import json
from typing import Any

from ..content.sanitize import XML_INVALID
from ..errors import FieldProblem

# Longest first: the UTF-32 little-endian mark starts with the UTF-16 one.
_BYTE_ORDER_MARKS = (
    (codecs.BOM_UTF32_LE, "UTF-32"),
    (codecs.BOM_UTF32_BE, "UTF-32"),
    (codecs.BOM_UTF8, "UTF-8"),
    (codecs.BOM_UTF16_LE, "UTF-16"),
    (codecs.BOM_UTF16_BE, "UTF-16"),
)


class NotUTF8(ValueError):
    """The bytes are not UTF-8 (or start with a byte order mark)."""


class NotJSON(ValueError):
    """UTF-8 text that is not one JSON value."""


def decode_json(raw: bytes) -> Any:
    """The JSON value that the UTF-8 bytes ``raw`` hold.

    Raises NotUTF8 or NotJSON with a message that completes "the body ..." or "line 3 ...".
    Lone surrogates (escaped or encoded) are decoded, for ``text_problems`` to name.
    """
    for mark, encoding in _BYTE_ORDER_MARKS:
        if raw.startswith(mark):
            raise NotUTF8(
                f"starts with a {encoding} byte order mark: send JSON as UTF-8, "
                "without a byte order mark (RFC 8259)"
            )
    if b"\x00" in raw[:4]:
        # JSON begins with an ASCII character: one or three NUL bytes beside it are the
        # other encodings RFC 4627 told apart; UTF-8 JSON has no NUL byte anywhere.
        encoding = "UTF-32" if raw[:4].count(0) == 3 else "UTF-16"
        raise NotUTF8(f"looks like {encoding}: send JSON as UTF-8 (RFC 8259)")
    try:
        # "surrogatepass" decodes the bytes of a lone surrogate (ED A0 80), which strict
        # UTF-8 refuses without saying where it is: text_problems names its field.
        text = raw.decode("utf-8", "surrogatepass")
    except UnicodeDecodeError as exc:
        raise NotUTF8(
            f"is not UTF-8: byte 0x{raw[exc.start]:02x} at offset {exc.start} "
            "cannot be decoded (RFC 8259)"
        ) from None
    try:
        return json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise NotJSON(f"is not valid JSON: {exc}"[:300]) from None


def character_problem(text: str) -> str | None:
    """What is wrong with the characters of ``text``, or None when XML can carry them all."""
    found = XML_INVALID.search(text)
    if found is None:
        return None
    code = ord(found.group())
    if code == 0:
        what = "the NUL character (U+0000)"
    elif 0xD800 <= code <= 0xDFFF:
        what = f"a lone surrogate (U+{code:04X}), which is not a character"
    elif code < 0x20:
        what = f"the control character U+{code:04X}"
    else:
        what = f"the noncharacter U+{code:04X}"
    return f"must not contain {what}: XML 1.0 cannot carry it"


def _printable(key: str) -> str:
    """A key as a field name: the characters XML cannot carry written as \\uXXXX."""
    return XML_INVALID.sub(lambda match: f"\\u{ord(match.group()):04x}", key)


def text_problems(value: Any) -> list[FieldProblem]:
    """Strings and keys of a decoded JSON value with characters XML 1.0 cannot carry.

    Fields are named by their path (``images/1``, ``post/title``). The walk is iterative:
    the JSON may be nested as deep as it parses.
    """
    problems = []
    pending: list[tuple[str | None, Any]] = [(None, value)]
    while pending:
        path, item = pending.pop()
        if isinstance(item, str):
            message = character_problem(item)
            if message:
                problems.append(FieldProblem(path, message))
        elif isinstance(item, dict):
            for key, child in item.items():
                name = f"{path}/{_printable(key)}" if path else _printable(key)
                message = character_problem(key)
                if message:
                    problems.append(FieldProblem(name, f"its name {message}"))
                pending.append((name, child))
        elif isinstance(item, list):
            pending.extend((f"{path}/{n}" if path else str(n), c) for n, c in enumerate(item))
    return sorted(problems, key=lambda problem: problem.field or "")
