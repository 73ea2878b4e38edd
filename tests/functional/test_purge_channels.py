"""The Fastly and Cloudflare purge channels (S-314), against a stand-in API on 127.0.0.1.

A change goes through the admin API, the maintainer applies it and stores the purges of
the tags it named, and the worker sends them: the stand-in records every request (its
method, path, headers and JSON body) and answers as scripted, with a JSON body as
Cloudflare's API does. What is proven is what the CDN and the site owner see: the
requests, the notifications and their attempts, ``GET /api/notifications``, the command,
the log; and that the API tokens, read from the environment, show up in none of them.
"""

from __future__ import annotations

import json
import logging
import math
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import urlsplit

import pytest
from sqlalchemy import select
from sqlalchemy.orm import Session

from sitemap_server.app import site_of_app
from sitemap_server.models import Notification, NotificationAttempt
from sitemap_server.notify.purge import (
    CLOUDFLARE_API,
    CLOUDFLARE_TAGS_PER_REQUEST,
    CLOUDFLARE_TOKEN,
    CLOUDFLARE_ZONE,
    FASTLY_API,
    FASTLY_KEYS_PER_REQUEST,
    FASTLY_SERVICE,
    FASTLY_SOFT,
    FASTLY_TOKEN,
)
from sitemap_server.settings import SettingsError
from sitemap_server.site import Site
from sitemap_server.testing import SearchEngine, apply_changes, http_server, run_worker

SERVICE = "SU1Z0isxPaozGVKXdv0eY"
ZONE = "023e105f4ecef8ad9ca31a8372d0c353"
FASTLY_PATH = f"/service/{SERVICE}/purge"
CLOUDFLARE_PATH = f"/client/v4/zones/{ZONE}/purge_cache"
FASTLY_SECRET = "fastly-token-0d1e2f3a4b5c6d7e8f9"
CLOUDFLARE_SECRET = "cloudflare-token-9f8e7d6c5b4a3f2e1d0"
# Cloudflare's answer to a purge it made.
PURGED = {"success": True, "errors": [], "messages": [], "result": {"id": "9a7806061c88ada1"}}
JAN = "2024-01-10T12:00:00+00:00"
BULK = {"type": "post", "status": "publish"}
WORKER_LOG = "sitemap_server.notify.worker"
CHANNELS = ("fastly", "cloudflare")


# The stand-in API ------------------------------------------------------------------------


@pytest.fixture(scope="module")
def _cdn_server() -> Iterator[SearchEngine]:
    """A ``SearchEngine`` whose answers carry a JSON body: each scripted answer is a
    status (with ``PURGED``) or ``(status, body)``."""
    cdn = SearchEngine()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            path = urlsplit(self.path).path
            raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            record = {
                "method": self.command,
                "path": path,
                "headers": dict(self.headers),
                "body": json.loads(raw) if raw else None,
                "at": time.monotonic(),
            }
            with cdn.lock:
                cdn.requests.append(record)
            answer = cdn.next_answer(path)
            status, body = answer if isinstance(answer, tuple) else (answer, PURGED)
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: Any) -> None:
            pass

    with http_server(Handler) as url:
        cdn.url = url
        yield cdn


@pytest.fixture
def cdn(_cdn_server: SearchEngine) -> SearchEngine:
    with _cdn_server.lock:
        _cdn_server.requests.clear()
        _cdn_server.scripts.clear()
    return _cdn_server


@pytest.fixture
def tokens(monkeypatch: pytest.MonkeyPatch) -> None:
    """The API tokens, where a deployment gives them: in the environment."""
    monkeypatch.setenv(FASTLY_TOKEN, FASTLY_SECRET)
    monkeypatch.setenv(CLOUDFLARE_TOKEN, CLOUDFLARE_SECRET)


def cdn_settings(cdn: SearchEngine, **extra: str) -> dict[str, str]:
    return {
        FASTLY_SERVICE: SERVICE,
        FASTLY_API: cdn.url,
        CLOUDFLARE_ZONE: ZONE,
        CLOUDFLARE_API: cdn.url,
        **extra,
    }


@pytest.fixture
def site(app_for: Any, cdn: SearchEngine, tokens: None) -> Any:
    """The admin API of an application that purges Fastly and Cloudflare at ``cdn``,
    with one post, built and purged whole once (the first build purges ``sitemaps``)."""
    app = app_for(signed_in=True, **cdn_settings(cdn))
    new_post(app, 0)
    run_worker(app)
    with cdn.lock:
        cdn.requests.clear()
    return app


