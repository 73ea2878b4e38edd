"""``sitemap-server sync-wordpress`` against a real WordPress (issue 35).

A throwaway WordPress (Debian's, with MariaDB, php-fpm and nginx: ``testing.wordpress``)
runs for each test. Content is written through WordPress's own REST API, as its editor
writes it. After a sync, the sitemaps must be those the same content gives when imported
from a fresh WXR export of that WordPress (``export_wp``, what Tools → Export writes),
document by document, and every listed post and page must be at WordPress's own ``link``
for it, on this site's host.
"""

from __future__ import annotations

import json
import threading
import unicodedata
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import unquote, urlsplit

import pytest
import requests
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from sitemap_server.app import site_of_app
from sitemap_server.models import ImportedObject, Post, WordPressSync
from sitemap_server.testing import (
    SITE_URL,
    SITEMAP_NS,
    client,
    fetch_sitemap,
    free_port,
    http_server,
    index_locs,
    reset_database,
    server_environment,
    wait_until,
    worker_process,
)
from sitemap_server.testing.wordpress import WordPress, wordpress
from sitemap_server.wordpress import rest, sync

NS = {"s": SITEMAP_NS, "image": "http://www.google.com/schemas/sitemap-image/1.1"}


@pytest.fixture
def wp() -> Iterator[WordPress]:
    """A WordPress of its own for each test (about two seconds to start)."""
    with wordpress() as found:
        yield found


@pytest.fixture
def as_admin(wp: WordPress, monkeypatch: pytest.MonkeyPatch) -> WordPress:
    """The sync reads WordPress as its administrator (an application password)."""
    monkeypatch.setenv(sync.USER, wp.user)
    monkeypatch.setenv(sync.PASSWORD, wp.password)
    return wp


def documents(app: Any) -> dict[str, list[tuple[str, str | None, tuple[str, ...]]]]:
    """Every sitemap page the index lists: its entries (loc, lastmod, images), as a
    crawler reads them (each document valid against the XSDs)."""
    found = {}
    for loc in index_locs(app):
        path = "/" + loc.removeprefix(SITE_URL + "/")
        root = fetch_sitemap(app, path)
        found[path] = [
            (
                url.findtext("s:loc", namespaces=NS),
                url.findtext("s:lastmod", namespaces=NS),
                tuple(i.text for i in url.iterfind("image:image/image:loc", NS)),
            )
            for url in root.iterfind("s:url", NS)
        ]
    return found


def synced(cli: Any, wp: WordPress) -> str:
    status, out, err = cli("sync-wordpress", "--quiet", wp.url)
    assert status == 0, err
    return out


def exported(cli: Any, wp: WordPress, tmp_path: Any, engine: Any, seed: Any) -> Any:
    """The sitemaps of a fresh site that imported a fresh export of ``wp``."""
    reset_database(engine, seed)
    path = tmp_path / "export.xml"
    path.write_bytes(wp.export())
    status, _out, err = cli("import-wordpress", "--quiet", path)
    assert status == 0, err


def write(wp: WordPress, route: str, **fields: Any) -> dict[str, Any]:
    return dict(wp.api("POST", f"/wp/v2/{route}", json=fields))


def normal(url: str) -> str:
    """A URL as compared here: percent-escapes decoded (WordPress writes them in lower
    case, a sitemap in upper), NFC."""
    return unicodedata.normalize("NFC", unquote(url))


def wordpress_links(wp: WordPress) -> set[str]:
    """WordPress's own links of its published posts, pages and books, on this site's host."""
    found = set()
    for route in ("posts", "pages", "books"):
        for item in wp.api("GET", f"/wp/v2/{route}", params={"per_page": 100}):
            if not item["content"]["protected"]:
                found.add(normal(SITE_URL + urlsplit(item["link"]).path))
    return found


def listed(docs: dict[str, Any], *providers: str) -> set[str]:
    return {
        normal(loc)
        for path, entries in docs.items()
        if path.lstrip("/").split("-sitemap")[0] in providers
        for loc, _lastmod, _images in entries
    }


