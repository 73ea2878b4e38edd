"""Videos found in a post's content when it is saved (S-503): YouTube and Vimeo embeds and
links, ``<video>`` tags.

Posts are saved through the admin API and their videos read back through
``GET /api/posts/{id}/videos``, as a user would; ``find_videos`` is also tested on its own
for HTML that is easy to get wrong.
"""

from __future__ import annotations

import json

import pytest

from sitemap_server.testing import assert_problem, parse_sitemap
from sitemap_server_video.detect import Found, find_videos

NS = {
    "sm": "http://www.sitemaps.org/schemas/sitemap/0.9",
    "video": "http://www.google.com/schemas/sitemap-video/1.1",
}
YT = "dQw4w9WgXcQ"  # 11 characters, as every YouTube id
YT2 = "9bZkp7q19f0"
YT3 = "a-b_C1d2E3f"  # with the two punctuation characters ids may hold
BASE = "http://sitemaps.test/2024/03/a-post/"


# Helpers --------------------------------------------------------------------------------


def create_post(api, content, **fields):
    body = {
        "type": "post",
        "title": "A post",
        "status": "publish",
        "published_at": "2024-03-01T12:00:00+00:00",
        "content": content,
        **fields,
    }
    return api.post_json("/api/posts", body, status=201).json


def save_content(api, post, content):
    return api.patch_json(f"/api/posts/{post['id']}", {"content": content}, status=200).json


def videos_of(api, post):
    return api.get(f"/api/posts/{post['id']}/videos", status=200).json["items"]


def detected(api, post):
    return [v for v in videos_of(api, post) if v["source"] == "detected"]


def youtube(video_id):
    """What a detected YouTube video looks like through the API."""
    return {
        "source": "detected",
        "player_url": f"https://www.youtube-nocookie.com/embed/{video_id}",
        "thumbnail_url": f"https://i.ytimg.com/vi/{video_id}/hqdefault.jpg",
        "page_url": f"https://www.youtube.com/watch?v={video_id}",
        "content_url": None,
        "listable": True,
    }


def vimeo(video_id):
    return {
        "source": "detected",
        "player_url": f"https://player.vimeo.com/video/{video_id}",
        "page_url": f"https://vimeo.com/{video_id}",
        "thumbnail_url": None,  # Vimeo has no URL convention: oEmbed gives one
        "content_url": None,
        "listable": False,
    }


def file_video(url, poster=None):
    return {
        "source": "detected",
        "content_url": url,
        "page_url": url,
        "thumbnail_url": poster,
        "player_url": None,
        "listable": poster is not None,
    }


def shape(video):
    """The fields detection decides."""
    return {
        key: video[key]
        for key in ("source", "player_url", "thumbnail_url", "page_url", "content_url", "listable")
    }


def shapes(api, post):
    return [shape(v) for v in videos_of(api, post)]


def iframe(src):
    return f'<p>Watch:</p><iframe width="560" height="315" src="{src}" allowfullscreen></iframe>'


def listed_players(testapp):
    root = parse_sitemap(testapp.get("/video-sitemap.xml", status=200).body)
    return {
        url.findtext("sm:loc", namespaces=NS): [
            v.findtext("video:player_loc", namespaces=NS)
            or v.findtext("video:content_loc", namespaces=NS)
            for v in url.findall("video:video", NS)
        ]
        for url in root.findall("sm:url", NS)
    }


# Each host's conventions, through the API -------------------------------------------------


@pytest.mark.parametrize(
    "content",
    [
        iframe(f"https://www.youtube.com/embed/{YT}"),
        iframe(f"https://www.youtube.com/embed/{YT}?rel=0&amp;autoplay=1"),
        iframe(f"https://www.youtube-nocookie.com/embed/{YT}"),
        iframe(f"//www.youtube.com/embed/{YT}"),
        f'<a href="https://www.youtube.com/watch?v={YT}">my video</a>',
        f'<a href="https://www.youtube.com/watch?v={YT}&amp;t=42s">at 0:42</a>',
        f'<a href="https://www.youtube.com/watch?feature=share&amp;v={YT}">shared</a>',
        f'<a href="https://m.youtube.com/watch?list=PL1&v={YT}">mobile</a>',
        f"<p>https://youtu.be/{YT}</p>",
        f'<a href="https://youtu.be/{YT}?si=abc">short link</a>',
        f'<a href="https://www.youtube.com/shorts/{YT}">a short</a>',
        f'<object data="http://www.youtube.com/v/{YT}"></object>',
    ],
    ids=[
        "iframe",
        "iframe with parameters",
        "nocookie iframe",
        "protocol-relative iframe",
        "watch link",
        "watch link with a time",
        "watch link, v not first",
        "mobile watch link",
        "youtu.be in text",
        "youtu.be link with parameters",
        "shorts",
        "old v/ embed",
    ],
)
def test_a_youtube_video_is_detected(api, content):
    post = create_post(api, content)

    [video] = videos_of(api, post)

    assert shape(video) == youtube(YT)
    assert video["post"] == post["id"]
    assert video["title"] is None
    assert video["family_friendly"] is True
    assert api.get(f"/api/videos/{video['id']}").json == video