def new_post(app: Any, n: int) -> None:
    body = {"type": "post", "status": "publish", "title": f"Post {n}", "slug": f"post-{n}"}
    app.post_json("/api/posts", {**body, "published_at": JAN}, status=201)


def stored(engine: Any, channel: str) -> list[Notification]:
    with Session(engine) as session:
        return list(
            session.scalars(
                select(Notification)
                .where(Notification.channel == channel)
                .order_by(Notification.id)
            )
        )


def sent_tags(cdn: SearchEngine) -> dict[str, list[list[str]]]:
    """The tags of each request each CDN received, in order."""
    return {
        "fastly": [r["body"]["surrogate_keys"] for r in cdn.received(FASTLY_PATH, "POST")],
        "cloudflare": [r["body"]["tags"] for r in cdn.received(CLOUDFLARE_PATH, "POST")],
    }


def outcomes(attempts: list[dict[str, Any]]) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for attempt in attempts:
        found.setdefault(attempt["channel"], []).append(attempt["outcome"])
    return found


# The requests ----------------------------------------------------------------------------


def test_a_change_is_purged_at_fastly_and_cloudflare(site, cdn, clean_database):
    new_post(site, 1)
    attempts = run_worker(site)
    assert outcomes(attempts) == {"fastly": ["sent"], "cloudflare": ["sent"]}
    [fastly] = cdn.received(FASTLY_PATH)
    [cloudflare] = cdn.received(CLOUDFLARE_PATH)
    assert fastly["method"] == cloudflare["method"] == "POST"
    assert fastly["headers"]["Fastly-Key"] == FASTLY_SECRET
    assert fastly["headers"]["Accept"] == "application/json"
    assert fastly["headers"]["Content-Type"] == "application/json"
    assert "Fastly-Soft-Purge" not in fastly["headers"]
    assert "Authorization" not in fastly["headers"]
    assert cloudflare["headers"]["Authorization"] == f"Bearer {CLOUDFLARE_SECRET}"
    assert cloudflare["headers"]["Content-Type"] == "application/json"
    assert "Fastly-Key" not in cloudflare["headers"]
    assert list(fastly["body"]) == ["surrogate_keys"]
    assert list(cloudflare["body"]) == ["tags"]
    # What the maintainer named, to both: the new post's page, the index, the feed.
    named = fastly["body"]["surrogate_keys"]
    assert cloudflare["body"]["tags"] == named
    assert [n.payload for n in stored(clean_database, "fastly")[-1:]] == [{"tags": named}]
    assert {"index", "doc:sitemap.atom"} < set(named)
    assert any(tag.startswith("doc:post-sitemap") for tag in named)
    assert "sitemaps" not in named


def test_every_tag_is_purged_once_in_batches_within_each_cdns_limit(site, cdn, clean_database):
    """One entry a page: deleting the first of 600 imported posts moves each one after it
    a page up, so each of their pages, the index and the feed are purged (600 tags and
    more), in three Fastly requests and a Cloudflare one per hundred."""
    site.patch_json("/api/settings", {"entries_per_page": 1}, status=200)
    start = datetime(2023, 1, 1, tzinfo=UTC)
    posts = "".join(
        json.dumps(
            {
                "post": {
                    **BULK,
                    "id": 1000 + n,
                    "slug": f"bulk-{n}",
                    "title": f"Bulk {n}",
                    "published_at": (start + timedelta(hours=n)).isoformat(),
                }
            }
        )
        + "\n"
        for n in range(600)
    )
    site.post("/api/import", posts.encode(), content_type="application/x-ndjson", status=200)
    run_worker(site)
    with cdn.lock:
        cdn.requests.clear()
    before = {channel: len(stored(clean_database, channel)) for channel in CHANNELS}

    site.delete("/api/posts/1000", status=204)
    attempts = run_worker(site)

    sent = sent_tags(cdn)
    fastly = [tag for batch in sent["fastly"] for tag in batch]
    assert len(fastly) == len(set(fastly)) >= 600  # each tag once
    assert {"doc:post-sitemap3", "doc:post-sitemap602", "index", "doc:sitemap.atom"} < set(fastly)
    for channel, limit in (
        ("fastly", FASTLY_KEYS_PER_REQUEST),
        ("cloudflare", CLOUDFLARE_TAGS_PER_REQUEST),
    ):
        every = [tag for batch in sent[channel] for tag in batch]
        assert sorted(every) == sorted(fastly), channel
        assert all(0 < len(batch) <= limit for batch in sent[channel]), channel
        assert len(sent[channel]) == math.ceil(len(fastly) / limit), channel
        # One stored purge a request, each sent once.
        purges = stored(clean_database, channel)[before[channel] :]
        assert [n.payload["tags"] for n in purges] == sent[channel]
        assert {n.status for n in purges} == {"sent"}
        assert outcomes(attempts)[channel] == ["sent"] * len(sent[channel])
    assert [len(batch) for batch in sent["fastly"]][:2] == [256, 256]
    assert len(sent["fastly"]) == 3


