"""What applying one write costs the maintainer, by kind of write, on a large site.

    .venv/bin/python bench/write_cost_bench.py --posts 100000                   # SQLite
    scripts/with-postgres .venv/bin/python bench/write_cost_bench.py --db postgresql

Generates a site with bulk SQL (``sitemap_bench.generate``) and builds its sitemaps,
then for each kind of write sends it through the admin API in-process (WebTest, nothing
applied by the request) and times the maintainer pass that applies it
(``maintenance.apply_pending``): wall time, CPU time (this process and, on PostgreSQL,
its backend, from ``/proc``) and statements, and the request's own wall and CPU time
(issue 30: a write costs what it changes).
Kinds: ``label`` (a post type's label: nothing to rebuild), ``post`` (one post's
title), ``pattern`` (the post type's permalink pattern: every post of it moves). Run it
twice and quote medians.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from api_write_bench import built_site
from common import Statements
from sqlalchemy import text
from webtest import TestApp
from write_bench import cpu_seconds

from sitemap_server.app import site_of_app
from sitemap_server.sitemaps import maintenance

PATTERNS = ["/blog/{slug}/", "/{year}/{month}/{slug}/"]


def writes(client: TestApp) -> dict[str, Callable[[int], Any]]:
    return {
        "label": lambda n: client.patch_json("/api/post-types/post", {"label": f"Posts {n}"}),
        "post": lambda n: client.patch_json(f"/api/posts/{100 + n}", {"title": f"Edited {n}"}),
        "pattern": lambda n: client.patch_json(
            "/api/post-types/post", {"permalink_pattern": PATTERNS[n % 2]}
        ),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--db", choices=["sqlite", "postgresql"], default="sqlite")
    parser.add_argument("--posts", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--kinds", default="label,post,pattern")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        app, client = built_site(args.db, args.posts, Path(tmp))
        engine = site_of_app(app).database
        sessions = site_of_app(app).sessions
        statements = Statements(engine)
        backend: list[int] = []

        def apply() -> tuple[float, float, int]:
            """One maintainer pass: its wall time, CPU time and statements."""
            with sessions.begin() as session:
                if not backend and args.db == "postgresql":
                    backend.append(session.scalar(text("SELECT pg_backend_pid()")))
                sent = statements.count
                started = time.perf_counter()
                cpu = time.process_time() + cpu_seconds(backend)
                maintenance.apply_pending(session)
                wall = time.perf_counter() - started
                cpu = time.process_time() + cpu_seconds(backend) - cpu
                return wall, cpu, statements.count - sent

        apply()  # warm: templates, caches
        for kind in args.kinds.split(","):
            write = writes(client)[kind]
            walls, cpus, sent, request_walls, request_cpus = [], [], [], [], []
            for n in range(args.repeat):
                started = time.perf_counter()
                cpu = time.process_time() + cpu_seconds(backend)
                write(n)  # the request itself (its checks, object_urls), in its own session
                request_walls.append(time.perf_counter() - started)
                request_cpus.append(time.process_time() + cpu_seconds(backend) - cpu)
                wall, cpu, count = apply()
                walls.append(wall)
                cpus.append(cpu)
                sent.append(count)
            print(
                f"{args.db} {args.posts} posts: applying a {kind} write: "
                f"median {statistics.median(walls) * 1000:.1f} ms wall, "
                f"{statistics.median(cpus) * 1000:.1f} ms CPU, "
                f"{statistics.median(sent):.0f} statements; the request: "
                f"{statistics.median(request_walls) * 1000:.1f} ms wall, "
                f"{statistics.median(request_cpus) * 1000:.1f} ms CPU (this process)"
            )
        engine.dispose()


if __name__ == "__main__":
    sys.exit(main())
