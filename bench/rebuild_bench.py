"""The maintainer's full rebuild of one sitemap: CPU time per entry on a large site.

    .venv/bin/python bench/rebuild_bench.py --posts 100000                    # SQLite
    scripts/with-postgres .venv/bin/python bench/rebuild_bench.py --db postgresql

Generates a site with bulk SQL (``sitemap_bench.generate``: a third of the posts with an
image in their content, half with a featured image), builds every sitemap once, then
rebuilds the posts' sitemap whole (``store.refresh_provider`` with no keys, what a rebuild
or an import's change log does to it) ``--repeat`` times, each in a transaction rolled
back: CPU time of this process per stored entry (and of the PostgreSQL backend, from
``/proc``), wall time, medians. ``--profile`` prints where one rebuild spends its time;
``--all`` times ``maintenance.rebuild`` (every sitemap) instead.
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import statistics
import sys
import tempfile
import time
from pathlib import Path

from common import drop_all_tables
from sitemap_bench import cli, generate
from sqlalchemy import func, select, text
from write_bench import cpu_seconds, write_ini

from sitemap_server.models import SitemapEntry
from sitemap_server.site import Site
from sitemap_server.sitemaps import maintenance
from sitemap_server.sitemaps.store import refresh_provider


def rebuild(site: Site, everything: bool, backend: list[int]) -> tuple[float, float, int]:
    """One rebuild of the posts' sitemap (or of every one), rolled back: its wall time,
    its CPU time (this process and the database's backend) and the entries stored."""
    with site.sessions() as session:
        if not backend and session.get_bind().dialect.name == "postgresql":
            backend.append(session.scalar(text("SELECT pg_backend_pid()")))
        started, cpu = time.perf_counter(), time.process_time() + cpu_seconds(backend)
        if everything:
            maintenance.rebuild(session)
        else:
            maintenance.lock(session, maintenance.MAINTAINER)
            providers = maintenance.all_providers(session, site)
            ctx = maintenance.build_context(session, site, providers)
            refresh_provider(ctx, next(p for p in providers if p.name == "post"), None)
        wall = time.perf_counter() - started
        cpu = time.process_time() + cpu_seconds(backend) - cpu
        where = [] if everything else [SitemapEntry.provider == "post"]
        entries = session.scalar(select(func.count()).select_from(SitemapEntry).where(*where))
        session.rollback()
    return wall, cpu, entries or 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--db", choices=["sqlite", "postgresql"], default="sqlite")
    parser.add_argument("--posts", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--per-page", type=int, default=50_000, help="entries per sitemap page")
    parser.add_argument("--all", action="store_true", help="rebuild every sitemap")
    parser.add_argument("--profile", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        if args.db == "postgresql":
            url = os.environ["SITEMAP_SERVER_TEST_DATABASE_URL"]
        else:
            url = f"sqlite:///{Path(tmp) / 'bench.sqlite'}"
        drop_all_tables(url)
        ini = write_ini(Path(tmp), url, 0)
        cli(ini, "migrate")
        generate(url, args.posts, args.per_page)
        cli(ini, "rebuild-sitemaps")
        site = Site(
            {
                "sqlalchemy.url": url,
                "sitemap_server.site_url": "http://bench.test",
                "sitemap_server.load_entrypoints": "false",
            }
        )
        backend: list[int] = []
        what = "every sitemap" if args.all else "the post sitemap"
        rebuild(site, args.all, backend)  # loads templates, warms caches
        walls, cpus = [], []
        for _ in range(args.repeat):
            wall, cpu, entries = rebuild(site, args.all, backend)
            walls.append(wall)
            cpus.append(cpu)
            print(
                f"{args.db} {args.posts} posts, {what} rebuilt: {entries} entries, "
                f"{wall:.2f} s wall, CPU {cpu:.2f} s ({cpu / entries * 1e6:.1f} µs per entry)",
                flush=True,
            )
        print(
            f"median: {statistics.median(walls):.2f} s wall, CPU {statistics.median(cpus):.2f} s "
            f"({statistics.median(cpus) / entries * 1e6:.1f} µs per entry)"
        )
        if args.profile:
            profile = cProfile.Profile()
            profile.enable()
            rebuild(site, args.all, backend)
            profile.disable()
            stats = pstats.Stats(profile)
            stats.sort_stats("tottime").print_stats(30)
            stats.sort_stats("cumulative").print_stats("sitemap_server", 40)
        site.close()


if __name__ == "__main__":
    sys.exit(main())
