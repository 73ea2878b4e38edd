"""The demo site (``sitemap-server seed-demo``) shows the video sitemap at work, offline.

The demo's videos are made up (no host knows their ids): the plugin gives them their
metadata when the demo is seeded (``sitemap_seed_demo``) and fetches nothing for them,
whatever the oEmbed settings.
"""

from __future__ import annotations

import logging

from pyramid.paster import get_appsettings
from sqlalchemy import select

from sitemap_server.app import site_of_app
from sitemap_server.demo import seed_demo
from sitemap_server.notify.worker import Worker
from sitemap_server.services import posts as post_service
from sitemap_server.site import Site
from sitemap_server.testing import PROJECT_ROOT, client, parse_sitemap, run_worker
from sitemap_server_video.models import Video

NS = {
    "sm": "http://www.sitemaps.org/schemas/sitemap/0.9",
    "video": "http://www.google.com/schemas/sitemap-video/1.1",
}
# A proxy that refuses every connection: a machine without internet, where any request
# fails at once (and the plugin would log it).
NO_INTERNET = "http://127.0.0.1:9"
SAVED_LATER = {
    "type": "post",
    "title": "Saved later",
    "status": "publish",
    "content": '<iframe src="https://player.vimeo.com/video/76979871"></iframe>',
}


def listed_videos(app):
    """``[<video:video> as {child: text}]`` of /video-sitemap.xml, valid against the XSDs."""
    root = parse_sitemap(app.get("/video-sitemap.xml", status=200).body)
    return [
        {child.tag.rpartition("}")[2]: child.text for child in video}
        for video in root.iterfind("sm:url/video:video", NS)
    ]


def test_the_demo_sites_videos_are_all_listed_with_their_metadata(app_session, testapp):
    with app_session.begin():  # as `sitemap-server seed-demo` does it
        seed_demo(app_session, posts=120)

    index = parse_sitemap(testapp.get("/sitemap_index.xml").body)
    assert "http://sitemaps.test/video-sitemap.xml" in [
        loc.text for loc in index.iterfind("sm:sitemap/sm:loc", NS)
    ]
    videos = listed_videos(testapp)
    # YouTube embeds are in every 11th post, but 11 … 77 and 99 are the demo's excluded
    # cases (draft, private, password, noindex, foreign canonical, excluded, pending,
    # trash); Vimeo's are in every 23rd, <video> tags in every 29th.
    assert [v.get("player_loc") for v in videos if "youtube" in v.get("player_loc", "")] == [
        f"https://www.youtube-nocookie.com/embed/demo{n:07d}" for n in (88, 110)
    ]
    assert [v.get("player_loc") for v in videos if "vimeo" in v.get("player_loc", "")] == [
        f"https://player.vimeo.com/video/{76979000 + n}" for n in (23, 46, 69, 92, 115)
    ]
    assert [v["content_loc"] for v in videos if "content_loc" in v] == [
        f"http://sitemaps.test/uploads/video-{n}.mp4" for n in (29, 58, 87, 116)
    ]
    for video in videos:
        assert video["title"].endswith(("(YouTube video)", "(Vimeo video)", "(video file)"))
        assert "made up, like the rest of the demo" in video["description"]
    thumbnails = {v.get("player_loc") or v["content_loc"]: v["thumbnail_loc"] for v in videos}
    # Each host's convention where there is one; on the demo site's own /uploads/ elsewhere.
    assert thumbnails["https://www.youtube-nocookie.com/embed/demo0000088"] == (
        "https://i.ytimg.com/vi/demo0000088/hqdefault.jpg"
    )
    assert thumbnails["http://sitemaps.test/uploads/video-29.mp4"] == (
        "http://sitemaps.test/uploads/video-29.jpg"
    )
    vimeo_thumbnail = thumbnails["https://player.vimeo.com/video/76979023"]
    assert vimeo_thumbnail.startswith("http://sitemaps.test/uploads/video-thumbnails/")


def test_the_demo_asks_no_host_even_with_oembed_configured(
    clean_database, oembed_app, oembed_server
):
    with site_of_app(oembed_app).sessions() as session, session.begin():
        seed_demo(session, posts=60)
    run_worker(oembed_app)

    assert oembed_server.requests == []
    # Posts 23 and 46 embed Vimeo, 29 and 58 <video> tags; 11 … 55 (YouTube) are unlisted.
    assert len(listed_videos(client(oembed_app))) == 4


def test_make_run_makes_no_network_request(clean_database, database_url, monkeypatch, caplog):
    for name in ("HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy"):
        monkeypatch.setenv(name, NO_INTERNET)
    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)
    # development.ini as shipped (what `make run` reads), on the test database.
    settings = dict(get_appsettings(str(PROJECT_ROOT / "development.ini")))
    site = Site({**settings, "sqlalchemy.url": database_url})
    sessions = site.sessions
    caplog.set_level(logging.WARNING)

    with sessions() as session, session.begin():  # seed-demo
        seed_demo(session, posts=60)
    with sessions() as session, session.begin():  # a post saved through the served API
        post_service.create_post(session, SAVED_LATER)
    # The worker thread that `pserve development.ini` starts: no target, nothing to send.
    worker = Worker(site)
    try:
        attempts = worker.run_once(force=True)
    finally:
        worker.close()
        site.close()

    assert attempts == []
    assert caplog.records == []
    with sessions() as session:
        videos = session.scalars(select(Video)).all()
    # The demo's 5 YouTube (posts 11 … 55), 2 Vimeo and 2 <video> videos, and the later one.
    assert len(videos) == 10
    assert {(video.fetched_at, video.fetch_error) for video in videos} == {(None, None)}