@pytest.mark.parametrize(
    "content",
    [
        iframe("https://player.vimeo.com/video/76979871"),
        iframe("https://player.vimeo.com/video/76979871?h=8272103f6e&amp;title=0"),
        '<a href="https://vimeo.com/76979871">on Vimeo</a>',
        "<p>https://www.vimeo.com/76979871</p>",
    ],
    ids=["player iframe", "player with parameters", "vimeo.com link", "www.vimeo.com in text"],
)
def test_a_vimeo_video_is_detected(api, content):
    post = create_post(api, content)

    assert shapes(api, post) == [vimeo("76979871")]


def test_a_video_tag_with_a_relative_src_is_made_absolute(api):
    post = create_post(
        api, '<video src="clip.mp4" poster="/uploads/clip.jpg" controls></video>', slug="a-post"
    )

    assert post["permalink"] == BASE
    assert shapes(api, post) == [
        file_video(BASE + "clip.mp4", "http://sitemaps.test/uploads/clip.jpg")
    ]


def test_a_video_tag_with_sources_takes_the_first(api):
    post = create_post(
        api,
        '<video controls poster="https://cdn.example.com/p.jpg">'
        '<source src="/media/clip.webm" type="video/webm">'
        '<source src="/media/clip.mp4" type="video/mp4">'
        "Your browser cannot play this.</video>",
    )

    assert shapes(api, post) == [
        file_video("http://sitemaps.test/media/clip.webm", "https://cdn.example.com/p.jpg")
    ]


def test_a_video_tag_without_a_poster_has_no_thumbnail(api, testapp):
    post = create_post(api, '<video src="https://cdn.example.com/a.mp4"></video>')

    assert shapes(api, post) == [file_video("https://cdn.example.com/a.mp4")]
    assert post["permalink"] not in listed_players(testapp)


def test_every_kind_in_one_post_in_order(api):
    content = (
        '<video src="https://cdn.example.com/a.mp4" poster="https://cdn.example.com/a.jpg">'
        "</video>"
        + iframe(f"https://www.youtube.com/embed/{YT}")
        + iframe("https://player.vimeo.com/video/123456")
        + f'<a href="https://youtu.be/{YT2}">another</a>'
    )
    post = create_post(api, content)

    assert shapes(api, post) == [
        file_video("https://cdn.example.com/a.mp4", "https://cdn.example.com/a.jpg"),
        youtube(YT),
        vimeo("123456"),
        youtube(YT2),
    ]


def test_detected_videos_are_listed_in_the_video_sitemap(api, testapp):
    youtube_post = create_post(api, iframe(f"https://www.youtube.com/embed/{YT}"), title="One")
    vimeo_post = create_post(api, iframe("https://player.vimeo.com/video/123456"), title="Two")
    file_post = create_post(
        api, '<video src="/a.mp4" poster="/a.jpg"></video>', title="Three", slug="three"
    )

    listed = listed_players(testapp)

    assert listed[youtube_post["permalink"]] == [f"https://www.youtube-nocookie.com/embed/{YT}"]
    assert vimeo_post["permalink"] not in listed  # no thumbnail before oEmbed
    assert listed[file_post["permalink"]] == ["http://sitemaps.test/a.mp4"]


def test_no_embed_no_video(api, dbsession):
    post = create_post(
        api,
        "<p>I like youtube and vimeo, and this <a href='https://example.com/video'>video</a>."
        "<img src='/youtube-logo.png'></p>",
    )

    assert videos_of(api, post) == []


