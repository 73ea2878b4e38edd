"""Read-path benchmark: sitemap latency, throughput and memory on a large generated site.

    .venv/bin/python bench/sitemap_bench.py --posts 1000000               # SQLite
    scripts/with-postgres .venv/bin/python bench/sitemap_bench.py --db postgresql

Generates posts, authors, terms and images with bulk SQL (not through the API: the point
is the read path), builds the sitemaps once (``rebuild-sitemaps``, timed), starts one
``pserve`` process (waitress, 4 threads) on 127.0.0.1 and the worker beside it
(``sitemap-server worker``, as production.ini runs them) and measures, over keep-alive
connections:

- "first": the first request for a document after a write through the admin API has been
  applied by the worker (new content version: nothing cached, nothing waiting), repeated
  and reported as p50/p95: the server reads the finished document (on PostgreSQL; the
  worker stores every document before the measures begin); "rendered": the first request
  of the same version at a second server with ``finished_documents = false``, which
  renders it from its fragments (the two asked in turn); "srv": the same, as the server
  timed it (``Server-Timing``: from the first tween to the response, no network, no
  client, no HTTP parsing);
- "warm": the same document again and again (cached, never stale: the version is read
  from the database on every request), p50/p95 over one keep-alive connection, and
  requests/s with wrk over 4 keep-alive connections (with its median latency);
- "304": a conditional request with the current ETag;
- "after start": the first requests the new process answers (nothing compiled or cached);
- the server's peak RSS (VmHWM).
"""

from __future__ import annotations

import argparse
import http.client
import json
import random
import re
import resource
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import requests
from common import empty_database, wait_until_up
from sqlalchemy import MetaData, create_engine, insert, text

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
sys.path.insert(0, str(ROOT))

from sitemap_server.content import object_urls  # noqa: E402
from sitemap_server.models import Author, Post, Term, post_terms  # noqa: E402


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def write_ini(directory: Path, url: str, port: int, plugins: bool, extra: str = "") -> Path:
    """An ini file for one server process on ``port`` (``extra``: more app settings)."""
    ini = directory / f"bench-{port}.ini"
    ini.write_text(
        "[app:main]\nuse = egg:sitemap-server\n"
        f"sqlalchemy.url = {url}\nsitemap_server.site_url = http://bench.test\n"
        f"sitemap_server.load_entrypoints = {'true' if plugins else 'false'}\n{extra}"
        f"[server:main]\nuse = egg:waitress#main\nlisten = 127.0.0.1:{port}\nthreads = 4\n"
        "[loggers]\nkeys = root\n[handlers]\nkeys = console\n[formatters]\nkeys = generic\n"
        "[logger_root]\nlevel = WARN\nhandlers = console\n[handler_console]\n"
        "class = StreamHandler\nargs = (sys.stderr,)\nlevel = NOTSET\nformatter = generic\n"
        "[formatter_generic]\nformat = %%(levelname)s %%(message)s\n"
    )
    return ini


def cli(ini: Path, *args: str) -> str:
    """``sitemap-server`` with ``ini``: what it printed."""
    done = subprocess.run([BIN / "sitemap-server", "--config", ini, *args], capture_output=True)
    if done.returncode:
        sys.exit(f"sitemap-server {' '.join(args)} failed:\n{done.stderr.decode()}")
    return done.stdout.decode()


def blog_shaped(url: str) -> None:
    """The posts ``generate`` made as most blogs have them: every one by author 1 and in
    category 1 (``generate`` gives each post one category, terms 1 to a tenth of them),
    where an author's or a term's newest post is one among all of them."""
    engine = create_engine(url)
    with engine.begin() as conn:
        conn.execute(text("UPDATE posts SET author_id = 1"))
        categories = "SELECT id FROM terms WHERE taxonomy = 'category'"
        conn.execute(text(f"UPDATE post_terms SET term_id = 1 WHERE term_id IN ({categories})"))
    engine.dispose()


