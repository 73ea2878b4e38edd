"""WordPress import throughput: ``sitemap-server import-wordpress`` of a generated export.

    .venv/bin/python bench/wxr_bench.py --posts 100000                 # SQLite
    scripts/with-postgres .venv/bin/python bench/wxr_bench.py           # PostgreSQL too
    scripts/with-postgres .venv/bin/python bench/wxr_bench.py --skip-sqlite  # PostgreSQL only

Generates a WXR 1.2 file shaped like the theme unit test data WordPress's theme team
publishes (``../shared/fixtures/wordpress``): a channel with authors, hierarchical
categories and tags, then posts with dated permalinks (``/%year%/%monthnum%/%day%/
%postname%/``, the local time seven hours behind GMT as there), categories and tags,
content with images, a featured image (``_thumbnail_id``) and Yoast meta on some, one
attachment per ten posts, pages with parents, and the menu items and revisions a real
export carries. Then, on a freshly migrated database, it times the real command in a
subprocess (it returns once every sitemap is built, so its wall time is the time until
they are served): wall and CPU time, posts per second, the child's peak RSS; and the same
import again (nothing changes). PostgreSQL is measured when
SITEMAP_SERVER_TEST_DATABASE_URL is set (scripts/with-postgres sets it).
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import subprocess
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from xml.sax.saxutils import escape

from import_bench import BIN, fresh_database, write_ini
from sqlalchemy import create_engine, text

HEAD = """<?xml version="1.0" encoding="UTF-8" ?>
<rss version="2.0" xmlns:excerpt="http://wordpress.org/export/1.2/excerpt/"
  xmlns:content="http://purl.org/rss/1.0/modules/content/"
  xmlns:wfw="http://wellformedweb.org/CommentAPI/" xmlns:dc="http://purl.org/dc/elements/1.1/"
  xmlns:wp="http://wordpress.org/export/1.2/">
