"""The requests to search engines, and what their answers mean.

A ping is a GET of the target's URL; an IndexNow submission is a POST of
``{host, key, keyLocation, urlList}``. Every answer is sorted into one of three outcomes:
sent, retry later (no connection, a timeout, 429, 5xx) or give up (any other 4xx: asking
again would get the same answer).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from email.utils import parsedate_to_datetime
from functools import cache
from importlib import metadata
from typing import Any

import requests

from ..models.notifications import FAILED, INDEXNOW, SENT

RETRY = "retry"

# IndexNow's documented answers (https://www.indexnow.org/documentation#response).
INDEXNOW_REFUSALS = {
    400: "bad request: the submission's format is invalid",
    403: "forbidden: the key is not valid (the key file was not found or does not match)",
    422: "unprocessable: URLs do not belong to the host, or the key does not match the schema",
}


@dataclass(frozen=True)
class Result:
    outcome: str  # SENT, RETRY or FAILED
    http_status: int | None = None
    error: str | None = None
    # What the server asked for in Retry-After (429, 503), in seconds.
    retry_after: float | None = None
    duration_ms: int = 0


@dataclass(frozen=True)
class Request:
    """What to send: made from a claimed notification and the current configuration."""

    channel: str
    url: str
    json: dict[str, Any] | None = None


def user_agent(site_url: str) -> str:
    return f"sitemap-server/{_version()} (+{site_url})"


@cache
def _version() -> str:
    """Read from the installed distribution once, not on every send."""
    try:
        return metadata.version("sitemap-server")
    except metadata.PackageNotFoundError:  # pragma: no cover - run from a bare checkout
        return "dev"


def send(http: requests.Session, request: Request, timeout: float) -> Result:
    started = time.monotonic()
    try:
        if request.json is None:
            response = http.get(request.url, timeout=timeout)
        else:
            response = http.post(request.url, json=request.json, timeout=timeout)
        response.close()
    except requests.RequestException as exc:
        return Result(RETRY, error=_describe(exc), duration_ms=_since(started))
    result = judge(request.channel, response.status_code, response.reason)
    return Result(
        result.outcome,
        response.status_code,
        result.error,
        retry_after=_retry_after(response.headers.get("Retry-After")),
        duration_ms=_since(started),
    )


def judge(channel: str, status: int, reason: str | None = None) -> Result:
    """The outcome of an HTTP answer."""
    if channel == INDEXNOW and status in (200, 202):
        return Result(SENT, status)
    if channel != INDEXNOW and 200 <= status < 300:
        return Result(SENT, status)
    if status == 429:
        return Result(RETRY, status, "HTTP 429: too many requests")
    if status >= 500:
        return Result(RETRY, status, f"HTTP {status} {reason or ''}".rstrip())
    if channel == INDEXNOW and status in INDEXNOW_REFUSALS:
        return Result(FAILED, status, f"HTTP {status}: {INDEXNOW_REFUSALS[status]}")
    return Result(FAILED, status, f"HTTP {status} {reason or ''}".rstrip())


def _describe(exc: requests.RequestException) -> str:
    if isinstance(exc, requests.Timeout):
        return f"timed out: {exc}"
    if isinstance(exc, requests.ConnectionError):
        return f"could not connect: {exc}"
    return f"{type(exc).__name__}: {exc}"


def _retry_after(value: str | None) -> float | None:
    if not value:
        return None
    if value.strip().isdigit():
        return float(value.strip())
    try:
        moment = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, moment.timestamp() - time.time())


def _since(started: float) -> int:
    return int((time.monotonic() - started) * 1000)