def generate(url: str, posts: int, per_page: int, videos: int = 0, news: int = 0) -> None:
    engine = create_engine(url)
    meta = MetaData()
    meta.reflect(engine)
    rng = random.Random(7)
    authors = max(1, posts // 50)
    terms = max(10, posts // 20)
    start = datetime(2020, 1, 1, tzinfo=UTC)
    now = datetime.now(UTC)
    with engine.begin() as conn:
        conn.execute(
            insert(Author),
            [
                {"id": i, "slug": f"author-{i}", "name": f"Author {i}", "noindex": False}
                for i in range(1, authors + 1)
            ],
        )
        conn.execute(
            insert(Term),
            [
                {
                    "id": i,
                    "taxonomy": "category" if i <= terms // 10 else "post_tag",
                    "slug": f"term-{i}",
                    "name": f"Term {i}",
                    "description": "",
                    "noindex": False,
                }
                for i in range(1, terms + 1)
            ],
        )
        conn.execute(text("UPDATE site_settings SET entries_per_page = :n"), {"n": per_page})
    batch = 20_000
    for offset in range(0, posts, batch):
        rows, links = [], []
        for i in range(offset + 1, min(posts, offset + batch) + 1):
            when = start + timedelta(minutes=i * 3)
            recent = i > posts - news  # the last ``news`` posts: from the last 40 hours
            if recent:
                when = now - timedelta(seconds=(posts - i + 1) * 40 * 3600 // max(news, 1))
            rows.append(
                {
                    "id": i,
                    "type": "post",
                    "title": f"Post {i}",
                    "slug": f"post-{i}",
                    "status": "publish" if i % 25 else "draft",
                    "author_id": 1 + i % authors,
                    "content": f'<p>Text {i}</p><img src="/uploads/{i}.jpg">'
                    if i % 3 == 0
                    else f"<p>Text {i}</p>",
                    "featured_image": f"/uploads/featured-{i}.jpg" if i % 2 == 0 else None,
                    "images": [],
                    "published_at": when,
                    "modified_at": when if recent else when + timedelta(hours=rng.randint(0, 48)),
                    "robots": "default",
                    "exclude_from_sitemap": False,
                    "parts": 1,
                }
            )
            links.append({"post_id": i, "term_id": 1 + i % (terms // 10)})
            links.append({"post_id": i, "term_id": terms // 10 + 1 + i % (terms - terms // 10)})
        with engine.begin() as conn:
            conn.execute(insert(Post), rows)
            conn.execute(insert(post_terms), links)
    with engine.begin() as conn:  # every object holds its URL, as the API's writes make it
        object_urls.rebuild(conn)
    if videos:
        add_videos(engine, meta, posts, videos, start)
    engine.dispose()


def add_videos(engine: Any, meta: MetaData, posts: int, videos: int, start: datetime) -> None:
    """One video on each of ``videos`` posts spread over the site (the video plugin's table)."""
    table = meta.tables["videos"]
    step = max(1, posts // videos)
    rows = [
        {
            "post_id": i,
            "source": "manual",
            "title": f"Video of post {i}",
            "description": f"What happens in video {i} & why it matters.",
            "player_url": f"https://video.bench.test/player/{i}",
            "thumbnail_url": f"https://video.bench.test/thumbs/{i}.jpg",
            "published_at": start + timedelta(minutes=i * 3),
            "duration": 30 + i % 600,
            "view_count": i * 7,
            "family_friendly": True,
            "modified_at": start + timedelta(minutes=i * 3),
        }
        for i in range(step, posts + 1, step)
    ][:videos]
    with engine.begin() as conn:
        for offset in range(0, len(rows), 20_000):
            conn.execute(insert(table), rows[offset : offset + 20_000])


def throughput(url: str, seconds: float) -> tuple[float, str]:
    """Requests/s and median latency from 4 keep-alive connections (gzip accepted): wrk
    when installed (``apt-get install wrk``), else 4 Python threads (a slower client)."""
    if shutil.which("wrk"):
        out = subprocess.run(
            [
                "wrk",
                "-t1",
                "-c4",
                f"-d{max(1, round(seconds))}s",
                "--latency",
                "-H",
                "Accept-Encoding: gzip",
                url,
            ],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
        rps = float(re.search(r"Requests/sec:\s+([0-9.]+)", out).group(1))  # type: ignore[union-attr]
        distribution = out.split("Latency Distribution", 1)[-1]
        p50 = re.search(r"50%\s+(\S+)", distribution).group(1)  # type: ignore[union-attr]
        p99 = re.search(r"99%\s+(\S+)", distribution).group(1)  # type: ignore[union-attr]
        return rps, f"{p50} {p99}"
    count = [0]
    stop = time.perf_counter() + seconds

    def client() -> None:
        s = requests.Session()
        while time.perf_counter() < stop:
            s.get(url, headers={"Accept-Encoding": "gzip"})
            count[0] += 1

    threads = [threading.Thread(target=client) for _ in range(4)]
    t0 = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return count[0] / (time.perf_counter() - t0), "- -"


def explain(url: str) -> None:
    """The plans of the read path's queries (and the write path's scheduled-post lookup)."""
    from sitemap_server.documents import MAX_PAGES, SITEMAPS_PER_INDEX
    from sitemap_server.sitemaps.pages import page_range
    from sitemap_server.sitemaps.reader import VERSIONS
    from sitemap_server.sitemaps.views import ENTRIES, PAGE, index_pages

    engine = create_engine(url)
    sqlite = engine.dialect.name == "sqlite"
    prefix = "EXPLAIN QUERY PLAN " if sqlite else "EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) "
    with engine.connect() as conn:
        names = [r[0] for r in conn.execute(text("SELECT DISTINCT provider FROM sitemap_pages"))]
        last = conn.execute(
            text("SELECT max(page) FROM sitemap_pages WHERE provider = 'post'")
        ).scalar_one()
        row = conn.execute(
            text("SELECT * FROM sitemap_pages WHERE provider = 'post' AND page = :p"), {"p": last}
        ).one()
        statements = {
            "versions (every request)": VERSIONS,
            "page row (render)": PAGE.params(name="post", page=last),
            "last post page's entries (render)": ENTRIES.params(page_range("post", row)),
            "index pages (render)": index_pages(tuple(names)).params(
                skip=0, take=SITEMAPS_PER_INDEX, last_page=MAX_PAGES
            ),
        }
        for title, statement in statements.items():
            compiled = statement.compile(engine, compile_kwargs={"literal_binds": True})
            plan = conn.exec_driver_sql(prefix + str(compiled)).all()
            print(f"-- {title}")
            for line in plan:
                print("   ", line[-1])
        due = (
            "SELECT min(published_at) FROM posts WHERE type = 'post' AND status = 'publish' "
            "AND published_at > CURRENT_TIMESTAMP"
        )
        print("-- next scheduled post (each write)")
        for line in conn.exec_driver_sql(prefix + due).all():
            print("   ", line[-1])
    engine.dispose()


def memory(pid: int) -> str:
    """A process's peak RSS (VmHWM) and its resident memory now, anonymous and file-backed."""
    status = dict(
        line.split(":", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines()
    )
    mib = {key: int(status[key].split()[0]) / 1024 for key in ("VmHWM", "RssAnon", "RssFile")}
    return (
        f"peak {mib['VmHWM']:.1f} MiB (now {mib['RssAnon']:.1f} MiB anonymous, "
        f"{mib['RssFile']:.1f} MiB file)"
    )


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--posts", type=int, default=100_000)
    parser.add_argument("--per-page", type=int, default=1000)
    parser.add_argument("--db", choices=["sqlite", "postgresql"], default="sqlite")
    parser.add_argument(
        "--plugins", action="store_true", help="load the installed plugins (default: core only)"
    )
    parser.add_argument(
        "--videos", type=int, default=0, help="posts with a video (needs the video plugin)"
    )
    parser.add_argument(
        "--news", type=int, default=0, help="posts from the last 40 hours (the news plugin)"
    )
    parser.add_argument("--first-runs", type=int, default=15)
    parser.add_argument(
        "--encoding",
        default="gzip",
        help="the Accept-Encoding of the first and warm requests: gzip, as crawlers send "
        "it, or identity (the plain bytes, decompressed by the server)",
    )
    parser.add_argument("--warm-requests", type=int, default=300)
    parser.add_argument("--seconds", type=float, default=5.0, help="throughput run length")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp)
        url = empty_database(args.db, directory)
        port = free_port()
        # The worker, a process of its own beside the server's as production.ini has it,
        # applies each write within 50 ms.
        worker = (
            "sitemap_server.maintainer.poll_seconds = 0.05\nsitemap_server.server_timing = true\n"
        )
        ini = write_ini(
            directory, url, port, args.plugins or args.videos > 0 or args.news > 0, worker
        )
        cli(ini, "migrate")
        started = time.perf_counter()
        generate(url, args.posts, args.per_page, args.videos, args.news)
        print(f"{args.db}: generated {args.posts} posts in {time.perf_counter() - started:.1f} s")
        started = time.perf_counter()
        cli(ini, "rebuild-sitemaps")
        rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024
        print(
            f"{args.db}: rebuild-sitemaps in {time.perf_counter() - started:.1f} s "
            f"(largest child process so far: {rss} MB)"
        )
        explain(url)
        token_out = subprocess.run(
            [BIN / "sitemap-server", "--config", ini, "token", "create", "bench"],
            check=True,
            capture_output=True,
            text=True,
        ).stdout.strip()

        maintainer = subprocess.Popen(
            [BIN / "sitemap-server", "--config", ini, "worker"],
            stdout=subprocess.DEVNULL,
            stderr=(directory / "worker.log").open("w"),
        )
        server = subprocess.Popen(
            # A file, not a pipe: nobody reads a pipe, and once full it would block the
            # server's logging (waitress warns about its queue under wrk).
            [BIN / "pserve", str(ini)],
            stdout=subprocess.DEVNULL,
            stderr=(directory / "server.log").open("w"),
        )
        # Beside it, one that never reads the finished documents (as on SQLite): what
        # the first request of a new version costs when the process renders it.
        other_port = free_port()
        other_ini = write_ini(
            directory,
            url,
            other_port,
            args.plugins or args.videos > 0 or args.news > 0,
            worker + "sitemap_server.finished_documents = false\n",
        )
        renderer = subprocess.Popen(
            [BIN / "pserve", str(other_ini)],
            stdout=subprocess.DEVNULL,
            stderr=(directory / "renderer.log").open("w"),
        )
        base = f"http://127.0.0.1:{port}"
        try:
            session = requests.Session()
            wait_until_up(base, server)
            wait_until_up(f"http://127.0.0.1:{other_port}", renderer)
            # The first request the process answers, and the next ones (each a new
            # document, so none is cached): what a crawler meets after a restart.
            cold = []
            for path in ("/post-sitemap.xml", "/author-sitemap.xml", "/category-sitemap.xml"):
                t0 = time.perf_counter()
                session.get(base + path).raise_for_status()
                cold.append((time.perf_counter() - t0) * 1000)
            print(
                "after start (post, author, category page 1, each rendered): "
                + ", ".join(f"{ms:.1f}" for ms in cold)
                + f" ms; server RSS then: {memory(server.pid)}"
            )
            index = session.get(base + "/sitemap_index.xml").text
            post_pages = index.count("/post-sitemap")
            last = f"/post-sitemap{post_pages}.xml" if post_pages > 1 else "/post-sitemap.xml"
            full = max(1, post_pages - 1)  # the last page may hold only a few entries
            targets = {
                "index": "/sitemap_index.xml",
                "post page 1": "/post-sitemap.xml",
                f"post page {full} (last full)": f"/post-sitemap{full}.xml"
                if full > 1
                else "/post-sitemap.xml",
                f"post page {post_pages} (last)": last,
                "author page 1": "/author-sitemap.xml",
                "category page 1": "/category-sitemap.xml",
            }
            if "/news-sitemap.xml" in index:
                targets["news"] = "/news-sitemap.xml"
            video_pages = index.count("/video-sitemap")
            if video_pages:
                targets["video page 1"] = "/video-sitemap.xml"
                if video_pages > 1:
                    full_videos = max(2, video_pages - 1)
                    targets[f"video page {full_videos} (last full)"] = (
                        f"/video-sitemap{full_videos}.xml"
                    )
            # The worker stores every document no change has stored yet (a site just
            # built has none) when it has nothing to apply: measured once it has.
            documents = 1 + index.count("<sitemap>") if args.db == "postgresql" else 0
            database = create_engine(url)
            started = time.perf_counter()
            while True:
                with database.connect() as conn:
                    count = conn.scalar(text("SELECT count(*) FROM finished_documents"))
                if count >= documents or time.perf_counter() - started > 600:
                    break
                time.sleep(0.5)
            print(
                f"finished documents stored by the worker: {count} of {documents} in "
                f"{time.perf_counter() - started:.1f} s"
            )
            api = requests.Session()
            api.headers["Authorization"] = f"Bearer {token_out}"
            # A post near the end (on the last page), with a video when there are videos:
            # its edit gives every measured document a new version.
            editable = args.posts - 1
            if args.videos:
                step = max(1, args.posts // args.videos)
                editable = (args.posts - 1) // step * step
            client = http.client.HTTPConnection("127.0.0.1", port)  # one keep-alive connection
            other = http.client.HTTPConnection("127.0.0.1", other_port)

            def get(
                path: str, via: http.client.HTTPConnection = client, **headers: str
            ) -> http.client.HTTPResponse:
                via.request("GET", path, headers=headers)
                response = via.getresponse()
                response.read()
                return response

            def server_ms(response: http.client.HTTPResponse) -> float:
                """What the server says it spent (``Server-Timing: app;dur=…``)."""
                return float(response.headers["Server-Timing"].partition(";dur=")[2])

            def timed(
                path: str, runs: int, server: list[float] | None = None, **headers: str
            ) -> list[float]:
                times = []
                for _ in range(runs):
                    t0 = time.perf_counter()
                    response = get(path, **headers)
                    times.append((time.perf_counter() - t0) * 1000)
                    if server is not None:
                        server.append(server_ms(response))
                return times

            print(
                f"{'document':26} {'first p50':>9} {'first p95':>9} {'rendered':>8} "
                f"{'srv first':>9} {'srv rend':>8} {'srv warm':>8} "
                f"{'warm p50':>9} {'warm p95':>9} {'304 p50':>8} {'req/s':>7} "
                f"{'wrk p50 p99':>14}  bytes"
            )
            writes: list[float] = []
            for name, path in targets.items():
                first: list[float] = []
                rendered: list[float] = []
                server_first: list[float] = []
                server_rendered: list[float] = []
                server_warm: list[float] = []
                etags: set[str] = set()
                for n in range(args.first_runs):
                    t0 = time.perf_counter()
                    written = api.patch(
                        base + f"/api/posts/{editable}",
                        # A new modified_at moves the post's, its author's and its
                        # terms' lastmod: every measured document has a new version.
                        data=json.dumps(
                            {
                                "title": f"Edited {n}",
                                "modified_at": (
                                    datetime.now(UTC) + timedelta(seconds=n)
                                ).isoformat(),
                            }
                        ),
                        headers={"Content-Type": "application/json"},
                    )
                    written.raise_for_status()
                    writes.append((time.perf_counter() - t0) * 1000)
                    # The worker applies the change (within 50 ms): only then is
                    # the next request the first rendering of the new version.
                    change = written.headers["Sitemap-Change"]
                    while not api.get(
                        base + "/api/sitemaps/status", params={"change": change}
                    ).json()["applied"]:
                        time.sleep(0.01)
                    # On PostgreSQL the servers' versions watch hears of the new version
                    # about a millisecond after the commit (sitemaps/watch.py).
                    time.sleep(0.005)
                    # The first request of the new version at each server, in turn first.
                    for via in (client, other) if n % 2 else (other, client):
                        t0 = time.perf_counter()
                        fresh = get(path, via, **{"Accept-Encoding": args.encoding})
                        spent = (time.perf_counter() - t0) * 1000
                        (first if via is client else rendered).append(spent)
                        mine = server_first if via is client else server_rendered
                        mine.append(server_ms(fresh))
                    etag = fresh.headers["ETag"]
                    assert etag not in etags, f"{path}: {etag} again, not a new version"
                    etags.add(etag)
                r = get(path, **{"Accept-Encoding": args.encoding})
                assert r.status == 200, (path, r.status)
                size = int(r.headers["Content-Length"])
                warm = timed(
                    path, args.warm_requests, server_warm, **{"Accept-Encoding": args.encoding}
                )
                etag = r.headers["ETag"]
                conditional = timed(path, args.warm_requests, **{"If-None-Match": etag})
                rps, wrk_latency = throughput(base + path, args.seconds)
                print(
                    f"{name:26} {statistics.median(first):9.1f} {percentile(first, 0.95):9.1f} "
                    f"{statistics.median(rendered):8.1f} "
                    f"{statistics.median(server_first):9.2f} "
                    f"{statistics.median(server_rendered):8.2f} "
                    f"{statistics.median(server_warm):8.2f} "
                    f"{statistics.median(warm):9.2f} {percentile(warm, 0.95):9.2f} "
                    f"{statistics.median(conditional):8.2f} {rps:7.0f} {wrk_latency:>14}  {size}"
                )
            print(
                f"admin write (PATCH of a post; the worker applies it after): "
                f"p50 {statistics.median(writes):.1f} ms, p95 {percentile(writes, 0.95):.1f} ms"
            )
            print(f"server RSS at the end: {memory(server.pid)}")
        finally:
            for process in (server, renderer, maintainer):
                process.terminate()
                try:
                    process.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    process.kill()


if __name__ == "__main__":
    main()
