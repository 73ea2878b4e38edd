"""The change feed (S-705): ``GET /api/changes?since=CURSOR``, as an integrator's mirror
reads it: from 0, then from each answer's ``next``, applying every change to its set of
URLs, which must then be exactly the URLs the served sitemaps list. The model-based test
(``tests/model.py``) follows the feed after any sequence of writes too."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from sqlalchemy import delete, update

from sitemap_server.models import ListedUrl
from sitemap_server.sitemaps.check import check
from sitemap_server.testing import index_locs, url_locs

SITE = "http://sitemaps.test"


class Mirror:
    """What an integrator keeps: the URLs it was told are listed, and its cursor."""

    def __init__(self) -> None:
        self.urls: dict[str, str | None] = {}
        self.cursor = "0"
        self.seen: list[dict[str, Any]] = []

    def follow(self, api: Any, limit: int = 1000) -> list[dict[str, Any]]:
        """Read the feed from the cursor to its end; the changes read."""
        read: list[dict[str, Any]] = []
        while True:
            page = api.get("/api/changes", {"since": self.cursor, "limit": limit}).json
            read.extend(page["changes"])
            for change in page["changes"]:
                if change["change"] == "removed":
                    self.urls.pop(change["url"], None)
                else:
                    self.urls[change["url"]] = change["lastmod"]
            assert page["next"] != self.cursor or not page["changes"]
            self.cursor = page["next"]
            if not page["more"]:
                break
        self.seen.extend(read)
        return read


def listed(app: Any) -> set[str]:
    """Every URL the served sitemaps list, read as a crawler reads them."""
    found: set[str] = set()
    for sitemap in index_locs(app):
        found.update(url_locs(app, sitemap.removeprefix(SITE)))
    return found


def create_post(api: Any, slug: str, day: int = 1, **fields: Any) -> dict[str, Any]:
    body = {"type": "post", "title": slug, "slug": slug, "status": "publish"}
    body |= {"published_at": f"2024-03-{day:02d}T12:00:00+00:00", **fields}
    return api.post_json("/api/posts", body, status=201).json


def test_a_reader_from_0_holds_every_listed_url_each_told_once(api, testapp):
    for day in range(1, 6):
        create_post(api, f"post-{day}", day)
    api.post_json("/api/authors", {"slug": "ada", "name": "Ada"}, status=201)

    mirror = Mirror()
    read = mirror.follow(api)

    assert set(mirror.urls) == listed(testapp)
    assert [c["change"] for c in read] == ["added"] * len(read)
    assert len({c["url"] for c in read}) == len(read)
    post = f"{SITE}/2024/03/post-3/"
    assert mirror.urls[post] == "2024-03-03T12:00:00+00:00"


def test_following_next_tells_what_changed_since(api, testapp):
    posts = [create_post(api, f"post-{day}", day) for day in range(1, 4)]
    mirror = Mirror()
    mirror.follow(api)

    api.patch_json(f"/api/posts/{posts[0]['id']}", {"modified_at": "2025-01-01T00:00:00Z"})
    api.delete(f"/api/posts/{posts[1]['id']}", status=204)
    moved = api.patch_json(f"/api/posts/{posts[2]['id']}", {"slug": "moved"}).json
    read = {c["url"]: c for c in mirror.follow(api)}

    assert read[posts[0]["permalink"]]["change"] == "updated"
    assert read[posts[0]["permalink"]]["lastmod"] == "2025-01-01T00:00:00+00:00"
    assert read[posts[1]["permalink"]]["change"] == "removed"
    assert read[posts[1]["permalink"]]["lastmod"] == "2024-03-02T12:00:00+00:00"
    assert read[posts[2]["permalink"]]["change"] == "removed"
    assert read[moved["permalink"]]["change"] == "added"
    assert read[f"{SITE}/"]["change"] == "updated"  # the home page's date is the newest post's
    assert set(mirror.urls) == listed(testapp)
    assert mirror.follow(api) == []  # nothing since


def test_small_pages_read_the_same_feed(api, testapp):
    for day in range(1, 8):
        create_post(api, f"post-{day}", day)
    whole, paged = Mirror(), Mirror()

    whole.follow(api)
    paged.follow(api, limit=2)

    assert paged.seen == whole.seen and paged.cursor == whole.cursor


def test_a_url_listed_and_removed_between_two_reads_is_one_tombstone(api, testapp):
    mirror = Mirror()
    mirror.follow(api)
    post = create_post(api, "brief")
    assert post["permalink"] in listed(testapp)  # applied: the sitemaps listed it
    api.delete(f"/api/posts/{post['id']}", status=204)
    never = create_post(api, "never")  # created and deleted before the sitemaps listed it
    api.delete(f"/api/posts/{never['id']}", status=204)

    read = mirror.follow(api)

    told = [(c["url"], c["change"]) for c in read if "brief" in c["url"] or "never" in c["url"]]
    assert told == [(post["permalink"], "removed")]


def test_a_private_site_lists_nothing_and_the_feed_says_so(api, testapp):
    for day in range(1, 4):
        create_post(api, f"post-{day}", day)
    mirror = Mirror()
    mirror.follow(api)
    before = set(mirror.urls)

    api.patch_json("/api/settings", {"private": True}, status=200)
    read = mirror.follow(api)

    assert {c["url"] for c in read} == before and {c["change"] for c in read} == {"removed"}
    assert mirror.urls == {} and listed(testapp) == set()
    assert api.get("/api/changes", {"since": mirror.cursor}).json["private"] is True

    api.patch_json("/api/settings", {"private": False}, status=200)
    mirror.follow(api)
    assert set(mirror.urls) == before == listed(testapp)


def test_a_cursor_of_another_site_url_is_gone(api, testapp):
    create_post(api, "post-1")
    mirror = Mirror()
    mirror.follow(api)

    api.patch_json("/api/settings", {"site_url": "https://moved.example"}, status=200)
    refused = api.get("/api/changes", {"since": mirror.cursor}, status=410).json

    assert refused["errors"][0]["field"] == "since"
    assert "since=0" in refused["detail"]
    again = Mirror()
    again.follow(api)
    assert "https://moved.example/2024/03/post-1/" in again.urls


@pytest.mark.parametrize(
    ("since", "status"),
    [
        ("1", 400),
        ("-1", 400),
        ("abc.1", 400),
        ("0123456789ab", 400),
        ("0123456789ab.1", 410),  # another feed
        ("0123456789ab.99999999999999999999", 400),
    ],
)
def test_a_cursor_the_feed_never_gave_is_refused(api, since, status):
    refused = api.get("/api/changes", {"since": since}, status=status).json
    assert refused["errors"][0]["field"] == "since"


def test_a_cursor_past_the_end_is_gone(api):
    create_post(api, "post-1")
    cursor = api.get("/api/changes").json["next"]
    name, _, number = cursor.partition(".")

    api.get("/api/changes", {"since": f"{name}.{int(number) + 1}"}, status=410)


def test_tombstones_are_kept_keep_days_then_old_cursors_start_again(api, app_for, clock):
    app = app_for(signed_in=True, **{"sitemap_server.changes.keep_days": "2"})
    post = create_post(app, "short-lived")
    create_post(app, "kept", 2)
    mirror = Mirror()
    mirror.follow(app)
    app.delete(f"/api/posts/{post['id']}", status=204)
    recent = Mirror()
    recent.follow(app)  # at the end: a cursor past the tombstone

    clock.advance(days=3)
    create_post(app, "later", 3)  # a pass of the maintainer forgets the tombstone

    refused = app.get("/api/changes", {"since": mirror.cursor}, status=410).json
    assert "keep_days" in refused["detail"]
    read = recent.follow(app)  # a cursor after the tombstone still reads on
    assert [c["url"] for c in read if "later" in c["url"]]
    fresh = Mirror()
    fresh.follow(app)
    assert post["permalink"] not in {c["url"] for c in fresh.seen}
    assert set(fresh.urls) == listed(app)


def test_a_cursor_reads_on_in_another_process(api, app_for):
    create_post(api, "post-1")
    mirror = Mirror()
    mirror.follow(api)
    create_post(api, "post-2", 2)

    other = app_for(signed_in=True)
    read = mirror.follow(other)

    assert f"{SITE}/2024/03/post-2/" in {c["url"] for c in read}


def test_the_feed_needs_a_token(testapp):
    testapp.get("/api/changes", status=401)


def test_check_reports_a_journal_apart_from_the_sitemaps_and_repair_mends_it(
    api, testapp, app_session
):
    posts = [create_post(api, f"post-{day}", day) for day in range(1, 4)]
    listed(testapp)  # applied
    first = posts[0]["permalink"].removeprefix(SITE)
    with app_session.begin():
        app_session.execute(delete(ListedUrl).where(ListedUrl.path == first))
        app_session.execute(
            update(ListedUrl)
            .where(ListedUrl.path == posts[1]["permalink"].removeprefix(SITE))
            .values(lastmod=datetime(2000, 1, 1, tzinfo=UTC))
        )
        app_session.add(
            ListedUrl(path="/never/", seq=10_000, added_seq=10_000, changed_at=datetime.now(UTC))
        )

    with app_session.begin():
        report = check(app_session)
    found = {(d.provider, d.where, d.field, d.stored, d.expected) for d in report.differences}
    assert found == {
        ("change feed", first, "listed", False, True),
        (
            "change feed",
            posts[1]["permalink"].removeprefix(SITE),
            "lastmod",
            datetime(2000, 1, 1, tzinfo=UTC),
            datetime(2024, 3, 2, 12, tzinfo=UTC),
        ),
        ("change feed", "/never/", "listed", True, False),
    }

    with app_session.begin():
        assert check(app_session, repair=True).repaired
    with app_session.begin():
        assert check(app_session).differences == []
    mirror = Mirror()
    mirror.follow(api)
    assert set(mirror.urls) == listed(testapp)