@pytest.fixture
def site_content(wp: WordPress) -> dict[str, Any]:
    """What an editor writes: a category under another, a tag, posts (one with a Cyrillic
    title, so a Unicode slug; one scheduled, one draft, one private, one with a
    password), pages of equal slugs under different parents, a book (a custom post
    type) in a genre under another (a custom taxonomy)."""
    travel = write(wp, "categories", name="Travel")
    japan = write(wp, "categories", name="Japan", parent=travel["id"])
    tag = write(wp, "tags", name="Temples")
    made = {
        "kyoto": write(
            wp, "posts", title="Kyoto", status="publish", categories=[japan["id"]], tags=[tag["id"]]
        ),
        "moscow": write(wp, "posts", title="Москва зимой", status="publish"),
        "later": write(wp, "posts", title="Later", status="future", date_gmt="2031-01-01T00:00:00"),
        "draft": write(wp, "posts", title="Draft", status="draft"),
        "private": write(wp, "posts", title="Private", status="private"),
        "secret": write(wp, "posts", title="Secret", status="publish", password="pw"),
        "about": write(wp, "pages", title="About", status="publish"),
        "careers": write(wp, "pages", title="Careers", status="publish"),
    }
    for parent in ("about", "careers"):
        made[f"{parent}-team"] = write(
            wp, "pages", title="Team", slug="team", status="publish", parent=made[parent]["id"]
        )
    fiction = write(wp, "genre", name="Fiction")
    novels = write(wp, "genre", name="Novels", parent=fiction["id"])
    made["book"] = write(wp, "books", title="Dune", status="publish", genre=[novels["id"]])
    return made


def test_a_synced_wordpress_has_the_sitemaps_of_its_export(
    cli, as_admin, site_content, wsgi_app, tmp_path, engine, _migrated_rows
):
    out = synced(cli, as_admin)
    assert "requests" in out
    after_sync = documents(client(wsgi_app))
    locs = listed(after_sync, "post", "page", "book")
    assert locs - {SITE_URL + "/"} == wordpress_links(as_admin)
    assert {
        SITE_URL + "/about/team/",
        SITE_URL + "/careers/team/",
    } <= locs
    assert not any("later" in loc or "draft" in loc or "private" in loc for loc in locs)
    assert normal(SITE_URL + "/books/dune/") in listed(after_sync, "book")
    assert normal(SITE_URL + "/genre/fiction/novels/") in listed(after_sync, "genre")

    exported(cli, as_admin, tmp_path, engine, _migrated_rows)
    assert documents(client(wsgi_app)) == after_sync


def test_each_kind_of_change_in_wordpress_reaches_the_sitemaps(
    cli, as_admin, site_content, wsgi_app, tmp_path, engine, _migrated_rows
):
    wp = as_admin
    synced(cli, wp)
    made = site_content
    write(wp, f"posts/{made['kyoto']['id']}", title="Kyoto in autumn")
    write(wp, f"pages/{made['about']['id']}", slug="about-us")  # its child moves with it
    write(wp, f"pages/{made['careers-team']['id']}", parent=made["about"]["id"], slug="crew")
    write(wp, f"posts/{made['draft']['id']}", status="future", date_gmt="2032-01-01T00:00:00")
    write(wp, f"posts/{made['moscow']['id']}", status="draft")  # unpublished
    wp.api("DELETE", f"/wp/v2/posts/{made['secret']['id']}")  # trashed
    wp.api("DELETE", f"/wp/v2/pages/{made['careers']['id']}", params={"force": "true"})
    new = write(wp, "posts", title="Osaka", status="publish")

    synced(cli, wp)
    after_sync = documents(client(wsgi_app))
    locs = listed(after_sync, "post", "page", "book")
    assert SITE_URL + "/about-us/team/" in locs and SITE_URL + "/about-us/crew/" in locs
    assert SITE_URL + "/about/team/" not in locs
    assert SITE_URL + "/careers/" not in locs
    assert normal(SITE_URL + urlsplit(new["link"]).path) in locs
    assert not any("москва" in loc.lower() for loc in locs)
    assert locs - {SITE_URL + "/"} == wordpress_links(wp)

    exported(cli, wp, tmp_path, engine, _migrated_rows)
    assert documents(client(wsgi_app)) == after_sync


def test_the_sync_deletes_only_what_it_made(cli, as_admin, api, testapp, dbsession):
    wp = as_admin
    post = write(wp, "posts", title="Synced", status="publish")
    synced(cli, wp)
    ours = api.post_json(
        "/api/posts",
        {"type": "post", "status": "publish", "title": "Ours", "slug": "ours"},
        status=201,
    ).json["id"]
    wp.api("DELETE", f"/wp/v2/posts/{post['id']}", params={"force": "true"})
    synced(cli, wp)
    assert dbsession.get(Post, ours) is not None
    assert dbsession.get(Post, post["id"]) is None
    assert not dbsession.scalar(
        select(func.count()).where(ImportedObject.source_id == str(post["id"]))
    )


