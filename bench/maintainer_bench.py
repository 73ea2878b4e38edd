"""One maintainer pass: how long applying a few changed posts takes on a large site.

    .venv/bin/python bench/maintainer_bench.py --posts 1000000                  # SQLite
    scripts/with-postgres .venv/bin/python bench/maintainer_bench.py --db postgresql

Generates a site with bulk SQL (``sitemap_bench.generate``) and builds its sitemaps,
then records changes as a PATCH would (each post with its author and terms) and times
``maintenance.apply_pending`` for ``--sizes`` of them (1, 5, 25, and 500: what a sitemap
request applies at most when changes waited too long), several times each: wall time,
CPU time (this process, and on PostgreSQL its backend too, from ``/proc``) and SQL
statements per pass. ``--news N`` loads the installed plugins (video and news) and edits
N posts first, unmeasured: the news sitemap lists them, and every edit after.
``--profile`` prints where 20 passes of one spend their time; ``--statements`` prints
the statements of one pass of 1. ``--journal-cost`` times each size again with the
change feed's journal left out of the pass (``journal.record`` a no-op), turn about with
it, to price what the journal adds to a write's pass; ``--finished-cost`` the same with
the finished documents rendered and never edited (``finished._edited`` refused), and
left out (those the pass changed are dropped, and stored again after the pass,
unmeasured, so that each pass finds every document stored)."""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

from common import Statements, drop_all_tables
from sitemap_bench import blog_shaped, cli, generate, write_ini
from sqlalchemy import delete, text
from sqlalchemy.orm import Session, sessionmaker
from write_bench import cpu_seconds

from sitemap_server.models import FinishedDocument
from sitemap_server.site import Site
from sitemap_server.sitemaps import finished, journal, maintenance
from sitemap_server.sitemaps.changes import ContentChanges, log


def record(sessions: sessionmaker[Session], rng: random.Random, posts: int, count: int) -> None:
    """``count`` posts edited, recorded as the admin API records them."""
    with sessions.begin() as session:
        for _ in range(count):
            post = rng.randint(1, posts)
            session.execute(
                text("UPDATE posts SET modified_at = CURRENT_TIMESTAMP WHERE id = :id"),
                {"id": post},
            )
            author = session.scalar(
                text("SELECT author_id FROM posts WHERE id = :id"), {"id": post}
            )
            terms = set(
                session.scalars(
                    text("SELECT term_id FROM post_terms WHERE post_id = :id"), {"id": post}
                )
            )
            log(session, ContentChanges(posts={post}, authors={author}, terms=terms))


def apply(sessions: sessionmaker[Session], backend: list[int]) -> tuple[float, float]:
    """One pass: its wall time and its CPU time (this process and the database backend)."""
    started, cpu = time.perf_counter(), time.process_time() + cpu_seconds(backend)
    with sessions.begin() as session:
        if not backend and session.get_bind().dialect.name == "postgresql":
            backend.append(session.scalar(text("SELECT pg_backend_pid()")))
            cpu += cpu_seconds(backend)
        maintenance.apply_pending(session)
    return time.perf_counter() - started, time.process_time() + cpu_seconds(backend) - cpu


# What a pass does with the finished documents, as it is (the variants replace it).
STORE_CHANGED = finished._store_changed


def rendered(session: Session, tags: list[str], site: Site) -> None:
    """``finished._store_changed`` with every document rendered, none edited."""
    edit = finished._edited
    finished._edited = lambda *args: False
    try:
        STORE_CHANGED(session, tags, site)
    finally:
        finished._edited = edit