<channel>
<title>Bench</title><link>https://blog.example</link><language>en</language>
<wp:wxr_version>1.2</wp:wxr_version>
<wp:base_site_url>https://blog.example</wp:base_site_url>
<wp:base_blog_url>https://blog.example</wp:base_blog_url>
"""
SITE = "https://blog.example"
EXPORTED = datetime(2026, 1, 1, tzinfo=UTC)
LOCAL = timedelta(hours=-7)


def item(
    post_id: int,
    title: str,
    link: str,
    date: datetime,
    post_type: str,
    status: str,
    slug: str,
    body: str = "",
    parent: int = 0,
    terms: str = "",
    meta: str = "",
    extra: str = "",
) -> str:
    local = (date + LOCAL).strftime("%Y-%m-%d %H:%M:%S")
    gmt = date.strftime("%Y-%m-%d %H:%M:%S")
    return (
        f"<item><title>{escape(title)}</title><link>{link}</link>"
        f"<dc:creator><![CDATA[author{post_id % 20}]]></dc:creator>"
        f'<guid isPermaLink="false">{SITE}/?p={post_id}</guid>'
        f"<content:encoded><![CDATA[{body}]]></content:encoded>"
        f"<excerpt:encoded><![CDATA[]]></excerpt:encoded>"
        f"<wp:post_id>{post_id}</wp:post_id><wp:post_date>{local}</wp:post_date>"
        f"<wp:post_date_gmt>{gmt}</wp:post_date_gmt>"
        f"<wp:post_modified>{local}</wp:post_modified>"
        f"<wp:post_modified_gmt>{gmt}</wp:post_modified_gmt>"
        f"<wp:comment_status>open</wp:comment_status><wp:ping_status>open</wp:ping_status>"
        f"<wp:post_name>{slug}</wp:post_name><wp:status>{status}</wp:status>"
        f"<wp:post_parent>{parent}</wp:post_parent><wp:menu_order>0</wp:menu_order>"
        f"<wp:post_type>{post_type}</wp:post_type><wp:post_password></wp:post_password>"
        f"<wp:is_sticky>0</wp:is_sticky>{terms}{meta}{extra}</item>\n"
    )


def postmeta(key: str, value: str) -> str:
    return (
        f"<wp:postmeta><wp:meta_key>{key}</wp:meta_key>"
        f"<wp:meta_value><![CDATA[{value}]]></wp:meta_value></wp:postmeta>"
    )


def generate(path: Path, posts: int) -> int:
    """Write the export; the number of posts and pages it holds (what is imported)."""
    rng = random.Random(1)
    categories, tags = 200, 2000
    start = datetime(2010, 1, 1, 12, tzinfo=UTC)
    # Every post published before the export was made, however many: 37 minutes apart
    # took a million posts to 2080, and a post of the future is not listed (S-109).
    step = min(timedelta(minutes=37), (EXPORTED - start) / posts)
    next_id = posts * 2 + 10  # attachments, pages and menu items after the posts
    imported = 0
    with path.open("w", encoding="utf-8") as out:
        out.write(HEAD)
        for n in range(20):
            out.write(
                f"<wp:author><wp:author_id>{n + 1}</wp:author_id>"
                f"<wp:author_login><![CDATA[author{n}]]></wp:author_login>"
                f"<wp:author_display_name><![CDATA[Author {n}]]></wp:author_display_name>"
                "</wp:author>\n"
            )
        for n in range(1, categories + 1):
            parent = f"category-{(n - 1) // 10}" if n > 10 else ""
            out.write(
                f"<wp:category><wp:term_id>{n}</wp:term_id>"
                f"<wp:category_nicename>category-{n}</wp:category_nicename>"
                f"<wp:category_parent>{parent}</wp:category_parent>"
                f"<wp:cat_name><![CDATA[Category {n}]]></wp:cat_name></wp:category>\n"
            )
        for n in range(1, tags + 1):
            out.write(
                f"<wp:tag><wp:term_id>{categories + n}</wp:term_id>"
                f"<wp:tag_slug>tag-{n}</wp:tag_slug>"
                f"<wp:tag_name><![CDATA[Tag {n}]]></wp:tag_name></wp:tag>\n"
            )
        for n in range(1, posts + 1):
            date = start + step * n
            local = date + LOCAL
            slug = f"post-{n}"
            link = f"{SITE}/{local:%Y/%m/%d}/{slug}/"
            category = 1 + rng.randrange(categories)
            tag = 1 + rng.randrange(tags)
            terms = (
                f'<category domain="category" nicename="category-{category}">'
                f"<![CDATA[Category {category}]]></category>"
                f'<category domain="post_tag" nicename="tag-{tag}"><![CDATA[Tag {tag}]]></category>'
            )
            meta = postmeta("_edit_last", "1")
            extra = ""
            if n % 10 == 0:
                next_id += 1
                meta += postmeta("_thumbnail_id", str(next_id))
                extra = item(
                    next_id,
                    f"Picture {n}",
                    f"{link}picture-{n}/",
                    date,
                    "attachment",
                    "inherit",
                    f"picture-{n}",
                    parent=n,
                    extra=f"<wp:attachment_url>{SITE}/uploads/{n}.jpg</wp:attachment_url>",
                )
            if n % 50 == 0:
                meta += postmeta("_yoast_wpseo_meta-robots-noindex", "1")
            status = "draft" if n % 40 == 0 else "publish"
            body = f'<p>Post {n} about things.</p><img src="{SITE}/uploads/in-{n}.jpg" alt="">'
            out.write(item(n, f"Post {n}", link, date, "post", status, slug, body, 0, terms, meta))
            out.write(extra)
            imported += 1
            if n % 100 == 0:  # a menu item and a revision, which are not imported
                next_id += 1
                out.write(
                    item(
                        next_id,
                        "",
                        f"{SITE}/?p={next_id}",
                        date,
                        "nav_menu_item",
                        "publish",
                        str(next_id),
                    )
                )
                next_id += 1
                out.write(
                    item(
                        next_id,
                        f"Post {n}",
                        f"{SITE}/?p={next_id}",
                        date,
                        "revision",
                        "inherit",
                        f"{n}-revision-v1",
                        parent=n,
                    )
                )
        for n in range(1, max(posts // 100, 2) + 1):
            next_id += 1
            parent = next_id - 1 if n % 5 else 0
            out.write(
                item(
                    next_id,
                    f"Page {n}",
                    f"{SITE}/page-{n}/",
                    start,
                    "page",
                    "publish",
                    f"page-{n}",
                    "<p>A page.</p>",
                    parent,
                )
            )
            imported += 1
        out.write("</channel></rss>\n")
    return imported


def cpu_of_children() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run(ini: Path, export: Path) -> tuple[float, float, str]:
    cpu = cpu_of_children()
    started = time.perf_counter()
    done = subprocess.run(
        [BIN / "sitemap-server", "--config", ini, "import-wordpress", "-q", export],
        check=True,
        capture_output=True,
        text=True,
    )
    return time.perf_counter() - started, cpu_of_children() - cpu, done.stdout


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--posts", type=int, default=100_000)
    parser.add_argument(
        "--skip-sqlite", action="store_true", help="PostgreSQL only (a run already measured it)"
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp)
        export = directory / "export.xml"
        imported = generate(export, args.posts)
        print(f"{export.name}: {export.stat().st_size / 1e6:.0f} MB, {imported} posts and pages")
        targets = (
            [] if args.skip_sqlite else [("sqlite", f"sqlite:///{directory / 'bench.sqlite'}")]
        )
        if os.environ.get("SITEMAP_SERVER_TEST_DATABASE_URL"):
            targets.append(("postgresql", os.environ["SITEMAP_SERVER_TEST_DATABASE_URL"]))
        for name, url in targets:
            ini = write_ini(directory, url)
            fresh_database(url, ini)
            wall, cpu, out = run(ini, export)
            peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
            engine = create_engine(url)
            with engine.connect() as conn:
                stored = conn.scalar(text("SELECT count(*) FROM posts"))
                entries = conn.scalar(text("SELECT count(*) FROM sitemap_entries"))
            engine.dispose()
            assert stored == imported, (stored, imported, out)
            print(
                f"{name:10} import: {wall:6.1f} s wall, {cpu:6.1f} s CPU, "
                f"{imported / wall:7.0f} posts/s; every sitemap built at the end "
                f"({entries} entries); peak RSS (largest child) {peak:.0f} MiB"
            )
            wall, cpu, out = run(ini, export)
            print(f"{name:10} again:  {wall:6.1f} s wall, {cpu:6.1f} s CPU; {out.splitlines()[1]}")


if __name__ == "__main__":
    main()