def test_status_says_how_the_last_run_went(cli, as_admin):
    synced(cli, as_admin)
    status, out, _err = cli("sync-wordpress", "--status")
    assert status == 0
    (found,) = json.loads(out)
    assert found["source"] == as_admin.url
    assert found["error"] is None and found["succeeded_at"] == found["finished_at"]
    assert set(found["cursors"]) == {"book", "page", "post"}
    assert found["requests"] > 0


class Proxy:
    """A real HTTP server in front of WordPress that passes each request on, unless
    ``rule(path, number)`` answers it instead: (status, body, headers) or None."""

    def __init__(self, wp: WordPress) -> None:
        self.wp = wp
        self.seen: list[str] = []
        self.rule: Any = lambda path, number: None
        self.rewrite: Any = lambda path, found: found
        self.lock = threading.Lock()

    def handler(self) -> type[BaseHTTPRequestHandler]:
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                with proxy.lock:
                    proxy.seen.append(self.path)
                    number = len(proxy.seen)
                answer = proxy.rule(self.path, number)
                if answer is None:
                    passed = requests.get(
                        proxy.wp.url + self.path,
                        headers={"Authorization": self.headers.get("Authorization", "")},
                        timeout=60,
                    )
                    body = passed.content
                    if passed.ok and "json" in passed.headers.get("Content-Type", ""):
                        body = json.dumps(proxy.rewrite(self.path, passed.json())).encode()
                    keep = ("Content-Type", "X-WP-Total", "X-WP-TotalPages", "Date")
                    headers = {k: passed.headers[k] for k in keep if k in passed.headers}
                    answer = (passed.status_code, body, headers)
                status, body, headers = answer
                self.send_response(status)
                for name, value in headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: Any) -> None:
                pass

        return Handler


@pytest.fixture
def proxy(wp: WordPress) -> Iterator[tuple[Proxy, str]]:
    found = Proxy(wp)
    with http_server(found.handler()) as url:
        yield found, url


def run_sync(app: Any, url: str, wp: WordPress, waits: list[float] | None = None) -> sync.Run:
    return sync.sync(
        site_of_app(app), url, wp.auth, sleep=(waits if waits is not None else []).append
    )


def test_a_run_cut_short_resumes_and_loses_or_doubles_nothing(
    as_admin, proxy, wsgi_app, clean_database, cli, tmp_path, engine, _migrated_rows, monkeypatch
):
    wp = as_admin
    for n in range(1, 8):  # dated a day apart: each its own date of change
        write(wp, "posts", title=f"Post {n}", status="publish", date_gmt=f"2020-01-0{n}T00:00:00")
    monkeypatch.setattr(sync, "CHUNK", 2)
    server, url = proxy
    media = []

    def down_after_two_batches(path: str, number: int) -> Any:
        if path.startswith("/wp-json/wp/v2/media"):
            media.append(number)
            if len(media) > 2:
                return (503, b"down", {"Retry-After": "0"})
        return None

    server.rule = down_after_two_batches
    with pytest.raises(rest.WordPressError) as stopped:
        run_sync(wsgi_app, url, wp)
    assert stopped.value.temporary
    with Session(clean_database) as session:
        (state,) = session.scalars(select(WordPressSync)).all()
        imported = session.scalar(select(func.count()).select_from(Post))
    assert "HTTP 503" in state.error and state.succeeded_at is None
    # The pages were read whole, and their cursor set; of the posts, a batch was committed.
    assert "page" in state.cursors and "post" not in state.cursors
    assert 0 < imported < 9  # … not all of them (7 posts, the sample page, Hello world)
    assert documents(client(wsgi_app))  # the sitemaps are served meanwhile

    server.rule = lambda path, number: None
    done = run_sync(wsgi_app, url, wp)
    # The posts the first run did not bring in, and only those.
    assert done.read["post"] == 6 and done.imported["post"] == 6
    after = documents(client(wsgi_app))
    with Session(clean_database) as session:
        ids = set(session.scalars(select(Post.id)))
        rows = session.scalar(
            select(func.count()).select_from(ImportedObject).where(ImportedObject.kind == "post")
        )
    wordpress_ids = {
        p["id"]
        for r in ("posts", "pages")
        for p in wp.api("GET", f"/wp/v2/{r}", params={"per_page": 100, "status": "any"})
    }
    assert ids == wordpress_ids and rows == len(ids)
    exported(cli, wp, tmp_path, engine, _migrated_rows)
    assert documents(client(wsgi_app)) == after


