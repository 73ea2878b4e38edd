"""The channel protocol from a plugin author's side: a channel that reads its answers.

A plugin's background job (the video plugin's oEmbed fetches) is a channel that announces
nothing: its messages are queued with ``send_later`` in a writing transaction, and the
worker hands each answer to ``received`` in the transaction that records the attempt.
Here a small channel of the test's own plays that plugin against a real HTTP server on
127.0.0.1, and the worker's contract is checked through what a site owner sees: the
notification's status and error (``GET /api/notifications``) and the attempts.
"""

from __future__ import annotations

import dataclasses
from http.server import BaseHTTPRequestHandler
from typing import Any

import pytest
from sqlalchemy import text

from sitemap_server.app import site_of_app
from sitemap_server.notify.worker import Worker
from sitemap_server.plugin import Channel, Message, OutgoingRequest, send_later
from sitemap_server.testing import http_server

ANSWERS = {"/small": b'{"ok": true}', "/large": b"x" * 5000}


class Reading(Channel):
    """Reads up to 1,000 bytes of each answer; ``fail`` says how ``received`` fails."""

    name = "test.reading"
    announces = False

    def __init__(self, fail: str | None = None) -> None:
        self.fail = fail
        self.answers: list[bytes] = []
        self.failures: list[tuple[str, bool]] = []

    def request(self, message: Message, site_url: str) -> OutgoingRequest:
        return OutgoingRequest(message.url, answer_bytes=1000)

    def received(self, session: Any, message: Message, answer: bytes) -> None:
        self.answers.append(answer)
        session.execute(text("UPDATE site_settings SET title = 'changed by the channel'"))
        if self.fail == "refuse":
            raise ValueError("the answer makes no sense")
        if self.fail == "database":
            session.execute(text("INSERT INTO no_such_table VALUES (1)"))

    def failed(self, session: Any, message: Message, error: str, final: bool) -> None:
        self.failures.append((error, final))


@pytest.fixture(scope="module")
def answering():
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = ANSWERS.get(self.path)
            self.send_response(200 if body is not None else 404)
            self.send_header("Content-Length", str(len(body or b"")))
            self.end_headers()
            self.wfile.write(body or b"")

        def log_message(self, *args: Any) -> None:
            pass

    with http_server(Handler) as url:
        yield url


def run(app, api, channel, url):
    """Queue one message of ``channel`` to ``url`` as a plugin's write would, run one
    worker pass with ``channel`` loaded; (the attempt, the notification as the API shows
    it, the site's title)."""
    sessions = site_of_app(app).sessions
    with sessions.begin() as session:
        send_later(session, channel.name, Message(url))
    config = site_of_app(app).notify
    worker = Worker(
        site_of_app(app), dataclasses.replace(config, channels=(*config.channels, channel))
    )
    try:
        [attempt] = worker.run_once()
    finally:
        worker.close()
    [shown] = api.get("/api/notifications").json["notifications"]
    return attempt, shown, api.get("/api/settings").json["title"]


def test_the_answer_is_received_in_the_recording_transaction(wsgi_app, api, answering):
    channel = Reading()
    attempt, shown, title = run(wsgi_app, api, channel, f"{answering}/small")
    assert channel.answers == [ANSWERS["/small"]]
    assert (attempt["outcome"], shown["status"], shown["error"]) == ("sent", "sent", None)
    assert title == "changed by the channel"


def test_an_answer_the_channel_refuses_is_given_up_with_its_reason(wsgi_app, api, answering):
    channel = Reading(fail="refuse")
    before = api.get("/api/settings").json["title"]
    attempt, shown, title = run(wsgi_app, api, channel, f"{answering}/small")
    assert (attempt["outcome"], shown["status"]) == ("failed", "failed")
    assert shown["error"] == "the answer was refused: the answer makes no sense"
    assert channel.failures == [(shown["error"], True)]
    assert title == before  # what received wrote was rolled back


def test_a_channel_that_cannot_store_fails_its_message_not_the_worker(
    wsgi_app, api, answering, caplog
):
    channel = Reading(fail="database")
    before = api.get("/api/settings").json["title"]
    attempt, shown, title = run(wsgi_app, api, channel, f"{answering}/small")
    assert (attempt["outcome"], shown["status"]) == ("failed", "failed")
    assert shown["error"].startswith("the answer could not be stored (")
    assert "no_such_table" not in shown["error"]  # the database's words stay in the log
    assert "no_such_table" in caplog.text
    assert title == before


def test_an_answer_longer_than_the_channel_reads_is_given_up(wsgi_app, api, answering):
    channel = Reading()
    attempt, shown, _ = run(wsgi_app, api, channel, f"{answering}/large")
    assert (attempt["outcome"], shown["status"]) == ("failed", "failed")
    assert shown["error"] == "the answer is larger than 1,000 bytes"
    assert channel.answers == []
    assert channel.failures == [(shown["error"], True)]


def test_a_4xx_is_given_up_and_the_channel_told(wsgi_app, api, answering):
    channel = Reading()
    attempt, shown, _ = run(wsgi_app, api, channel, f"{answering}/missing")
    assert (attempt["outcome"], attempt["http_status"]) == ("failed", 404)
    assert channel.failures == [(shown["error"], True)]


def test_a_message_whose_channel_is_gone_is_cancelled(wsgi_app, api, answering):
    sessions = site_of_app(wsgi_app).sessions
    with sessions.begin() as session:
        send_later(session, "uninstalled", Message(f"{answering}/small"))
    worker = Worker(site_of_app(wsgi_app))
    try:
        [attempt] = worker.run_once()
    finally:
        worker.close()
    assert attempt["outcome"] == "cancelled"
    assert "no loaded plugin sends 'uninstalled'" in attempt["error"]


def test_a_message_waiting_is_not_queued_twice(wsgi_app, api, answering):
    sessions = site_of_app(wsgi_app).sessions
    with sessions.begin() as session:
        first = send_later(session, "test.reading", Message(f"{answering}/small"))
        again = send_later(session, "test.reading", Message(f"{answering}/small"))
        other = send_later(session, "test.reading", Message(f"{answering}/large"))
        assert again is first
        assert other is not first
    assert len(api.get("/api/notifications").json["notifications"]) == 2
