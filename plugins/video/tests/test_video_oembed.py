"""Metadata of detected YouTube and Vimeo videos, fetched over oEmbed (S-503).

The hosts are played by ``oembed_server``, a real HTTP server on 127.0.0.1 (conftest.py);
``oembed_api`` is the admin API of an application whose endpoints point at it. Saving a
post queues the fetches; the core's worker sends them after commit: ``run_worker`` is one
pass of it, here, so what a test sees before that pass is the state before the answer. A
``threading.Event`` holds an answer back where a worker runs beside the requests.
"""

from __future__ import annotations

import threading
import time
from datetime import UTC, datetime

import pytest
from sqlalchemy import select
from webtest import TestApp

from sitemap_server.app import main, site_of_app
from sitemap_server.services import posts as post_service
from sitemap_server.testing import forget_rendered, free_port, parse_sitemap, run_worker
from sitemap_server_video.models import Video

NS = {
    "sm": "http://www.sitemaps.org/schemas/sitemap/0.9",
    "video": "http://www.google.com/schemas/sitemap-video/1.1",
}
VIMEO_ID = "76979871"
VIMEO_PAGE = f"https://vimeo.com/{VIMEO_ID}"
VIMEO_PLAYER = f"https://player.vimeo.com/video/{VIMEO_ID}"
VIMEO_EMBED = f'<iframe src="{VIMEO_PLAYER}" width="640" height="360"></iframe>'
# What Vimeo's endpoint answers (trimmed), upload_date in its own format.
VIMEO_ANSWER = {
    "type": "video",
    "version": "1.0",
    "provider_name": "Vimeo",
    "title": "The New Vimeo Player (You Know, For Videos)",
    "author_name": "Vimeo",
    "author_url": "https://vimeo.com/staff",
    "html": f'<iframe src="{VIMEO_PLAYER}"></iframe>',
    "width": 640,
    "height": 360,
    "duration": 62,
    "description": "It may look (mostly) the same on the surface, but under the hood...",
    "thumbnail_url": "https://i.vimeocdn.com/video/452001751-8216e0571c_640",
    "thumbnail_width": 640,
    "thumbnail_height": 360,
    "upload_date": "2013-10-15 14:08:29",
    "video_id": 76979871,
}
YT = "dQw4w9WgXcQ"
YT_PAGE = f"https://www.youtube.com/watch?v={YT}"
YT_ANSWER = {
    "title": "Rick Astley - Never Gonna Give You Up (Official Music Video)",
    "author_name": "Rick Astley",
    "author_url": "https://www.youtube.com/@RickAstleyYT",
    "type": "video",
    "height": 113,
    "width": 200,
    "provider_name": "YouTube",
    "thumbnail_url": f"https://i.ytimg.com/vi/{YT}/hqdefault.jpg?from=oembed",
    "html": "<iframe></iframe>",
}
QUICK = 1.5  # seconds: a request that waited on a host would take its 2 s timeout or more


# Helpers --------------------------------------------------------------------------------


def create_post(client, content, **fields):
    body = {
        "type": "post",
        "title": "A post",
        "status": "publish",
        "published_at": "2024-03-01T12:00:00+00:00",
        "content": content,
        **fields,
    }
    return client.post_json("/api/posts", body, status=201).json


def videos_of(client, post):
    return client.get(f"/api/posts/{post['id']}/videos", status=200).json["items"]


def listed(client):
    """``{loc: [<video:video> as {child: text}]}`` of /video-sitemap.xml."""
    root = parse_sitemap(client.get("/video-sitemap.xml", status=200).body)
    return {
        url.findtext("sm:loc", namespaces=NS): [
            {child.tag.rpartition("}")[2]: child.text for child in video}
            for video in url.findall("video:video", NS)
        ]
        for url in root.findall("sm:url", NS)
    }


def held(answer):
    """An answer the server sends only once the returned event is set (5 s at most)."""
    gate = threading.Event()

    def respond(page):
        gate.wait(5)
        return answer

    return gate, respond


def timed(call):
    started = time.monotonic()
    result = call()
    return result, time.monotonic() - started


@pytest.fixture
def release():
    """Events a test holds answers back with; all set at the end, whatever happened."""
    gates = []
    yield gates.append
    for gate in gates:
        gate.set()


@pytest.fixture(scope="module")
def unreachable_app(engine, app_settings):
    """An application whose oEmbed endpoints are a port nobody listens on."""
    dead = f"http://127.0.0.1:{free_port()}"
    app = main(
        {},
        **{
            **app_settings,
            "sitemap_server_video.oembed.youtube": f"{dead}/youtube",
            "sitemap_server_video.oembed.vimeo": f"{dead}/vimeo",
            "sitemap_server_video.oembed.timeout": "2",
        },
    )
    yield app
    site_of_app(app).close()