def test_what_may_pass_is_tried_again_and_an_item_that_does_not_parse_is_named(
    as_admin, proxy, wsgi_app, clean_database, caplog
):
    wp = as_admin
    broken = write(wp, "posts", title="Broken", status="publish")
    kept = write(wp, "posts", title="Kept", status="publish")
    server, url = proxy

    def busy_twice(path: str, number: int) -> Any:
        return (503, b"busy", {"Retry-After": "0"}) if number <= 2 else None

    def without_type(path: str, found: Any) -> Any:
        if path.startswith("/wp-json/wp/v2/posts?") and isinstance(found, list):
            for item in found:
                if item.get("id") == broken["id"]:
                    item.pop("type", None)
        return found

    server.rule, server.rewrite = busy_twice, without_type
    waits: list[float] = []
    done = run_sync(wsgi_app, url, wp, waits)
    assert waits == [1.0, 2.0]  # 1 s, doubled
    assert done.requests == len(server.seen)
    assert done.skipped == [f"posts {broken['id']}: KeyError('type') does not parse"]
    assert f"posts {broken['id']}" in caplog.text
    with Session(clean_database) as session:
        assert session.get(Post, kept["id"]) is not None
        assert session.get(Post, broken["id"]) is None


def test_a_wordpress_that_refuses_stops_the_run_at_once(as_admin, proxy, wsgi_app, clean_database):
    server, url = proxy
    server.rule = lambda path, number: (
        (401, b'{"message": "Sorry, you are not allowed"}', {"Content-Type": "application/json"})
        if "users" in path
        else None
    )
    waits: list[float] = []
    with pytest.raises(rest.WordPressError) as refused:
        run_sync(wsgi_app, url, as_admin, waits)
    assert not refused.value.temporary and not waits
    assert "HTTP 401: Sorry, you are not allowed" in str(refused.value)
    with Session(clean_database) as session:
        (state,) = session.scalars(select(WordPressSync)).all()
    assert "HTTP 401" in state.error


def test_an_anonymous_sync_lists_what_an_authenticated_one_lists(
    cli, wp, site_content, wsgi_app, engine, _migrated_rows, monkeypatch
):
    """Anonymous, a run sees published posts only, rendered; a post with a password is
    protected, though its password is not shown. The sitemaps list the same URLs."""
    monkeypatch.delenv(sync.USER, raising=False)
    monkeypatch.delenv(sync.PASSWORD, raising=False)
    synced(cli, wp)
    anonymous = documents(client(wsgi_app))
    assert not any("secret" in loc for loc in listed(anonymous, "post"))
    reset_database(engine, _migrated_rows)
    monkeypatch.setenv(sync.USER, wp.user)
    monkeypatch.setenv(sync.PASSWORD, wp.password)
    synced(cli, wp)
    assert documents(client(wsgi_app)) == anonymous


def test_a_wordpress_that_is_down_ends_the_command_in_one_line(cli, monkeypatch):
    """Exit 75 (try again), and the error recorded for ``--status``."""
    monkeypatch.setattr(rest, "ATTEMPTS", 1)  # no waits between attempts
    down = f"http://127.0.0.1:{free_port()}"
    status, _out, err = cli("sync-wordpress", down)
    assert status == 75, err
    assert err.startswith(f"sitemap-server: {down}: GET /: ConnectionError") and "try again" in err
    assert "Traceback" not in err
    _status, out, _err = cli("sync-wordpress", "--status")
    (found,) = json.loads(out)
    assert found["source"] == down and "ConnectionError" in found["error"]
    assert found["succeeded_at"] is None


def test_the_api_says_what_is_followed_and_how_each_sync_went(cli, as_admin, api, testapp):
    synced(cli, as_admin)
    found = api.get("/api/sync", status=200).json
    assert found["follows"] is None and found["poll_seconds"] == 5
    (run,) = found["syncs"]
    assert run["source"] == as_admin.url and run["error"] is None
    assert run["running_until"] is None and set(run["cursors"]) == {"book", "page", "post"}
    assert run["counts"]["read"]["post"] >= 1
    testapp.get("/api/sync", status=401)


