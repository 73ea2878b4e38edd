"""Sending a channel's request, and sorting the answer into sent, retry later or give up.

The channel (``channels.Channel``) makes the request and judges an HTTP answer; what no
answer means is decided here: no connection or a timeout is retried later.
"""

from __future__ import annotations

import time
from email.utils import parsedate_to_datetime
from functools import cache
from importlib import metadata
from typing import TYPE_CHECKING

from ..models.notifications import FAILED
from .channels import RETRY, Channel, OutgoingRequest, Result

if TYPE_CHECKING:
    import requests


def user_agent(site_url: str) -> str:
    return f"sitemap-server/{_version()} (+{site_url})"


@cache
def _version() -> str:
    """Read from the installed distribution once, not on every send."""
    try:
        return metadata.version("sitemap-server")
    except metadata.PackageNotFoundError:  # pragma: no cover - run from a bare checkout
        return "dev"


def send(
    http: requests.Session, channel: Channel, request: OutgoingRequest, timeout: float
) -> Result:
    # Imported by the first send: a process that sends nothing does without them (~16 MB).
    import requests
    import urllib3

    started = time.monotonic()
    timeout = request.timeout or timeout
    answer = None
    try:
        method = request.method or ("GET" if request.json is None else "POST")
        response = http.request(
            method,
            request.url,
            params=request.params,
            json=request.json,
            headers=request.headers,
            timeout=timeout,
            stream=True,
        )
        with response:
            if request.answer_bytes and 200 <= response.status_code < 300:
                answer = response.raw.read(request.answer_bytes + 1, decode_content=True)
    except (requests.RequestException, urllib3.exceptions.HTTPError) as exc:
        return Result(RETRY, error=_describe(exc), duration_ms=_since(started))
    result = channel.judge(response.status_code, response.reason)
    if answer is not None and len(answer) > request.answer_bytes:
        result = Result(
            FAILED, result.http_status, f"the answer is larger than {request.answer_bytes:,} bytes"
        )
    return Result(
        result.outcome,
        response.status_code,
        result.error,
        retry_after=retry_after(response.headers.get("Retry-After")),
        duration_ms=_since(started),
        answer=answer,
    )


def _describe(exc: Exception) -> str:
    import requests

    if isinstance(exc, requests.Timeout):
        return f"timed out: {exc}"
    if isinstance(exc, requests.ConnectionError):
        return f"could not connect: {exc}"
    return f"{type(exc).__name__}: {exc}"


def retry_after(value: str | None) -> float | None:
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