@pytest.fixture
def unreachable_api(clean_database, unreachable_app, api_token):
    forget_rendered(unreachable_app)
    client = TestApp(unreachable_app)
    client.authorization = ("Bearer", api_token)
    return client


# Fetched and stored ----------------------------------------------------------------------


def test_a_vimeo_video_gets_its_metadata(oembed_api, oembed_server):
    oembed_server.answers[VIMEO_PAGE] = VIMEO_ANSWER

    post = create_post(oembed_api, VIMEO_EMBED)

    # Before the answer: the video is there, but a Vimeo video has no thumbnail yet.
    [before] = videos_of(oembed_api, post)
    assert before["fetched_at"] is None
    assert before["thumbnail_url"] is None
    assert before["listable"] is False
    assert post["permalink"] not in listed(oembed_api)

    assert oembed_server.requests == []
    [attempt] = run_worker(oembed_api)
    assert (attempt["channel"], attempt["outcome"]) == ("video.oembed", "sent")

    [video] = videos_of(oembed_api, post)
    assert oembed_server.requests == [VIMEO_PAGE]
    assert video["id"] == before["id"]
    assert video["title"] == VIMEO_ANSWER["title"]
    assert video["thumbnail_url"] == VIMEO_ANSWER["thumbnail_url"]
    assert video["uploader"] == "Vimeo"
    assert video["uploader_url"] == "https://vimeo.com/staff"
    assert video["duration"] == 62
    assert video["width"] == 640
    assert video["height"] == 360
    assert video["host_description"] == VIMEO_ANSWER["description"]
    assert datetime.fromisoformat(video["published_at"]) == datetime(
        2013, 10, 15, 14, 8, 29, tzinfo=UTC
    )
    assert video["fetched_at"] is not None
    assert video["fetch_error"] is None
    assert video["listable"] is True
    # What the user set nothing for keeps its detected value.
    assert video["player_url"] == VIMEO_PLAYER
    assert video["page_url"] == VIMEO_PAGE
    assert video["description"] is None

    [entry] = listed(oembed_api)[post["permalink"]]
    assert entry["thumbnail_loc"] == VIMEO_ANSWER["thumbnail_url"]
    assert entry["title"] == VIMEO_ANSWER["title"]
    assert entry["description"] == VIMEO_ANSWER["description"]
    assert entry["player_loc"] == VIMEO_PLAYER
    assert entry["duration"] == "62"
    assert entry["uploader"] == "Vimeo"
    assert datetime.fromisoformat(entry["publication_date"]) == datetime(
        2013, 10, 15, 14, 8, 29, tzinfo=UTC
    )


def test_the_request_url_is_the_videos_page(oembed_api, oembed_server):
    oembed_server.answers[VIMEO_PAGE] = VIMEO_ANSWER
    oembed_server.answers[YT_PAGE] = YT_ANSWER

    create_post(oembed_api, VIMEO_EMBED + f'<a href="https://youtu.be/{YT}">also</a>')
    run_worker(oembed_api)

    assert sorted(oembed_server.requests) == sorted([VIMEO_PAGE, YT_PAGE])


def test_a_youtube_video_keeps_its_conventional_thumbnail(oembed_api, oembed_server):
    oembed_server.answers[YT_PAGE] = YT_ANSWER

    post = create_post(oembed_api, f'<iframe src="https://www.youtube.com/embed/{YT}"></iframe>')
    run_worker(oembed_api)

    [video] = videos_of(oembed_api, post)
    assert oembed_server.requests == [YT_PAGE]
    assert video["title"] == YT_ANSWER["title"]
    assert video["uploader"] == "Rick Astley"
    assert video["thumbnail_url"] == f"https://i.ytimg.com/vi/{YT}/hqdefault.jpg"
    assert video["duration"] is None  # YouTube does not say
    assert video["fetched_at"] is not None
    [entry] = listed(oembed_api)[post["permalink"]]
    assert entry["title"] == YT_ANSWER["title"]


def test_a_video_file_and_a_manual_video_are_never_fetched(oembed_api, oembed_server):
    post = create_post(
        oembed_api, '<video src="/a.mp4" poster="/a.jpg"></video>', slug="with-a-file"
    )
    oembed_api.post_json(
        f"/api/posts/{post['id']}/videos",
        {"player_url": VIMEO_PLAYER, "page_url": VIMEO_PAGE, "title": "By hand"},
        status=201,
    )
    run_worker(oembed_api)

    assert oembed_server.requests == []
    assert [v["fetched_at"] for v in videos_of(oembed_api, post)] == [None, None]


