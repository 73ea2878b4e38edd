"""The worker's memory while it coalesces one large burst of changes.

    .venv/bin/python bench/coalesce_bench.py --urls 1000000                 # SQLite
    scripts/with-postgres .venv/bin/python bench/coalesce_bench.py --db postgresql

Fills the outbox with ``--urls`` changed URLs (bulk SQL: a million-post import's
burst), then coalesces it once, as the worker does (one ping, IndexNow batches of
10,000), and reports the time and how much the process's peak RSS grew while it did:
what a worker needs to announce the largest burst.
"""

from __future__ import annotations

import argparse
import resource
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

from common import empty_database, migrate
from sqlalchemy import func, select, text

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from sitemap_server.app import main as make_app  # noqa: E402
from sitemap_server.app import site_of_app  # noqa: E402
from sitemap_server.models import Notification  # noqa: E402
from sitemap_server.notify import outbox  # noqa: E402


def peak_mb() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--db", choices=["sqlite", "postgresql"], default="sqlite")
    parser.add_argument("--urls", type=int, default=1_000_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp)
        url = empty_database(args.db, directory)
        settings = {
            "sqlalchemy.url": url,
            "sitemap_server.site_url": "http://bench.test",
            "sitemap_server.load_entrypoints": "false",
            "sitemap_server.ping.targets": "http://127.0.0.1:9/ping?sitemap={sitemap}",
            "sitemap_server.indexnow.key": "benchkey12345678",
            "sitemap_server.indexnow.endpoint": "http://127.0.0.1:9/indexnow",
        }
        migrate(url, directory)
        app = make_app({}, **settings)
        sessions = site_of_app(app).sessions
        # Made by the database, so the bench's own memory stays out of the figure.
        numbers = (
            "SELECT generate_series(0, :count - 1) AS n"
            if args.db == "postgresql"
            else "WITH RECURSIVE c(n) AS (SELECT 0 UNION ALL SELECT n + 1 FROM c "
            "WHERE n < :count - 1) SELECT n FROM c"
        )
        with sessions.begin() as session:
            session.execute(
                text(
                    "INSERT INTO notification_changes (created_at, sitemap, url, change) "
                    "SELECT :now, 'post', 'http://bench.test/' || (n / 1000) || "
                    "'/a-post-with-a-title-' || n || '/', 'added' FROM (" + numbers + ") AS s"
                ),
                {"now": datetime.now(UTC), "count": args.urls},
            )
        config = site_of_app(app).notify
        before = peak_mb()
        started = time.perf_counter()
        with sessions.begin() as session:
            ready = outbox.burst_ready(session, config, force=True)
            assert ready is not None
            made = outbox.coalesce(session, config, ready)
        took = time.perf_counter() - started
        with sessions() as session:
            stored = session.scalar(select(func.count()).select_from(Notification))
        print(
            f"{args.db}: {args.urls:,} changed URLs coalesced into {len(made)} notifications "
            f"({stored} stored) in {took:.1f} s; peak RSS {before} -> {peak_mb()} MB"
        )
        site_of_app(app).close()


if __name__ == "__main__":
    main()