def test_a_soft_purge_when_configured(app_for, cdn, tokens):
    app = app_for(signed_in=True, **cdn_settings(cdn, **{FASTLY_SOFT: "true"}))
    new_post(app, 1)
    run_worker(app)
    [fastly] = cdn.received(FASTLY_PATH)
    assert fastly["headers"]["Fastly-Soft-Purge"] == "1"
    assert fastly["body"] == {"surrogate_keys": ["sitemaps"]}  # the first build
    assert "Fastly-Soft-Purge" not in cdn.received(CLOUDFLARE_PATH)[0]["headers"]


# The tokens ------------------------------------------------------------------------------


def test_no_token_is_stored_listed_or_logged(site, cdn, clean_database, cli, caplog, monkeypatch):
    caplog.set_level(logging.INFO, logger=WORKER_LOG)
    new_post(site, 1)
    apply_changes(site)
    waiting = [
        (n.channel, n.url, n.payload)
        for channel in CHANNELS
        for n in stored(clean_database, channel)
        if n.status == "pending"
    ]
    assert {row[0] for row in waiting} == set(CHANNELS)
    cdn.answer(CLOUDFLARE_PATH, (200, {"success": False, "errors": [{"message": "no"}]}))
    run_worker(site)

    with Session(clean_database) as session:
        notifications = [
            (n.channel, n.url, n.payload, n.status, n.error)
            for n in session.scalars(select(Notification))
        ]
        attempts = [(a.outcome, a.error) for a in session.scalars(select(NotificationAttempt))]
    assert {row[0] for row in notifications} == set(CHANNELS)
    assert {row[0] for row in attempts} == {"sent", "failed"}
    assert "fastly purge" in caplog.text and "cloudflare purge" in caplog.text
    # The command reads the ini file and the environment, as a site owner runs it.
    monkeypatch.setenv("SITEMAP_SERVER_PURGE_FASTLY_SERVICE_ID", SERVICE)
    monkeypatch.setenv("SITEMAP_SERVER_PURGE_CLOUDFLARE_ZONE_ID", ZONE)
    status, out, _ = cli("notifications")
    assert status == 0 and f"fastly {cdn.url}{FASTLY_PATH}" in out
    shown = {
        "outbox": repr(waiting),
        "notifications": repr(notifications),
        "attempts": repr(attempts),
        "api": site.get("/api/notifications").text,
        "command": out,
        "log": caplog.text,
    }
    for where, text in shown.items():
        for secret in (FASTLY_SECRET, CLOUDFLARE_SECRET):
            assert secret not in text, where


def test_the_token_is_the_one_configured_when_sent(site, app_for, cdn, monkeypatch):
    """A token replaced while a purge waits: the purge is sent with the new one."""
    new_post(site, 1)
    apply_changes(site)
    monkeypatch.setenv(FASTLY_TOKEN, "fastly-token-rotated")
    monkeypatch.setenv(CLOUDFLARE_TOKEN, "cloudflare-token-rotated")
    restarted = app_for(signed_in=True, **cdn_settings(cdn))
    run_worker(restarted)
    assert cdn.received(FASTLY_PATH)[0]["headers"]["Fastly-Key"] == "fastly-token-rotated"
    assert (
        cdn.received(CLOUDFLARE_PATH)[0]["headers"]["Authorization"]
        == "Bearer cloudflare-token-rotated"
    )


# The answers -----------------------------------------------------------------------------