def test_a_fetched_video_is_not_fetched_again(oembed_api, oembed_server):
    oembed_server.answers[VIMEO_PAGE] = VIMEO_ANSWER
    post = create_post(oembed_api, VIMEO_EMBED)
    run_worker(oembed_api)
    [first] = videos_of(oembed_api, post)

    oembed_api.patch_json(
        f"/api/posts/{post['id']}", {"content": VIMEO_EMBED + "<p>more</p>"}, status=200
    )
    run_worker(oembed_api)

    assert oembed_server.requests == [VIMEO_PAGE]
    assert videos_of(oembed_api, post) == [first]


# What was set by hand wins ---------------------------------------------------------------


def test_fields_set_by_hand_are_not_overwritten(oembed_api, oembed_server):
    oembed_server.answers[VIMEO_PAGE] = VIMEO_ANSWER
    post = create_post(oembed_api, VIMEO_EMBED)
    [video] = videos_of(oembed_api, post)

    # Edited while the host has not answered yet.
    oembed_api.patch_json(
        f"/api/videos/{video['id']}",
        {"title": "My own title", "duration": 60, "thumbnail_url": "https://cdn.example.com/t.jpg"},
        status=200,
    )
    run_worker(oembed_api)

    [after] = videos_of(oembed_api, post)
    assert after["title"] == "My own title"
    assert after["duration"] == 60
    assert after["thumbnail_url"] == "https://cdn.example.com/t.jpg"
    # The rest came from the host.
    assert after["uploader"] == "Vimeo"
    assert after["host_description"] == VIMEO_ANSWER["description"]
    assert after["fetched_at"] is not None
    [entry] = listed(oembed_api)[post["permalink"]]
    assert entry["title"] == "My own title"
    assert entry["duration"] == "60"


def test_a_video_deleted_before_the_answer_stays_deleted(oembed_api, oembed_server):
    oembed_server.answers[VIMEO_PAGE] = VIMEO_ANSWER
    post = create_post(oembed_api, VIMEO_EMBED)

    oembed_api.patch_json(f"/api/posts/{post['id']}", {"content": "<p>none</p>"}, status=200)
    run_worker(oembed_api)

    assert videos_of(oembed_api, post) == []
    assert post["permalink"] not in listed(oembed_api)


def test_what_the_host_says_is_checked(oembed_api, oembed_server):
    oembed_server.answers[VIMEO_PAGE] = {
        "title": "  Spaces around  ",
        "thumbnail_url": "javascript:alert(1)",
        "author_name": "",
        "author_url": "ftp://example.com/me",
        "description": "Nul\u0000 inside",
        "duration": "-3",
        "width": True,
        "height": "360",
        "upload_date": "last week",
    }

    post = create_post(oembed_api, VIMEO_EMBED)
    run_worker(oembed_api)

    [video] = videos_of(oembed_api, post)
    assert video["fetch_error"] is None
    assert video["fetched_at"] is not None
    assert video["title"] == "Spaces around"
    assert video["thumbnail_url"] is None
    assert video["uploader"] is None
    assert video["uploader_url"] is None
    assert video["host_description"] == "Nul inside"
    assert video["duration"] is None
    assert video["width"] is None
    assert video["height"] == 360
    assert video["published_at"] is None
    assert video["listable"] is False
    assert post["permalink"] not in listed(oembed_api)


@pytest.mark.parametrize(
    "upload_date", ["9999-12-31 23:59:59", "0001-01-01T00:00:00+05:00", "0999-12-31T23:59:59Z"]
)
def test_an_upload_date_out_of_the_range_is_dropped(oembed_api, oembed_server, upload_date):
    """A host's date outside the range every date-time is held to (issue 29) is dropped
    like an unreadable one, and the video sitemap is served all the same."""
    oembed_server.answers[VIMEO_PAGE] = {**VIMEO_ANSWER, "upload_date": upload_date}
    post = create_post(oembed_api, VIMEO_EMBED)
    run_worker(oembed_api)

    [video] = videos_of(oembed_api, post)
    assert video["fetch_error"] is None
    assert video["published_at"] is None
    assert post["permalink"] in listed(oembed_api)


# The host fails ---------------------------------------------------------------------------


