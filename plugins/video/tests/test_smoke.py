from sitemap_server.testing import parse_sitemap

NS = {
    "sm": "http://www.sitemaps.org/schemas/sitemap/0.9",
    "video": "http://www.google.com/schemas/sitemap-video/1.1",
}


def test_an_embedded_youtube_video_is_listed(api, testapp):
    post = api.post_json(
        "/api/posts",
        {
            "type": "post",
            "title": "With a video",
            "status": "publish",
            "published_at": "2024-03-01T12:00:00+00:00",
            "content": '<iframe src="https://www.youtube.com/embed/dQw4w9WgXcQ"></iframe>',
        },
        status=201,
    ).json
    root = parse_sitemap(testapp.get("/video-sitemap.xml").body)
    [url] = root.findall("sm:url", NS)
    assert url.findtext("sm:loc", namespaces=NS) == post["permalink"]
    assert url.findtext("video:video/video:player_loc", namespaces=NS) == (
        "https://www.youtube-nocookie.com/embed/dQw4w9WgXcQ"
    )
    index = testapp.get("/sitemap_index.xml").text
    assert "/video-sitemap.xml" in index