def forgotten(session: Session, tags: list[str], site: Site) -> None:
    """No finished document stored: those the pass changed are dropped (one statement,
    as a maintainer that does not store them would), and stored again after the pass,
    unmeasured, so that every pass finds each document stored."""
    names = [tag.removeprefix("doc:") for tag in tags if tag.startswith("doc:")]
    session.execute(
        delete(FinishedDocument).where(FinishedDocument.name.in_([*names, "sitemap_index"]))
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--db", choices=["sqlite", "postgresql"], default="sqlite")
    parser.add_argument("--posts", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--per-page", type=int, default=1000, help="entries per sitemap page")
    parser.add_argument("--sizes", default="1,5,25,500", help="changed posts per pass")
    parser.add_argument("--profile", action="store_true")
    parser.add_argument(
        "--profile-size", type=int, default=1, help="changed posts per profiled pass"
    )
    parser.add_argument("--statements", action="store_true")
    parser.add_argument("--journal-cost", action="store_true")
    parser.add_argument("--finished-cost", action="store_true")
    parser.add_argument(
        "--news",
        type=int,
        default=None,
        metavar="N",
        help="with the installed plugins (video, news), N posts edited just before (the news)",
    )
    parser.add_argument(
        "--one-author",
        action="store_true",
        help="as most blogs are: every post by one author and in one category",
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        if args.db == "postgresql":
            url = os.environ["SITEMAP_SERVER_TEST_DATABASE_URL"]
        else:
            url = f"sqlite:///{Path(tmp) / 'bench.sqlite'}"
        drop_all_tables(url)
        plugins = args.news is not None
        ini = write_ini(Path(tmp), url, 0, plugins)
        cli(ini, "migrate")
        generate(url, args.posts, args.per_page)
        if args.one_author:
            blog_shaped(url)
        cli(ini, "rebuild-sitemaps")
        site = Site(
            {
                "sqlalchemy.url": url,
                "sitemap_server.site_url": "http://bench.test",
                "sitemap_server.load_entrypoints": "true" if plugins else "false",
                # Stored on SQLite too (auto: on PostgreSQL only), to price them.
                "sitemap_server.finished_documents": "true",
            }
        )
        engine, sessions = site.database, site.sessions
        statements = Statements(engine)
        backend: list[int] = []
        rng = random.Random(1)
        if plugins and args.news:  # the news sitemap lists them, and each edit after
            record(sessions, rng, args.posts, args.news)
        apply(sessions, backend)  # the first pass loads templates and warms caches
        kept_record, kept_store = journal.record, finished._store_changed
        variants = [("", kept_record, kept_store)]
        if args.journal_cost:
            variants.append((" (no journal)", lambda ctx: None, kept_store))
        if args.finished_cost:
            variants.append((" (finished documents rendered, never edited)", kept_record, rendered))
            variants.append((" (no finished documents)", kept_record, forgotten))
        while site.engine.finish():  # every document stored: what a pass edits
            pass
        for count in (int(size) for size in args.sizes.split(",")):
            measured: dict[str, tuple[list[float], list[float], list[int]]] = {
                name: ([], [], []) for name, _, _ in variants
            }
            for _ in range(args.repeat):
                for name, recorder, store in variants:  # turn about, on the same machine
                    journal.record, finished._store_changed = recorder, store
                    times, cpus, sent = measured[name]
                    record(sessions, rng, args.posts, count)
                    before = statements.count
                    wall, cpu = apply(sessions, backend)
                    times.append(wall)
                    cpus.append(cpu)
                    sent.append(statements.count - before)
                    while site.engine.finish():  # what ``forgotten`` dropped, unmeasured
                        pass
            journal.record, finished._store_changed = kept_record, kept_store
            for name, (times, cpus, sent) in measured.items():
                print(
                    f"{args.db} {args.posts} posts: a pass applying {count:4} changed posts"
                    f"{name}: median {statistics.median(times) * 1000:.1f} ms "
                    f"(max {max(times) * 1000:.1f}), CPU {statistics.median(cpus) * 1000:.1f} "
                    f"ms, {statistics.median(sent):.0f} statements"
                )
        if args.statements:
            record(sessions, rng, args.posts, 1)
            statements.keep = True
            apply(sessions, backend)
            statements.keep = False
            print("\n".join(statements.kept))
        if args.profile:  # passes of one change (by default), as sequential writes make them
            profile = cProfile.Profile()
            for _ in range(20):
                record(sessions, rng, args.posts, args.profile_size)
                profile.enable()
                apply(sessions, backend)
                profile.disable()
            stats = pstats.Stats(profile)
            stats.sort_stats("tottime").print_stats(25)
            stats.sort_stats("cumulative").print_stats(60)
            stats.sort_stats("cumulative").print_stats("sitemap_server", 60)
        site.close()


if __name__ == "__main__":
    sys.exit(main())