@pytest.mark.parametrize("status", [500, 404, 403])
def test_an_error_answer_is_recorded(oembed_api, oembed_server, status):
    oembed_server.answers[VIMEO_PAGE] = status

    post, elapsed = timed(lambda: create_post(oembed_api, VIMEO_EMBED))
    run_worker(oembed_api)

    assert elapsed < QUICK
    [video] = videos_of(oembed_api, post)
    assert oembed_server.requests == [VIMEO_PAGE]
    assert str(status) in video["fetch_error"]
    assert video["fetched_at"] is None
    assert video["title"] is None
    assert video["listable"] is False
    assert post["permalink"] not in listed(oembed_api)


def test_an_answer_that_is_not_an_object_is_recorded(oembed_api, oembed_server):
    oembed_server.answers[VIMEO_PAGE] = ["not", "an", "object"]

    post = create_post(oembed_api, VIMEO_EMBED)
    run_worker(oembed_api)

    [video] = videos_of(oembed_api, post)
    assert "not a JSON object" in video["fetch_error"]
    assert video["fetched_at"] is None


def test_a_failed_fetch_is_tried_again_when_the_post_is_saved(oembed_api, oembed_server):
    oembed_server.answers[VIMEO_PAGE] = 500
    post = create_post(oembed_api, VIMEO_EMBED)
    run_worker(oembed_api)
    assert videos_of(oembed_api, post)[0]["fetch_error"]

    oembed_server.answers[VIMEO_PAGE] = VIMEO_ANSWER
    oembed_api.patch_json(f"/api/posts/{post['id']}", {"title": "Saved again"}, status=200)
    run_worker(oembed_api)

    [video] = videos_of(oembed_api, post)
    assert oembed_server.requests == [VIMEO_PAGE, VIMEO_PAGE]
    assert video["fetch_error"] is None
    assert video["title"] == VIMEO_ANSWER["title"]
    assert post["permalink"] in listed(oembed_api)


def test_one_failure_does_not_spoil_the_others(oembed_api, oembed_server):
    oembed_server.answers[VIMEO_PAGE] = 500
    oembed_server.answers[YT_PAGE] = YT_ANSWER

    post = create_post(oembed_api, VIMEO_EMBED + f"<p>https://youtu.be/{YT}</p>")
    run_worker(oembed_api)

    vimeo_video, youtube_video = videos_of(oembed_api, post)
    assert "500" in vimeo_video["fetch_error"]
    assert youtube_video["title"] == YT_ANSWER["title"]
    assert youtube_video["fetch_error"] is None
    assert [e["player_loc"] for e in listed(oembed_api)[post["permalink"]]] == [
        f"https://www.youtube-nocookie.com/embed/{YT}"
    ]


def test_an_unreachable_host_is_recorded(unreachable_api):
    post, elapsed = timed(lambda: create_post(unreachable_api, VIMEO_EMBED))
    run_worker(unreachable_api)

    assert elapsed < QUICK
    [video] = videos_of(unreachable_api, post)
    assert video["fetch_error"].startswith("http://127.0.0.1:")
    assert video["fetched_at"] is None
    assert video["listable"] is False
    assert post["permalink"] not in listed(unreachable_api)


def test_the_admin_request_does_not_wait_for_a_slow_host(oembed_api, oembed_server):
    oembed_server.answers[VIMEO_PAGE] = ("sleep", 3, VIMEO_ANSWER)

    post, elapsed = timed(lambda: create_post(oembed_api, VIMEO_EMBED))
    videos, read_elapsed = timed(lambda: videos_of(oembed_api, post))

    assert elapsed < QUICK
    assert read_elapsed < QUICK
    assert videos[0]["fetched_at"] is None
    run_worker(oembed_api)
    # The app gives up after its timeout (2 s here), before the host's 3 s.
    [video] = videos_of(oembed_api, post)
    assert oembed_server.requests == [VIMEO_PAGE]
    assert "timed out" in video["fetch_error"].lower()
    assert video["title"] is None


def test_a_slow_host_does_not_hold_other_writes(oembed_api, oembed_server, release):
    gate, respond = held(VIMEO_ANSWER)
    release(gate)
    oembed_server.answers[VIMEO_PAGE] = respond
    post = create_post(oembed_api, VIMEO_EMBED)
    # The worker waits for the host's answer while the admin API goes on writing.
    worker = threading.Thread(target=run_worker, args=(oembed_api,))
    worker.start()

    _, elapsed = timed(
        lambda: (
            [create_post(oembed_api, "<p>another</p>", title=f"Other {n}") for n in range(3)]
            + [oembed_api.patch_json(f"/api/posts/{post['id']}", {"title": "Renamed"}, status=200)]
        )
    )
    gate.set()
    worker.join(10)

    assert elapsed < 3 * QUICK
    [video] = videos_of(oembed_api, post)
    assert video["title"] == VIMEO_ANSWER["title"]
    assert oembed_api.get(f"/api/posts/{post['id']}").json["title"] == "Renamed"