def test_the_worker_follows_the_wordpress_its_ini_file_names(
    wp, wsgi_app, clean_database, database_url, tmp_path
):
    """``sitemap-server worker`` with ``sitemap_server.wordpress.url``: a post written in
    WordPress comes into the sitemaps, and leaves them once deleted there, with no
    command run."""
    ini = tmp_path / "worker.ini"
    ini.write_text(
        "[app:main]\nuse = egg:sitemap-server\n"
        f"sqlalchemy.url = {database_url.replace('%', '%%')}\n"
        f"sitemap_server.site_url = {SITE_URL}\n"
        f"sitemap_server.wordpress.url = {wp.url}\n"
        "sitemap_server.wordpress.poll_seconds = 0.5\n"
        "[loggers]\nkeys = root\n[handlers]\nkeys = console\n[formatters]\nkeys = generic\n"
        "[logger_root]\nlevel = INFO\nhandlers = console\n[handler_console]\n"
        "class = StreamHandler\nargs = (sys.stderr,)\nlevel = NOTSET\nformatter = generic\n"
        "[formatter_generic]\nformat = %(levelname)s %(name)s %(message)s\n"
    )
    env = server_environment(
        SITEMAP_SERVER_WORDPRESS_USER=wp.user, SITEMAP_SERVER_WORDPRESS_PASSWORD=wp.password
    )
    log = tmp_path / "worker.log"
    with worker_process(str(ini), env, log) as process:
        post = write(wp, "posts", title="Followed", status="publish")
        url = normal(SITE_URL + urlsplit(post["link"]).path)

        def posts() -> set[str]:
            return listed(documents(client(wsgi_app)), "post")

        wait_until(lambda: url in posts(), "the worker to bring the post in")
        wp.api("DELETE", f"/wp/v2/posts/{post['id']}", params={"force": "true"})
        wait_until(lambda: url not in posts(), "the worker to take the post out")
        process.terminate()
        assert process.wait(timeout=60) == 0, log.read_text()
    said = log.read_text()
    assert f"following WordPress at {wp.url} every 0.5 s" in said
    assert "Traceback" not in said


def test_a_followed_wordpress_that_fails_is_logged_once_and_once_back(
    as_admin, proxy, wsgi_app, clean_database, caplog, monkeypatch
):
    monkeypatch.setattr(rest, "ATTEMPTS", 1)  # no waits between attempts
    server, url = proxy
    server.rule = lambda path, number: (502, b"bad gateway", {})
    follower = sync.Follower(site_of_app(wsgi_app), url, as_admin.auth, 5)
    with requests.Session() as http:
        assert follower.once(http) is None
        assert follower.once(http) is None
        failed = [r for r in caplog.records if "could not be read" in r.getMessage()]
        assert len(failed) == 1 and failed[0].levelname == "WARNING"
        assert "HTTP 502" in failed[0].getMessage()
        server.rule = lambda path, number: None
        assert follower.once(http) is not None
    assert [r.getMessage() for r in caplog.records].count(f"WordPress at {url} is read again") == 1


def test_runs_of_one_wordpress_never_overlap(cli, as_admin, clean_database):
    """A run holds its WordPress (renewed with each batch); another finds it held and
    says so (75: try again), having read nothing more. A held time past lets it in."""
    from datetime import timedelta

    from sitemap_server.models.meta import utcnow

    synced(cli, as_admin)

    def held_until(moment: Any) -> None:
        with Session(clean_database) as session, session.begin():
            session.get_one(WordPressSync, as_admin.url).running_until = moment

    held_until(utcnow() + timedelta(minutes=1))
    status, _out, err = cli("sync-wordpress", as_admin.url)
    assert status == 75 and f"another run of {as_admin.url} is at work" in err
    held_until(utcnow() - timedelta(seconds=1))  # a run killed: its hold has ended
    synced(cli, as_admin)


def id_listings(paths: list[str]) -> list[str]:
    """The requests that listed a collection's every id (not a count: ``per_page=1``;
    not those of a span of dates of change)."""
    return [
        p for p in paths if "_fields=id" in p and "per_page=100" in p and "modified_before" not in p
    ]


def span_listings(paths: list[str]) -> list[str]:
    """The requests that listed the ids of a span of dates of change."""
    return [
        p for p in paths if "_fields=id" in p and "per_page=100" in p and "modified_before" in p
    ]