def test_a_cloudflare_refusal_in_a_200_is_given_up_with_its_message(site, cdn, clean_database):
    refusal = {
        "success": False,
        "errors": [{"code": 1134, "message": "Unable to purge: too many tags"}],
        "messages": [],
        "result": None,
    }
    cdn.answer(CLOUDFLARE_PATH, (200, refusal))
    new_post(site, 1)
    attempts = run_worker(site)
    assert outcomes(attempts) == {"fastly": ["sent"], "cloudflare": ["failed"]}
    [notification] = stored(clean_database, "cloudflare")[-1:]
    assert notification.status == "failed"
    assert notification.attempts == 1
    assert notification.error == (
        "the answer was refused: Cloudflare did not purge: 1134 Unable to purge: too many tags"
    )
    run_worker(site)
    assert len(cdn.received(CLOUDFLARE_PATH)) == 1  # not tried again


def test_a_429_is_retried(site, cdn, clean_database):
    cdn.answer(FASTLY_PATH, 429, 200)
    cdn.answer(CLOUDFLARE_PATH, (429, {"success": False, "errors": []}), 200)
    new_post(site, 1)
    assert outcomes(run_worker(site)) == {"fastly": ["retry"], "cloudflare": ["retry"]}
    waiting = stored(clean_database, "fastly")[-1:] + stored(clean_database, "cloudflare")[-1:]
    assert [(n.status, n.error) for n in waiting] == [
        ("pending", "HTTP 429: too many requests"),
        ("pending", "HTTP 429: too many requests"),
    ]
    assert outcomes(run_worker(site)) == {"fastly": ["sent"], "cloudflare": ["sent"]}
    sent = sent_tags(cdn)
    assert len(sent["fastly"]) == len(sent["cloudflare"]) == 2
    assert sent["fastly"][0] == sent["fastly"][1] == sent["cloudflare"][0]


def test_a_refused_token_is_given_up_saying_what_to_fix(site, cdn, clean_database):
    cdn.answer(FASTLY_PATH, (403, {"msg": "Provided credentials are missing or invalid"}))
    new_post(site, 1)
    assert outcomes(run_worker(site))["fastly"] == ["failed"]
    [notification] = stored(clean_database, "fastly")[-1:]
    assert notification.error == (
        f"HTTP 403: Fastly refused the token of {FASTLY_TOKEN} "
        "(it must be valid and have the purge_select scope on this service)"
    )


# Configuration ---------------------------------------------------------------------------


def test_unconfigured_channels_store_and_send_nothing(app_for, cdn, clean_database, tokens):
    """Tokens alone, without a service or a zone, configure nothing."""
    app = app_for(signed_in=True, **{FASTLY_API: cdn.url, CLOUDFLARE_API: cdn.url})
    notify = site_of_app(app).notify
    assert not notify.channel("fastly").enabled
    assert not notify.channel("cloudflare").enabled
    new_post(app, 1)
    run_worker(app)
    assert stored(clean_database, "fastly") == stored(clean_database, "cloudflare") == []
    assert cdn.requests == []


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        (
            {FASTLY_SERVICE: SERVICE},
            f"{FASTLY_SERVICE} is set but the environment variable {FASTLY_TOKEN} is not",
        ),
        (
            {CLOUDFLARE_ZONE: ZONE},
            f"{CLOUDFLARE_ZONE} is set but the environment variable {CLOUDFLARE_TOKEN} is not",
        ),
        ({CLOUDFLARE_ZONE: "../../zones"}, "letters and digits only"),
        ({FASTLY_API: "api.fastly.com"}, "absolute http"),
    ],
)
def test_bad_purge_settings_stop_the_start(app_settings, monkeypatch, settings, message):
    monkeypatch.delenv(FASTLY_TOKEN, raising=False)
    monkeypatch.delenv(CLOUDFLARE_TOKEN, raising=False)
    with pytest.raises(SettingsError, match=message):
        Site({**app_settings, **settings})


def test_a_token_with_blanks_is_refused_without_being_shown(app_settings, monkeypatch):
    monkeypatch.setenv(FASTLY_TOKEN, "two halves")
    with pytest.raises(SettingsError) as refused:
        Site({**app_settings, FASTLY_SERVICE: SERVICE})
    assert FASTLY_TOKEN in str(refused.value)
    assert "halves" not in str(refused.value)
