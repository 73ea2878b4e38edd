"""What counts as a valid URL, in one place (the API formats and the services use it)."""

from __future__ import annotations

import re
from urllib.parse import urlsplit

from ..documents import READ_PATH
from ..models.content import MAX_URL_LENGTH


def server_path_problem(path: str, indexnow_key: str | None = None) -> str | None:
    """Why ``path`` is the server's own and no content may have it (a document of the
    read path, the admin API, the IndexNow key file), or None."""
    if READ_PATH.match(path):
        return "is a document the server itself serves (a sitemap, robots.txt, a stylesheet)"
    if path == "/api" or path.startswith("/api/"):
        return "is under /api/, the admin API"
    if indexnow_key and path == f"/{indexnow_key}.txt":
        return "is the IndexNow key file"
    return None


_FORBIDDEN = re.compile(r"[\x00-\x20\x7f<>\"{}|\\^`\ufffe\uffff]")


def http_url_problem(value: str) -> str | None:
    """Why ``value`` is not an absolute http(s) URL we can put in a sitemap, or None."""
    if len(value) > MAX_URL_LENGTH:
        return f"is longer than {MAX_URL_LENGTH} characters"
    if _FORBIDDEN.search(value):
        return "contains spaces, control characters or characters that must be escaped"
    try:
        parts = urlsplit(value)
        parts.port  # noqa: B018 - raises ValueError on a bad port
    except ValueError:
        return "is not a valid URL"
    if parts.scheme not in ("http", "https"):
        return "must be an absolute URL starting with http:// or https://"
    if not parts.hostname:
        return "has no host name"
    return None


def is_http_url(value: object) -> bool:
    return not isinstance(value, str) or http_url_problem(value) is None


def is_image_url(value: object) -> bool:
    """An absolute http(s) URL, or a path on the site itself ("/uploads/a.jpg")."""
    if not isinstance(value, str):
        return True
    if value.startswith("/") and not value.startswith("//"):
        return len(value) <= MAX_URL_LENGTH and not _FORBIDDEN.search(value)
    return http_url_problem(value) is None


def is_site_path(value: object) -> bool:
    """A path on the site: starts with "/", no query string or fragment."""
    if not isinstance(value, str):
        return True
    return (
        value.startswith("/")
        and not value.startswith("//")
        and len(value) <= MAX_URL_LENGTH
        and not _FORBIDDEN.search(value)
        and "?" not in value
        and "#" not in value
    )