# Nothing is fetched ----------------------------------------------------------------------


def test_rejected_requests_fetch_nothing(oembed_api, oembed_server, db_snapshot):
    oembed_server.answers[VIMEO_PAGE] = VIMEO_ANSWER
    run_worker(oembed_api)  # what a worker writes on its own (the sitemaps' versions)
    before = db_snapshot()

    oembed_api.post_json(
        "/api/posts", {"type": "post", "title": "x", "content": VIMEO_EMBED, "x": 1}, status=400
    )
    oembed_api.post_json(
        "/api/posts",
        {"type": "post", "title": "x", "content": VIMEO_EMBED, "author": 9},
        status=422,
    )
    run_worker(oembed_api)

    assert oembed_server.requests == []
    assert db_snapshot() == before


@pytest.mark.parametrize("outcome", ["rollback", "commit"])
def test_only_a_committed_save_fetches(oembed_app, oembed_server, clean_database, outcome):
    """Detection ran in the transaction (the row exists in it); only a commit fetches."""
    oembed_server.answers[VIMEO_PAGE] = VIMEO_ANSWER
    session = site_of_app(oembed_app).sessions()
    try:
        post = post_service.create_post(
            session,
            {
                "type": "post",
                "title": "In a transaction",
                "content": VIMEO_EMBED,
                "status": "publish",
                "published_at": "2024-03-01T12:00:00+00:00",
            },
        )
        found = session.scalars(select(Video.page_url).where(Video.post_id == post.id)).all()
        assert found == [VIMEO_PAGE]
        getattr(session, outcome)()
    finally:
        session.close()
    run_worker(oembed_app)

    assert oembed_server.requests == ([VIMEO_PAGE] if outcome == "commit" else [])


def test_without_endpoints_nothing_is_fetched(api, oembed_server):
    oembed_server.answers[VIMEO_PAGE] = VIMEO_ANSWER
    oembed_server.answers[YT_PAGE] = YT_ANSWER

    post = create_post(api, VIMEO_EMBED + f"<p>https://youtu.be/{YT}</p>")
    run_worker(api)

    assert oembed_server.requests == []
    for video in videos_of(api, post):
        assert video["fetched_at"] is None
        assert video["fetch_error"] is None
        assert video["title"] is None


# A durable job of the core's worker -------------------------------------------------------


def test_a_fetch_is_queued_by_the_save_and_waits_for_a_worker(oembed_api, oembed_server):
    """The fetch is a row of the outbox, committed with the post: no thread holds it, so a
    process that dies after the save loses nothing, and whichever worker runs next sends
    it, recorded like a notification."""
    oembed_server.answers[VIMEO_PAGE] = VIMEO_ANSWER
    post = create_post(oembed_api, VIMEO_EMBED)

    state = oembed_api.get("/api/notifications").json
    [queued] = [n for n in state["notifications"] if n["channel"] == "video.oembed"]
    assert (queued["status"], queued["attempts"]) == ("pending", 0)
    assert "video.oembed" not in state["targets"]  # where changes are announced
    assert oembed_server.requests == []

    run_worker(oembed_api)
    [sent] = oembed_api.get("/api/notifications").json["notifications"]
    assert (sent["id"], sent["status"], sent["attempts"]) == (queued["id"], "sent", 1)
    assert videos_of(oembed_api, post)[0]["title"] == VIMEO_ANSWER["title"]


def test_two_posts_of_one_video_page_are_fetched_once(oembed_api, oembed_server):
    oembed_server.answers[VIMEO_PAGE] = VIMEO_ANSWER
    first = create_post(oembed_api, VIMEO_EMBED, slug="first")
    second = create_post(oembed_api, VIMEO_EMBED, slug="second")

    run_worker(oembed_api)

    assert oembed_server.requests == [VIMEO_PAGE]
    for post in (first, second):
        assert videos_of(oembed_api, post)[0]["title"] == VIMEO_ANSWER["title"]


def test_the_settings_are_declared_checked_and_documented(app_settings):
    from pathlib import Path

    from sitemap_server_video import oembed

    readme = (Path(oembed.__file__).resolve().parents[1] / "README.md").read_text()
    for setting in oembed.sitemap_settings():
        assert f"| `{setting.name}` |" in readme, setting.name
    bad = {**app_settings, "sitemap_server_video.oembed.vimeo": "vimeo.com/api"}
    with pytest.raises(ValueError, match=r"sitemap_server_video\.oembed\.vimeo='vimeo\.com/api'"):
        main({}, **bad)
