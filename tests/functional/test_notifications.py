"""Telling search engines (S-601, S-602), against a local search engine on 127.0.0.1."""

from urllib.parse import quote

import pytest

from sitemap_server.notify.config import NotifyConfig
from sitemap_server.notify.worker import Worker
from sitemap_server.testing import SITE_URL, client

KEY = "a1b2c3d4e5f6a7b8"
JAN = "2024-01-10T12:00:00+00:00"
INDEX = quote(f"{SITE_URL}/sitemap_index.xml", safe="")


@pytest.fixture
def notify_app(app_with, search_engine):
    return app_with(
        **{
            "sitemap_server.ping.targets": f"{search_engine.url}/ping?sitemap={{sitemap}}",
            "sitemap_server.indexnow.key": KEY,
            "sitemap_server.indexnow.endpoint": f"{search_engine.url}/indexnow",
            "sitemap_server.notify.quiet_seconds": "60",
            "sitemap_server.notify.retry_seconds": "30",
        }
    )


@pytest.fixture
def admin(notify_app, api_token):
    return client(notify_app, api_token)


@pytest.fixture
def worker(notify_app):
    return Worker(
        notify_app.registry["dbsession_factory"],
        NotifyConfig.from_settings(notify_app.registry.settings),
    )


def create_post(api, **fields):
    body = {"type": "post", "status": "publish", "published_at": JAN, "modified_at": JAN}
    return api.post_json("/api/posts", {**body, **fields}, status=201).json


def test_a_burst_of_changes_is_one_ping(admin, worker, search_engine, clock):
    for n in range(5):
        create_post(admin, title=f"Post {n}", slug=f"post-{n}")
    assert worker.run_once() == []  # the burst is not over yet
    assert search_engine.requests == []

    clock.advance(seconds=61)
    attempts = worker.run_once()
    assert [a["outcome"] for a in attempts] == ["sent", "sent"]
    pings = search_engine.received("/ping")
    assert len(pings) == 1
    assert pings[0]["query"] == {"sitemap": f"{SITE_URL}/sitemap_index.xml"}
    [submission] = search_engine.received("/indexnow", "POST")
    body = submission["body"]
    assert body["host"] == "sitemaps.test"
    assert body["key"] == KEY
    assert body["keyLocation"] == f"{SITE_URL}/{KEY}.txt"
    assert {f"{SITE_URL}/2024/01/post-{n}/" for n in range(5)} <= set(body["urlList"])

    clock.advance(seconds=61)
    assert worker.run_once() == []  # nothing new: nothing sent
    assert len(search_engine.requests) == 2
