"""The demo site (``sitemap-server seed-demo``) shows the video sitemap at work."""

from __future__ import annotations

from sitemap_server.demo import seed_demo
from sitemap_server.testing import parse_sitemap

NS = {
    "sm": "http://www.sitemaps.org/schemas/sitemap/0.9",
    "video": "http://www.google.com/schemas/sitemap-video/1.1",
}


def test_the_demo_sites_embedded_videos_are_in_the_video_sitemap(app_session, testapp):
    with app_session.begin():  # as `sitemap-server seed-demo` does it
        seed_demo(app_session, posts=120)

    index = parse_sitemap(testapp.get("/sitemap_index.xml").body)
    assert "http://sitemaps.test/video-sitemap.xml" in [
        loc.text for loc in index.iterfind("sm:sitemap/sm:loc", NS)
    ]
    root = parse_sitemap(testapp.get("/video-sitemap.xml").body)  # valid against the XSDs
    players = [e.text for e in root.iterfind("sm:url/video:video/video:player_loc", NS)]
    files = [e.text for e in root.iterfind("sm:url/video:video/video:content_loc", NS)]
    # YouTube embeds are in every 11th post, but 11 … 77 and 99 are the demo's excluded
    # cases (draft, private, password, noindex, foreign canonical, excluded, pending,
    # trash); <video> tags are in every 29th; Vimeo's (every 23rd) have no thumbnail
    # without oEmbed, which the tests leave unconfigured.
    assert players == [f"https://www.youtube-nocookie.com/embed/demo{n:07d}" for n in (88, 110)]
    assert files == [f"http://sitemaps.test/uploads/video-{n}.mp4" for n in (29, 58, 87, 116)]
    thumbnails = [e.text for e in root.iterfind("sm:url/video:video/video:thumbnail_loc", NS)]
    assert "https://i.ytimg.com/vi/demo0000088/hqdefault.jpg" in thumbnails