def test_a_draft_gets_its_videos_too(api, testapp):
    post = create_post(api, iframe(f"https://youtu.be/{YT}"), status="draft", published_at=None)

    assert shapes(api, post) == [youtube(YT)]
    assert post["permalink"] not in listed_players(testapp)


# Once per video ----------------------------------------------------------------------------


def test_the_same_video_twice_is_one_row(api):
    content = (
        iframe(f"https://www.youtube.com/embed/{YT}")
        + f'<a href="https://www.youtube.com/watch?v={YT}">watch it on YouTube</a>'
        + f"<p>or https://youtu.be/{YT}</p>"
        + iframe("https://player.vimeo.com/video/42")
        + '<a href="https://vimeo.com/42">Vimeo page</a>'
        + '<video src="/a.mp4"></video><video src="/a.mp4"></video>'
    )
    post = create_post(api, content, slug="twice")

    assert shapes(api, post) == [
        youtube(YT),
        vimeo("42"),
        file_video("http://sitemaps.test/a.mp4"),
    ]


def test_saving_again_keeps_the_rows(api):
    content = iframe(f"https://www.youtube.com/embed/{YT}") + iframe(
        "https://player.vimeo.com/video/42"
    )
    post = create_post(api, content)
    before = videos_of(api, post)

    save_content(api, post, content + "<p>A new paragraph.</p>")
    api.patch_json(f"/api/posts/{post['id']}", {"title": "Renamed"}, status=200)

    after = videos_of(api, post)
    assert [v["id"] for v in after] == [v["id"] for v in before]
    assert [shape(v) for v in after] == [shape(v) for v in before]


def test_a_change_made_to_a_detected_video_survives_a_save(api):
    post = create_post(api, iframe(f"https://www.youtube.com/embed/{YT}"))
    [video] = videos_of(api, post)
    api.patch_json(f"/api/videos/{video['id']}", {"title": "My title", "duration": 212})

    save_content(api, post, iframe(f"https://www.youtube.com/embed/{YT}") + "<p>More</p>")

    [after] = videos_of(api, post)
    assert after["id"] == video["id"]
    assert after["title"] == "My title"
    assert after["duration"] == 212


# Editing the content ---------------------------------------------------------------------


def test_dropping_an_embed_removes_its_row(api, testapp):
    post = create_post(
        api,
        iframe(f"https://www.youtube.com/embed/{YT}")
        + iframe(f"https://www.youtube.com/embed/{YT2}")
        + iframe("https://player.vimeo.com/video/42"),
    )
    first, second, third = videos_of(api, post)

    save_content(api, post, iframe(f"https://www.youtube.com/embed/{YT2}"))

    assert videos_of(api, post) == [second]
    for gone in (first, third):
        assert_problem(api.get(f"/api/videos/{gone['id']}", status=404), 404)
    assert listed_players(testapp)[post["permalink"]] == [
        f"https://www.youtube-nocookie.com/embed/{YT2}"
    ]


def test_emptying_the_content_removes_every_detected_video(api, testapp):
    post = create_post(api, iframe(f"https://www.youtube.com/embed/{YT}"))

    save_content(api, post, "<p>No more video.</p>")

    assert videos_of(api, post) == []
    assert post["permalink"] not in listed_players(testapp)


def test_adding_an_embed_adds_a_row(api):
    post = create_post(api, "<p>Soon a video.</p>")
    assert videos_of(api, post) == []

    save_content(api, post, iframe(f"https://www.youtube.com/embed/{YT3}"))

    assert shapes(api, post) == [youtube(YT3)]


def test_replacing_an_embed_replaces_the_row(api):
    post = create_post(api, iframe("https://player.vimeo.com/video/1"))

    save_content(api, post, iframe("https://player.vimeo.com/video/2"))

    assert shapes(api, post) == [vimeo("2")]


# Videos added by hand --------------------------------------------------------------------


def test_manual_videos_are_never_removed_by_detection(api):
    post = create_post(api, iframe(f"https://www.youtube.com/embed/{YT}"))
    manual = api.post_json(
        f"/api/posts/{post['id']}/videos",
        {"content_url": "https://cdn.example.com/by-hand.mp4", "title": "By hand"},
        status=201,
    ).json

    save_content(api, post, "<p>No embed any more.</p>")
    api.patch_json(f"/api/posts/{post['id']}", {"content": ""}, status=200)

    assert videos_of(api, post) == [manual]


