"""What text and which URLs may reach a document, in one place (S-404, S-208, S-403).

Every string a sitemap or its page for people shows passes through here, wherever it
came from (fields, post content, oEmbed answers, plugins): text loses the characters XML
1.0 cannot carry; a URL is parsed and written again in normal form (RFC 3986: scheme and
host in lower case, the host checked and IDNA-encoded, the port checked, whatever must be
percent-encoded encoded) or refused with the reason, never emitted broken.
"""

from __future__ import annotations

import ipaddress
import re
import unicodedata
from functools import lru_cache
from urllib.parse import urljoin, urlsplit

import idna

from ..models.content import MAX_URL_LENGTH

# Everything XML 1.0 cannot carry: C0 controls but tab/LF/CR, lone surrogates, U+FFFE/F.
XML_INVALID = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
# Removed from anywhere in a URL, as browsers do (a URL split across lines in an attribute).
_URL_BREAKS = str.maketrans("", "", "\t\n\r")
# RFC 3986: unreserved and sub-delims, and what each component may hold besides.
_UNRESERVED = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~"
_PATH_SAFE = frozenset(_UNRESERVED + "!$&'()*+,;=" + ":@/")
_QUERY_SAFE = _PATH_SAFE | {"?"}
_UNRESERVED_SET = frozenset(_UNRESERVED)
_ESCAPES = re.compile(r"(?:%[0-9A-Fa-f]{2})+")
_NOTHING_TO_ENCODE = {
    safe: re.compile("(?:[" + re.escape("".join(sorted(safe))) + "]|%[0-9A-Fa-f]{2})*")
    for safe in (_PATH_SAFE, _QUERY_SAFE)
}
# The common case, nothing to encode or check but the host and port: no need to rebuild.
_PLAIN_URL = re.compile(
    r"(https?)://([a-z0-9._-]+)(?::([0-9]{1,5}))?"
    r"(?:[/?][A-Za-z0-9\-._~!$&'()*+,;=:@/?]*(?:%[0-9A-Fa-f]{2}[A-Za-z0-9\-._~!$&'()*+,;=:@/?]*)*)?"
)
_LABEL = re.compile(r"[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?")
MAX_HOST_LENGTH = 253  # RFC 1035, without the trailing dot


class UnsafeUrl(ValueError):
    """A URL that cannot be written into a document; ``str()`` says why."""


def clean_text(value: str) -> str:
    """``value`` without the characters XML 1.0 cannot carry (escaping is the template's)."""
    return XML_INVALID.sub("", value)


def normal_url(value: str, base: str | None = None) -> str:
    """``value`` as an absolute http(s) URL in normal form, resolved against ``base`` when
    relative; raises ``UnsafeUrl`` when it cannot be one."""
    text = clean_text(value).translate(_URL_BREAKS).strip(" ")
    if not text:
        raise UnsafeUrl("is empty")
    # Escapes may need normalizing (``_encode``): not plain.
    plain = _PLAIN_URL.fullmatch(text) if "/." not in text and "%" not in text else None
    if plain is not None and not (plain.group(3) or "").startswith("0"):
        _port(plain.group(3) or "")
        _host(plain.group(2))
        return _short(text)
    if base is not None:
        try:
            text = urljoin(base, text)
        except ValueError as error:
            raise UnsafeUrl(f"is not a valid URL ({error})") from None
    try:
        parts = urlsplit(text)
    except ValueError as error:
        raise UnsafeUrl(f"is not a valid URL ({error})") from None
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https") or not text[len(scheme) + 1 :].startswith("//"):
        raise UnsafeUrl("is not an absolute http(s) URL")
    host, port = _authority(parts.netloc)
    url = f"{scheme}://{host}{':' + port if port else ''}{_encode(parts.path, _PATH_SAFE)}"
    if parts.query:
        url += "?" + _encode(parts.query, _QUERY_SAFE)
    if parts.fragment:
        url += "#" + _encode(parts.fragment, _QUERY_SAFE)
    return _short(url)


def clean_url(value: str | None, base: str | None = None) -> str | None:
    """``normal_url``, or None for a value that is not a URL we can write."""
    if not value:
        return None
    try:
        return normal_url(value, base)
    except UnsafeUrl:
        return None


def url_problem(value: str) -> str | None:
    """Why ``value`` cannot be an absolute http(s) URL in a document, or None."""
    try:
        normal_url(value)
    except UnsafeUrl as problem:
        return str(problem)
    return None


def normal_path(path: str) -> str:
    """A path on the site (``/a/b/?page=2``) in normal form; raises ``UnsafeUrl`` for one
    that is not a path on the site (``//host/``, ``http:…``, ``a/b``)."""
    text = clean_text(path).translate(_URL_BREAKS)
    if not text.startswith("/") or text.startswith("//") or text.startswith("/\\"):
        raise UnsafeUrl("is not a path on the site")
    path_part, question, query = text.partition("?")
    if "#" in path_part or "#" in query:
        raise UnsafeUrl("has a fragment")
    encoded = _encode(path_part, _PATH_SAFE)
    if question:
        encoded += "?" + _encode(query, _QUERY_SAFE)
    return encoded


def normal_host(host: str) -> str | None:
    """A host name as URLs carry it after ``normal_url`` (lower case, IDNA), or None."""
    try:
        return _host(host.strip().lower())
    except UnsafeUrl:
        return None


