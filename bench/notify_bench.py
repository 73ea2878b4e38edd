"""Notifications benchmark: what the outbox costs a write, and how fast the worker sends.

    .venv/bin/python bench/notify_bench.py                      # SQLite
    scripts/with-postgres .venv/bin/python bench/notify_bench.py --db postgresql

Two applications share one database, one with notifications off (no target: nothing is
recorded) and one with a ping target and an IndexNow key pointing at a local search
engine on 127.0.0.1 (answers 200 at once). Measured, in the same run:

- a bulk import of ``--posts`` posts through ``POST /api/import`` and the maintainer's
  pass that applies it, off, on, off again (the outbox gets a row per changed URL);
- ``--writes`` PATCHes of single posts, alternating off and on, p50/p95 each;
- the same PATCHes while a worker thread is stuck on a target that takes 5 s to answer
  (the admin request must not notice);
- the worker: coalescing the import's burst (one ping, IndexNow batches of 10,000) and
  sending it; then sending ``--notifications`` queued pings one after another (sends/s
  over one keep-alive connection), and the process's peak RSS.
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import statistics
import sys
import tempfile
import threading
import time
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from common import empty_database, migrate
from sqlalchemy import func, insert, select

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from webtest import TestApp  # noqa: E402

from sitemap_server.app import main as make_app  # noqa: E402
from sitemap_server.app import site_of_app  # noqa: E402
from sitemap_server.models import Notification, NotificationChange  # noqa: E402
from sitemap_server.models.notifications import PENDING  # noqa: E402
from sitemap_server.notify.ping import NAME as PING  # noqa: E402
from sitemap_server.notify.worker import Worker, WorkerThread  # noqa: E402
from sitemap_server.services.tokens import create_token  # noqa: E402

KEY = "benchkey12345678"


class Engine:
    """A local search engine: answers 200 at once, or after ``slow`` seconds on /slow."""

    def __init__(self, slow: float = 5.0) -> None:
        self.count = 0
        engine = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"  # keep-alive, as a real engine

            def _handle(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                if length:
                    self.rfile.read(length)
                engine.count += 1
                if self.path.startswith("/slow"):
                    time.sleep(slow)
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            do_GET = do_POST = _handle

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def ms(values: list[float]) -> str:
    return f"p50 {statistics.median(values):.1f} ms, p95 {percentile(values, 0.95):.1f} ms"


def import_body(first_id: int, posts: int) -> bytes:
    lines = [json.dumps({"author": {"id": first_id, "slug": f"a{first_id}", "name": "A"}})]
    for n in range(posts):
        post = {
            "type": "post",
            "status": "publish",
            "title": f"Post {first_id + n}",
            "slug": f"p{first_id + n}",
            "author": first_id,
            "published_at": "2024-01-01T00:00:00+00:00",
        }
        lines.append(json.dumps({"post": post}))
    return "\n".join(lines).encode()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--db", choices=["sqlite", "postgresql"], default="sqlite")
    parser.add_argument("--posts", type=int, default=20_000, help="posts per bulk import")
    parser.add_argument("--writes", type=int, default=200, help="PATCHes per variant")
    parser.add_argument("--notifications", type=int, default=2_000, help="pings to send")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp)
        url = empty_database(args.db, directory)
        migrate(url, directory)
        search = Engine()
        base = {
            "sqlalchemy.url": url,
            "sitemap_server.site_url": "http://bench.test",
            "sitemap_server.load_entrypoints": "false",
        }
        notifying = {
            **base,
            "sitemap_server.ping.targets": f"{search.url}/ping?sitemap={{sitemap}}",
            "sitemap_server.indexnow.key": KEY,
            "sitemap_server.indexnow.endpoint": f"{search.url}/indexnow",
        }
        app_off, app_on = make_app({}, **base), make_app({}, **notifying)
        engine = site_of_app(app_off).database
        with site_of_app(app_off).sessions() as session:
            token = create_token(session, "bench")
            session.commit()
        off, on = TestApp(app_off), TestApp(app_on)
        for client in (off, on):
            client.authorization = ("Bearer", token)

        def outbox() -> int:
            with engine.connect() as conn:
                return int(conn.scalar(select(func.count()).select_from(NotificationChange)))

        print(f"{args.db}: bulk import of {args.posts} posts (one transaction each)")
        # Off, on, off: each import lands on a larger site than the one before it.
        rounds = (("off", off), ("on", on), ("off", off))
        for n, (name, client) in enumerate(rounds):
            first = 1 + n * (args.posts + 10)
            body = import_body(first, args.posts)
            started = time.perf_counter()
            client.post("/api/import", body, content_type="application/x-ndjson", status=200)
            # The maintainer applies the import (the outbox is written then), as the
            # worker would right after it.
            site_of_app(client.app).engine.apply()
            took = time.perf_counter() - started
            print(f"  notifications {name:3}: {took:.2f} s; outbox rows: {outbox()}")

        ids = [int(i) for i in range(1, args.posts + 1)]
        times: dict[str, list[float]] = {"off": [], "on": []}
        for n in range(args.writes * 2):
            name, client = ("off", off) if n % 2 == 0 else ("on", on)
            post_id = random.choice(ids)
            started = time.perf_counter()
            client.patch_json(
                f"/api/posts/{post_id}",
                {"modified_at": datetime.now(UTC).isoformat()},
                status=200,
            )
            times[name].append((time.perf_counter() - started) * 1000)
        print(f"{args.db}: PATCH of one post, {args.writes} each, alternating")
        for name in ("off", "on"):
            print(f"  notifications {name:3}: {ms(times[name])}")

        worker = Worker(site_of_app(app_on))
        rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024
        changes = outbox()
        started = time.perf_counter()
        made = worker.coalesce(force=True)
        coalesced = time.perf_counter() - started
        started = time.perf_counter()
        attempts = worker.run_once()
        sent = time.perf_counter() - started
        rss_after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024
        print(
            f"{args.db}: worker: {changes} outbox rows coalesced into {made} notifications in "
            f"{coalesced * 1000:.0f} ms; sent {len(attempts)} in {sent * 1000:.0f} ms; "
            f"peak RSS {rss_before} -> {rss_after} MB"
        )

        now = datetime.now(UTC)
        row = {
            "created_at": now,
            "channel": PING,
            "url": f"{search.url}/ping?sitemap=x",
            "changes": 1,
            "sitemaps": ["post"],
            "status": PENDING,
            "attempts": 0,
            "due_at": now,
        }
        with engine.begin() as conn:
            conn.execute(insert(Notification), [row] * args.notifications)
        started = time.perf_counter()
        attempts = worker.run_once()
        took = time.perf_counter() - started
        print(
            f"{args.db}: worker: {len(attempts)} pings sent in {took:.2f} s "
            f"({len(attempts) / took:.0f}/s: claim, GET, record, one at a time)"
        )

        slow = {
            **notifying,
            "sitemap_server.ping.targets": f"{search.url}/slow?sitemap={{sitemap}}",
            "sitemap_server.notify.quiet_seconds": "0",
            "sitemap_server.notify.poll_seconds": "0.05",
        }
        app_slow = make_app({}, **slow)
        thread = WorkerThread(Worker(site_of_app(app_slow)))
        thread.start()
        client = TestApp(app_slow)
        client.authorization = ("Bearer", token)
        slow_times = []
        for _ in range(args.writes):
            started = time.perf_counter()
            client.patch_json(
                f"/api/posts/{random.choice(ids)}",
                {"modified_at": datetime.now(UTC).isoformat()},
                status=200,
            )
            slow_times.append((time.perf_counter() - started) * 1000)
        stuck = search.count
        print(
            f"{args.db}: PATCH while the worker thread waits on a 5 s target: "
            f"{ms(slow_times)} ({stuck} requests reached the engine so far)"
        )
        thread.stop(timeout=10)  # the request to the slow target ends first
        for app in (app_off, app_on, app_slow):
            site_of_app(app).close()


if __name__ == "__main__":
    main()