@pytest.mark.parametrize(
    "named",
    [
        {"player_url": f"https://www.youtube-nocookie.com/embed/{YT}"},
        {
            "content_url": "https://cdn.example.com/mine.mp4",
            "page_url": f"https://www.youtube.com/watch?v={YT}",
        },
    ],
    ids=["same player", "same page"],
)
def test_a_video_named_by_a_manual_one_is_not_added(api, named):
    post = create_post(api, "<p>Nothing yet.</p>")
    manual = api.post_json(
        f"/api/posts/{post['id']}/videos", {**named, "title": "Mine"}, status=201
    ).json

    save_content(api, post, iframe(f"https://www.youtube.com/embed/{YT}"))

    assert videos_of(api, post) == [manual]


def test_adding_a_manual_video_for_a_detected_one_replaces_it(api, testapp):
    post = create_post(
        api,
        iframe(f"https://www.youtube.com/embed/{YT}") + iframe("https://player.vimeo.com/video/9"),
    )
    [_, vimeo_video] = videos_of(api, post)

    manual = api.post_json(
        f"/api/posts/{post['id']}/videos",
        {
            "player_url": f"https://www.youtube-nocookie.com/embed/{YT}",
            "thumbnail_url": "https://cdn.example.com/mine.jpg",
            "title": "Described by hand",
        },
        status=201,
    ).json

    assert videos_of(api, post) == [vimeo_video, manual]
    assert listed_players(testapp)[post["permalink"]] == [
        f"https://www.youtube-nocookie.com/embed/{YT}"
    ]


def test_a_deleted_detected_video_stays_deleted_until_the_post_is_saved(api, testapp):
    post = create_post(
        api,
        iframe(f"https://www.youtube.com/embed/{YT}") + iframe(f"https://youtu.be/{YT2}"),
    )
    [unwanted, kept] = videos_of(api, post)

    api.delete(f"/api/videos/{unwanted['id']}", status=204)

    assert videos_of(api, post) == [kept]
    assert_problem(api.get(f"/api/videos/{unwanted['id']}", status=404), 404)
    assert listed_players(testapp)[post["permalink"]] == [
        f"https://www.youtube-nocookie.com/embed/{YT2}"
    ]
    # Changing the other video is no save of the post: the deleted one stays away.
    api.patch_json(f"/api/videos/{kept['id']}", {"title": "Kept"}, status=200)
    assert [v["id"] for v in videos_of(api, post)] == [kept["id"]]

    # The content still embeds it: saving the post finds it again.
    save_content(api, post, iframe(f"https://www.youtube.com/embed/{YT}"))
    assert shapes(api, post) == [youtube(YT)]


# Rejected saves and other ways in ---------------------------------------------------------


def test_a_rejected_post_detects_nothing(api, db_snapshot):
    before = db_snapshot()

    api.post_json(
        "/api/posts",
        {"type": "post", "title": "Bad", "content": iframe(f"https://youtu.be/{YT}"), "x": 1},
        status=400,
    )
    api.post_json(
        "/api/posts",
        {"type": "post", "title": "Bad", "content": iframe(f"https://youtu.be/{YT}"), "author": 99},
        status=422,
    )

    assert db_snapshot() == before


def test_a_rejected_edit_keeps_the_detected_videos(api, db_snapshot):
    post = create_post(api, iframe(f"https://www.youtube.com/embed/{YT}"))
    before = db_snapshot()

    api.patch_json(
        f"/api/posts/{post['id']}",
        {"content": "<p>gone</p>", "status": "published"},
        status=400,
    )

    assert db_snapshot() == before
    assert shapes(api, post) == [youtube(YT)]


def test_imported_posts_get_their_videos(api):
    lines = [
        {
            "post": {
                "id": 10,
                "type": "post",
                "title": "One",
                "content": iframe(f"https://youtu.be/{YT}"),
            }
        },
        {"post": {"id": 11, "type": "post", "title": "Two", "content": "<p>none</p>"}},
        {
            "post": {
                "id": 12,
                "type": "post",
                "title": "Three",
                "content": iframe("https://player.vimeo.com/video/5"),
            }
        },
    ]
    body = "".join(json.dumps(line) + "\n" for line in lines).encode()

    api.post("/api/import", body, content_type="application/x-ndjson", status=200)

    assert shapes(api, {"id": 10}) == [youtube(YT)]
    assert videos_of(api, {"id": 11}) == []
    assert shapes(api, {"id": 12}) == [vimeo("5")]