def host_of(url: str) -> str:
    """The host of a URL in normal form (``normal_url``'s output)."""
    authority = url.split("://", 1)[-1].split("/", 1)[0].split("?", 1)[0].split("#", 1)[0]
    if authority.startswith("["):
        return authority.partition("]")[0] + "]"
    return authority.partition(":")[0]


# The port a URL means when it names none.
DEFAULT_PORTS = {"http": "80", "https": "443"}


def origin_of(url: str) -> str:
    """The origin of a URL in normal form (``normal_url``'s output): its scheme, host and
    port, the port written even when it is the scheme's default (``http://a.test:80``),
    so two URLs of one server have the same origin, and two ports of a host do not."""
    scheme, _, rest = url.partition("://")
    host = host_of(url)
    authority = rest.split("/", 1)[0].split("?", 1)[0].split("#", 1)[0]
    port = authority[len(host) :].removeprefix(":") or DEFAULT_PORTS.get(scheme.lower(), "")
    return f"{scheme.lower()}://{host}:{port}"


def _short(url: str) -> str:
    if len(url) > MAX_URL_LENGTH:
        raise UnsafeUrl(f"is longer than {MAX_URL_LENGTH:,} characters")
    return url


def _authority(netloc: str) -> tuple[str, str]:
    """The normal host and port (``""`` for none) of ``netloc``."""
    if "@" in netloc:
        raise UnsafeUrl("has user information before its host")
    if netloc.startswith("["):
        host, bracket, rest = netloc.partition("]")
        host += bracket
        if rest and not rest.startswith(":"):
            raise UnsafeUrl("has a malformed host")
        port = rest[1:]
    else:
        host, _, port = netloc.partition(":")
    return _host(host.lower()), _port(port)


def _port(port: str) -> str:
    if not port:
        return ""
    if not (port.isascii() and port.isdigit()) or not 0 < int(port) <= 65535:
        raise UnsafeUrl(f"has an invalid port ({port[:20]!r})")
    return str(int(port))


@lru_cache(maxsize=4096)
def _host(host: str) -> str:
    """``host`` (lower case) in normal form: an IP address or an IDNA domain name."""
    if host.startswith("["):
        try:
            if not host.endswith("]"):
                raise ValueError(host)
            address = ipaddress.IPv6Address(host[1:-1])
        except ValueError:
            raise UnsafeUrl("has an invalid IPv6 address") from None
        if address.scope_id:
            raise UnsafeUrl("has an IPv6 zone")
        return f"[{address.compressed}]"
    if not host:
        raise UnsafeUrl("has no host")
    if not host.isascii() or "xn--" in host:
        try:
            host = idna.encode(host, uts46=True).decode("ascii")
        except (idna.IDNAError, UnicodeError, ValueError) as error:
            raise UnsafeUrl(f"has an invalid host name ({error})") from None
    labels = host.removesuffix(".").split(".")
    if len(host) > MAX_HOST_LENGTH or not all(_LABEL.fullmatch(label) for label in labels):
        raise UnsafeUrl("has an invalid host name")
    if labels[-1].isdigit():  # an IPv4 address, or nothing (WHATWG reads it as one)
        try:
            ipaddress.IPv4Address(host)
        except ValueError:
            raise UnsafeUrl("has an invalid IPv4 address") from None
    return host


def _encode(component: str, safe: frozenset[str]) -> str:
    """``component`` in RFC 3986's normal form: every character not allowed there
    percent-encoded (UTF-8), escapes in upper case, an escape of an unreserved character
    decoded ("%7e" → "~"), non-ASCII text in NFC, so that one URL has one spelling
    ("/über/", "/%c3%bcber/" and "/u%CC%88ber/" are all "/%C3%BCber/"). An escape of
    anything else stays one ("%2F" is not "/"); a ``%`` that starts none is encoded."""
    if "%" not in component and _NOTHING_TO_ENCODE[safe].fullmatch(component):
        return component
    out: list[str] = []
    # What is written as itself when ASCII and encoded when not, put in NFC together (a
    # combining mark composes with the letter before it, whichever way each came).
    text: list[str] = []

    def flush() -> None:
        if text:
            for char in unicodedata.normalize("NFC", "".join(text)):
                if char < "\x80":
                    out.append(char)
                else:
                    out.extend(f"%{byte:02X}" for byte in char.encode("utf-8"))
            text.clear()

    def escaped(code: int) -> None:
        flush()
        out.append(f"%{code:02X}")

    index, length = 0, len(component)
    while index < length:
        char = component[index]
        run = _ESCAPES.match(component, index) if char == "%" else None
        if run is not None:
            index = run.end()
            decoded = bytes.fromhex(run.group().replace("%", "")).decode("utf-8", "surrogateescape")
            for one in decoded:
                if "\udc80" <= one <= "\udcff":  # a byte that is not UTF-8: kept
                    escaped(ord(one) - 0xDC00)
                elif one < "\x80" and one not in _UNRESERVED_SET:
                    escaped(ord(one))
                else:
                    text.append(one)
            continue
        if char < "\x80" and char not in safe:
            escaped(ord(char))
        else:
            text.append(char)
        index += 1
    flush()
    return "".join(out)
