"""``sync-wordpress`` against a large WordPress: a first sync, then incremental ones.

    .venv/bin/python bench/wordpress_sync_bench.py --posts 100000               # SQLite
    scripts/with-postgres .venv/bin/python bench/wordpress_sync_bench.py --db postgresql

Starts a throwaway WordPress (``sitemap_server.testing.wordpress``: Debian's, MariaDB,
php-fpm, nginx on 127.0.0.1), loads ``--posts`` published posts into its database with
bulk SQL (as ``sitemap_bench.generate`` loads ours: one category, dates a few minutes
apart), then syncs an empty site of ours from it, in this process, as its administrator:

1. "first": everything;
2. "nothing": a run that finds nothing changed;
3. "edits": after ``--edits`` posts were edited through WordPress's REST API;
4. "trash": after one post was trashed there (read by its date of change);
5. "delete": after one post was deleted outright (its type's ids are listed).

For each: wall time, CPU time of this process and of WordPress (php-fpm, nginx and
MariaDB, from /proc), the requests made, and what the run read and did. Then, with a
follower polling every ``--poll`` seconds (``sync.Follower``, as the worker runs it), the
time from each of ``--visible`` edits made in WordPress until the post's sitemap page
lists its new slug (a reader polling every 50 ms).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from common import empty_database, migrate
from sitemap_bench import percentile
from webtest import TestApp

from sitemap_server.app import main as make_app
from sitemap_server.app import site_of_app
from sitemap_server.sitemaps.maintenance import apply_all
from sitemap_server.testing.wordpress import WordPress, wordpress
from sitemap_server.wordpress import sync

SITE_URL = "http://bench.test"
TICKS = os.sysconf("SC_CLK_TCK")


def load(wp: WordPress, posts: int) -> None:
    """``posts`` published posts in WordPress's tables, in category 1, by its admin."""
    start = datetime(2020, 1, 1, tzinfo=UTC)
    lines = ["SET autocommit=0;"]
    rows = []
    for n in range(1, posts + 1):
        post_id = 1000 + n
        date = (start + timedelta(minutes=5 * n)).strftime("%Y-%m-%d %H:%M:%S")
        rows.append(
            f"({post_id},1,'{date}','{date}','<p>Post {n}</p>','Bench post {n}','',"
            f"'publish','open','open','','bench-post-{n}','','','{date}','{date}','',0,"
            f"'{wp.url}/?p={post_id}',0,'post','',0)"
        )
        if len(rows) == 1000 or n == posts:
            lines.append(
                "INSERT INTO wp_posts (ID,post_author,post_date,post_date_gmt,post_content,"
                "post_title,post_excerpt,post_status,comment_status,ping_status,post_password,"
                "post_name,to_ping,pinged,post_modified,post_modified_gmt,"
                "post_content_filtered,post_parent,guid,menu_order,post_type,post_mime_type,"
                "comment_count) VALUES " + ",".join(rows) + ";"
            )
            ids = range(post_id - len(rows) + 1, post_id + 1)
            lines.append(
                "INSERT INTO wp_term_relationships (object_id,term_taxonomy_id,term_order) "
                "VALUES " + ",".join(f"({i},1,0)" for i in ids) + ";"
            )
            rows = []
    lines.append(f"UPDATE wp_term_taxonomy SET count = count + {posts} WHERE term_taxonomy_id = 1;")
    lines.append("COMMIT;")
    subprocess.run(
        [
            "mariadb",
            "--no-defaults",
            f"--socket={wp.directory / 'mysqld.sock'}",
            "-uroot",
            "wordpress",
        ],
        input="\n".join(lines),
        text=True,
        check=True,
    )


def wordpress_cpu(wp: WordPress) -> float:
    """CPU seconds of every process of this WordPress (started in its directory)."""
    total = 0.0
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
            if str(wp.directory) not in command and not _child_of_fpm(entry, wp):
                continue
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += (int(fields[11]) + int(fields[12])) / TICKS
    return total


def _child_of_fpm(entry: Path, wp: WordPress) -> bool:
    """php-fpm's workers name the pool, not the directory: their parent does."""
    try:
        parent = (entry / "stat").read_text().rsplit(")", 1)[1].split()[1]
        command = Path(f"/proc/{parent}/cmdline").read_bytes().decode(errors="replace")
    except OSError:
        return False
    return str(wp.directory) in command


def measured(name: str, app: Any, wp: WordPress) -> dict[str, Any]:
    site = site_of_app(app)
    before_cpu, before_wp = time.process_time(), wordpress_cpu(wp)
    started = time.monotonic()
    done = sync.sync(site, wp.url, wp.auth)
    wall = time.monotonic() - started
    cpu, wp_cpu = time.process_time() - before_cpu, wordpress_cpu(wp) - before_wp
    applied_started = time.monotonic()
    applied = apply_all(site.sessions)
    return {
        "name": name,
        "wall": wall,
        "cpu": cpu,
        "wordpress": wp_cpu,
        "requests": done.requests,
        "read": sum(done.read.values()),
        "imported": sum(done.imported.values()),
        "updated": sum(done.updated.values()),
        "deleted": sum(done.deleted.values()),
        "applied": applied,
        "apply_wall": time.monotonic() - applied_started,
    }