# find_videos on its own --------------------------------------------------------------------


def keys(html, base=BASE):
    return [found.embed_key for found in find_videos(html, base)]


def test_find_videos_returns_the_host_conventions():
    assert find_videos(iframe(f"https://www.youtube.com/embed/{YT}"), BASE) == [
        Found(
            embed_key=f"youtube:{YT}",
            host="youtube",
            player_url=f"https://www.youtube-nocookie.com/embed/{YT}",
            thumbnail_url=f"https://i.ytimg.com/vi/{YT}/hqdefault.jpg",
            page_url=f"https://www.youtube.com/watch?v={YT}",
        )
    ]
    assert find_videos(iframe("https://player.vimeo.com/video/76979871"), BASE) == [
        Found(
            embed_key="vimeo:76979871",
            host="vimeo",
            player_url="https://player.vimeo.com/video/76979871",
            page_url="https://vimeo.com/76979871",
        )
    ]


@pytest.mark.parametrize(
    "html",
    [
        '<video poster="p.jpg" controls src="v.mp4"></video>',
        '<video src="v.mp4" poster="p.jpg"></video>',
        "<video controls\n  poster='p.jpg'\n  src='v.mp4'\n></video>",
        "<video src=v.mp4 poster=p.jpg></video>",
        '<VIDEO SRC="v.mp4" POSTER="p.jpg"></VIDEO>',
        '<Video poster="p.jpg"><Source type="video/mp4" SRC="v.mp4"></Video>',
        '<video poster="p.jpg"><source type="video/mp4" src="v.mp4" /></video>',
        '<video poster="p.jpg"><source src="  v.mp4  "></video>',
    ],
    ids=[
        "poster first",
        "src first",
        "single quotes over lines",
        "unquoted",
        "uppercase",
        "mixed case source",
        "self-closed source",
        "spaces around src",
    ],
)
def test_video_tag_attributes_in_any_order_and_case(html):
    assert find_videos(html, BASE) == [
        Found(
            embed_key=BASE + "v.mp4",
            host="file",
            content_url=BASE + "v.mp4",
            thumbnail_url=BASE + "p.jpg",
            page_url=BASE + "v.mp4",
        )
    ]


def test_uppercase_iframe_tags_are_found():
    html = f'<IFRAME SRC="https://www.youtube.com/embed/{YT}" WIDTH=560></IFRAME>'
    assert keys(html) == [f"youtube:{YT}"]


@pytest.mark.parametrize(
    "html",
    [
        '<video src="javascript:alert(1)"></video>',
        '<video src="JavaScript:alert(1)" poster="p.jpg"></video>',
        '<video><source src="data:video/mp4;base64,AAAA"></video>',
        '<video src="ftp://example.com/a.mp4"></video>',
        '<video src=""></video>',
        "<video controls></video>",
        '<audio><source src="/song.mp3"></audio>',
        '<source src="/loose.mp4">',
    ],
    ids=[
        "javascript",
        "JavaScript",
        "data",
        "ftp",
        "empty src",
        "no src",
        "audio source",
        "source outside video",
    ],
)
def test_video_tags_without_a_usable_http_src_are_ignored(html):
    assert find_videos(html, BASE) == []


def test_a_javascript_src_gives_way_to_the_first_usable_source():
    html = (
        '<video src="javascript:alert(1)"><source src="data:x">'
        '<source src="/real.mp4"><source src="/other.mp4"></video>'
    )
    assert keys(html) == ["http://sitemaps.test/real.mp4"]


def test_each_video_tag_has_its_own_poster():
    html = (
        '<video src="/a.mp4" poster="/a.jpg"></video>'
        '<video src="/b.mp4"></video>'
        '<video poster="/c.jpg"><source src="/c.mp4"></video>'
    )
    assert [(f.content_url, f.thumbnail_url) for f in find_videos(html, BASE)] == [
        ("http://sitemaps.test/a.mp4", "http://sitemaps.test/a.jpg"),
        ("http://sitemaps.test/b.mp4", None),
        ("http://sitemaps.test/c.mp4", "http://sitemaps.test/c.jpg"),
    ]


def test_entities_in_a_src_are_decoded():
    html = '<video src="/v.mp4?a=1&amp;b=2"></video>'
    assert keys(html) == ["http://sitemaps.test/v.mp4?a=1&b=2"]