def test_ids_are_listed_only_when_a_count_moved(as_admin, proxy, wsgi_app, clean_database):
    """A run that finds the counts as they were lists no ids; a post deleted in WordPress
    (no date of change tells it) moves its type's count, and the posts it changed with
    are found by counts of spans of dates of change, not by a listing of every id."""
    wp = as_admin
    posts = [write(wp, "posts", title=f"Post {n}", status="publish") for n in range(3)]
    # 300 more, an hour apart (a new post's date of change is its date).
    wp.php(
        "for ($i = 0; $i < 300; $i++) { wp_insert_post(array('post_title' => \"Old $i\","
        " 'post_status' => 'publish', 'post_date' => gmdate('Y-m-d H:i:s',"
        " strtotime('2020-01-01 00:00:00') + 3600 * $i))); }"
    )
    server, url = proxy
    run_sync(wsgi_app, url, wp)
    assert {p.split("?")[0] for p in id_listings(server.seen)} == {
        "/wp-json/wp/v2/posts",
        "/wp-json/wp/v2/pages",
        "/wp-json/wp/v2/books",
    }  # the first run lists every type
    server.seen.clear()
    run_sync(wsgi_app, url, wp)
    assert id_listings(server.seen) == []
    assert span_listings(server.seen) == []
    wp.api("DELETE", f"/wp/v2/posts/{posts[1]['id']}", params={"force": "true"})
    server.seen.clear()
    done = run_sync(wsgi_app, url, wp)
    assert id_listings(server.seen) == []
    spans = span_listings(server.seen)
    assert spans and all(p.startswith("/wp-json/wp/v2/posts?") for p in spans)
    assert len(spans) < 4  # a listing of 303 posts' ids is 4 pages
    assert done.deleted == {"post": 1}
    # One this site lacks: dated in the past, its date of change is too.
    backdated = wp.php(
        "echo wp_insert_post(array('post_title' => 'Backdated', 'post_status' => 'publish',"
        " 'post_date' => '2020-06-01 12:00:00'));"
    )
    server.seen.clear()
    done = run_sync(wsgi_app, url, wp)
    assert id_listings(server.seen) == [] and span_listings(server.seen)
    assert done.imported == {"post": 1}
    with Session(clean_database) as session:
        assert session.get(Post, posts[1]["id"]) is None
        assert session.get(Post, posts[0]["id"]) is not None
        assert session.get(Post, int(backdated)) is not None
    server.seen.clear()
    run_sync(wsgi_app, url, wp)
    assert span_listings(server.seen) == [] and id_listings(server.seen) == []


def test_the_posts_permalink_structure_may_be_given(cli, as_admin, dbsession):
    from sitemap_server.models import PostType
    from sitemap_server.wordpress.permalinks import from_wordpress

    write(as_admin, "posts", title="Given", status="publish")
    status, _out, err = cli("sync-wordpress", "--permalinks", "/%nope%/", as_admin.url)
    assert status == 2 and "%nope%" in err and "Traceback" not in err
    structure = "/%year%/%monthnum%/%postname%/"
    status, _out, err = cli("sync-wordpress", "--permalinks", structure, as_admin.url)
    assert status == 0, err
    assert dbsession.get(PostType, "post").permalink_pattern == from_wordpress(structure)


def test_a_post_trashed_leaves_the_sitemaps_with_no_listing_of_ids(
    as_admin, proxy, wsgi_app, clean_database
):
    """Trashing changes a post's date of change: a run with credentials reads it in the
    trash, as an export has it, and its count stays consistent (no id listing)."""
    wp = as_admin
    post = write(wp, "posts", title="Trashed", status="publish")
    url = normal(SITE_URL + urlsplit(post["link"]).path)
    server, base = proxy
    run_sync(wsgi_app, base, wp)
    assert url in listed(documents(client(wsgi_app)), "post")
    wp.api("DELETE", f"/wp/v2/posts/{post['id']}")  # to the trash
    server.seen.clear()
    run_sync(wsgi_app, base, wp)
    assert id_listings(server.seen) == []
    with Session(clean_database) as session:
        assert session.get_one(Post, post["id"]).status == "trash"
    assert url not in listed(documents(client(wsgi_app)), "post")


@pytest.mark.parametrize("url", ["not a url", "ftp://127.0.0.1/", "http://"])
def test_a_url_that_is_no_wordpress_address_is_refused_at_once(cli, url):
    """Exit 2 in one line, before any request or retry, and nothing recorded."""
    status, _out, err = cli("sync-wordpress", url)
    assert status == 2, err
    assert err == f"sitemap-server: {url}: must be an absolute http(s) URL\n"
    _status, out, _err = cli("sync-wordpress", "--status")
    assert json.loads(out) == []