def visibility(app: Any, wp: WordPress, poll: float, count: int) -> list[float]:
    """Seconds from each edit in WordPress until the sitemap lists the new slug, with a
    follower polling every ``poll`` s and a maintainer applying every 0.1 s."""
    site = site_of_app(app)
    stop = threading.Event()
    follower = sync.Follower(site, wp.url, wp.auth, poll)
    threads = [threading.Thread(target=follower.run, args=(stop,))]

    def maintain() -> None:
        while not stop.wait(0.1):
            apply_all(site.sessions)

    threads.append(threading.Thread(target=maintain))
    for thread in threads:
        thread.start()
    reader = TestApp(app)
    # Posts of the first sitemap page, found by their loaded slugs (ids 1000 + n).
    first = reader.get("/post-sitemap.xml").text
    listed = [1000 + n for n in range(1, 2000) if f"/bench-post-{n}/" in first]
    chosen = ",".join(map(str, listed[: count + 5]))
    alive = wp.api("GET", "/wp/v2/posts", params={"include": chosen, "per_page": 100})
    posts = sorted(post["id"] for post in alive)[:count]
    seen = []
    try:
        for n, post_id in enumerate(posts):
            time.sleep(poll * 0.37)  # edits at no fixed phase of the poll
            slug = f"seen-{n}"
            edited = time.monotonic()
            wp.api("POST", f"/wp/v2/posts/{post_id}", json={"slug": slug})
            while f"/{slug}/" not in reader.get("/post-sitemap.xml").text:
                if time.monotonic() - edited > 60:
                    raise SystemExit(f"post {post_id}: never listed in 60 s")
                time.sleep(0.05)
            seen.append(time.monotonic() - edited)
    finally:
        stop.set()
        for thread in threads:
            thread.join()
    return seen


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--db", choices=["sqlite", "postgresql"], default="sqlite")
    parser.add_argument("--posts", type=int, default=100_000)
    parser.add_argument("--edits", type=int, default=10)
    parser.add_argument("--poll", type=float, default=5.0)
    parser.add_argument("--visible", type=int, default=10, help="edits timed until listed")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp, wordpress() as wp:
        started = time.monotonic()
        load(wp, args.posts)
        print(f"{args.posts} posts loaded into WordPress in {time.monotonic() - started:.0f} s")
        url = empty_database(args.db, Path(tmp))
        migrate(url, Path(tmp))
        app = make_app(
            {},
            **{
                "sqlalchemy.url": url,
                "sitemap_server.site_url": SITE_URL,
                "sitemap_server.load_entrypoints": "false",
                "sitemap_server.max_staleness": "3600",  # the maintainer applies, not reads
            },
        )
        rows = [measured("first", app, wp), measured("nothing", app, wp)]
        edited = wp.api("GET", "/wp/v2/posts", params={"per_page": args.edits, "context": "edit"})
        for post in edited:
            wp.api("POST", f"/wp/v2/posts/{post['id']}", json={"title": post["title"]["raw"] + "!"})
        rows.append(measured("edits", app, wp))
        first_posts = wp.api(
            "GET", "/wp/v2/posts", params={"per_page": 2, "orderby": "id", "order": "asc"}
        )
        wp.api("DELETE", f"/wp/v2/posts/{first_posts[0]['id']}")  # to the trash
        rows.append(measured("trash", app, wp))
        wp.api("DELETE", f"/wp/v2/posts/{first_posts[1]['id']}", params={"force": "true"})
        rows.append(measured("delete", app, wp))
        print(f"\n{args.db}, {args.posts} posts in WordPress")
        print(
            f"{'run':8} {'wall s':>8} {'CPU s':>7} {'WP CPU s':>9} {'requests':>9} {'read':>7}"
            f" {'imported':>9} {'updated':>8} {'deleted':>8} {'applied':>8} {'apply s':>8}"
        )
        for r in rows:
            print(
                f"{r['name']:8} {r['wall']:8.2f} {r['cpu']:7.2f} {r['wordpress']:9.2f}"
                f" {r['requests']:9} {r['read']:7} {r['imported']:9} {r['updated']:8}"
                f" {r['deleted']:8} {r['applied']:8} {r['apply_wall']:8.2f}"
            )
        if args.visible:
            seen = visibility(app, wp, args.poll, args.visible)
            print(
                f"\nedit in WordPress to listed, follower every {args.poll:g} s: "
                f"p50 {statistics.median(seen):.2f} s, max {max(seen):.2f} s "
                f"(p90 {percentile(seen, 0.9):.2f}; target: poll + 1 s = {args.poll + 1:g} s)"
            )
        site_of_app(app).close()


if __name__ == "__main__":
    sys.exit(main())