@pytest.mark.parametrize(
    ("html", "expected"),
    [
        (f"https://youtu.be/{YT}", [YT]),
        (f"https://youtu.be/{YT}?t=1", [YT]),
        (f"https://youtu.be/{YT}&feature=x", [YT]),
        (f"https://youtu.be/{YT}#t=1", [YT]),
        (f"<a href='https://youtu.be/{YT}'>x</a>", [YT]),
        (f"https://youtu.be/{YT3}", [YT3]),
        (f"https://youtu.be/{YT}.", [YT]),
        (f"https://youtu.be/{YT[:10]}", []),  # 10 characters
        (f"https://youtu.be/{YT}x", []),  # 12 characters
        (f"https://www.youtube.com/embed/{YT}-", []),
        (f"https://www.youtube.com/watch?v={YT[:10]}&t=1", []),
        (f"https://www.youtube.com/watch?v={YT}_&t=1", []),
        (f"https://www.youtube.com/shorts/{YT}{YT}", []),
    ],
    ids=[
        "alone",
        "query",
        "ampersand",
        "fragment",
        "quoted",
        "dash and underscore",
        "full stop after",
        "10 characters",
        "12 characters",
        "12 with a dash",
        "watch with 10",
        "watch with 12",
        "shorts with 22",
    ],
)
def test_youtube_ids_have_exactly_11_characters(html, expected):
    assert keys(html) == [f"youtube:{video_id}" for video_id in expected]


@pytest.mark.parametrize(
    "html",
    [
        iframe("https://www.youtube.com/embed/videoseries?list=PLrAXtmErZgOeiKm4sgNOknGvNjby9efdf"),
        iframe("https://www.youtube-nocookie.com/embed/videoseries?si=x&amp;list=PL0123456789"),
        iframe("https://www.youtube.com/embed/live_stream?channel=UC4R8DWoMoI7CAwX8_LjQHig"),
    ],
    ids=["playlist", "nocookie playlist", "live stream"],
)
def test_playlist_and_live_embeds_are_not_videos(html):
    # Eleven characters, like an id, but the names of YouTube's other players.
    assert keys(html) == []


@pytest.mark.parametrize(
    "html",
    [
        "https://notyoutube.com/embed/dQw4w9WgXcQ",
        "https://www.youtube.com.evil.test/embed/dQw4w9WgXcQ",
        "https://www.youtube.com/user/dQw4w9WgXcQ",
        "https://www.youtube.com/watch?vv=dQw4w9WgXcQ",
        "https://notvimeo.com/123456",
        "https://vimeo.com.evil.test/123456",
        "https://vimeo.com/channels/staffpicks",
        "https://vimeo.com/1234567890123",  # longer than any Vimeo id
    ],
)
def test_look_alikes_are_not_videos(html):
    assert keys(f'<a href="{html}">x</a>') == []


def test_vimeo_ids():
    html = (
        '<a href="https://vimeo.com/76979871?share=copy">a</a>'
        '<iframe src="//player.vimeo.com/video/1"></iframe>'
        '<a href="https://vimeo.com/76979871">again</a>'
    )
    assert keys(html) == ["vimeo:76979871", "vimeo:1"]


def test_order_of_appearance_and_each_once():
    html = (
        f"https://youtu.be/{YT2} https://vimeo.com/7 https://youtu.be/{YT} "
        f"https://www.youtube.com/embed/{YT2} https://player.vimeo.com/video/7"
    )
    assert keys(html) == [f"youtube:{YT2}", "vimeo:7", f"youtube:{YT}"]


def test_nothing_in_plain_text():
    assert find_videos("", BASE) == []
    assert find_videos("<p>YouTube, Vimeo and a <b>video</b> tag: &lt;video&gt;</p>", BASE) == []


def test_video_tags_and_embeds_keep_their_order_in_the_content():
    html = (
        "<p>intro</p>\n<video src='/first.mp4'></video>\n"
        '<iframe src="https://www.youtube.com/embed/dQw4w9WgXcQ"></iframe> '
        "<video><source src='/third.mp4'></video>"
    )
    assert [video.embed_key for video in find_videos(html, "http://site.test/post/")] == [
        "http://site.test/first.mp4",
        "youtube:dQw4w9WgXcQ",
        "http://site.test/third.mp4",
    ]
