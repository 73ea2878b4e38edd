"""A PATCH in-process: the statements it sends and the CPU time it costs the API.

    .venv/bin/python bench/api_write_bench.py                                   # SQLite
    scripts/with-postgres .venv/bin/python bench/api_write_bench.py --db postgresql

Generates a site with bulk SQL (``sitemap_bench.generate``), then sends ``--patches``
PATCHes of post titles (``--slug``: of slugs, each new, as ``varnish_bench.py`` sends
them; ``--plugins``: with the installed plugins loaded) through WebTest (no HTTP server,
no worker: the API's own cost, the maintainer's is ``maintainer_bench.py``'s) and prints
the statements of one and the CPU time per PATCH of this process (on PostgreSQL the
backend's is not included).
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from common import Statements, empty_database, migrate
from sitemap_bench import cli, generate, write_ini
from webtest import TestApp

from sitemap_server.app import main as make_app
from sitemap_server.app import site_of_app


def built_site(db: str, posts: int, directory: Path, plugins: bool = False) -> tuple[Any, TestApp]:
    """A generated site of ``posts`` posts with its sitemaps built, and the application
    in-process (no request applies the change log; with ``plugins``, the installed
    plugins loaded) with a client that holds a token."""
    url = empty_database(db, directory)
    ini = migrate(url, directory)
    if plugins:  # and the plugins' tables
        ini = write_ini(directory, url, 0, plugins)
        cli(ini, "migrate")
    generate(url, posts, 1000)
    cli(ini, "rebuild-sitemaps")
    token = cli(ini, "token", "create", "bench").strip()
    app = make_app(
        {},
        **{
            "sqlalchemy.url": url,
            "sitemap_server.site_url": "http://bench.test",
            "sitemap_server.load_entrypoints": "true" if plugins else "false",
            "sitemap_server.max_staleness": "3600",  # no request applies the log
        },
    )
    return app, TestApp(app, extra_environ={"HTTP_AUTHORIZATION": f"Bearer {token}"})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--db", choices=["sqlite", "postgresql"], default="sqlite")
    parser.add_argument("--posts", type=int, default=10_000)
    parser.add_argument("--patches", type=int, default=300)
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--profile", action="store_true", help="profile the last run")
    parser.add_argument(
        "--slug",
        action="store_true",
        help="PATCH slugs, each new (the post's URL moves), as bench/varnish_bench.py does",
    )
    parser.add_argument("--plugins", action="store_true", help="load the installed plugins")
    args = parser.parse_args()
    field = "slug" if args.slug else "title"
    with tempfile.TemporaryDirectory() as tmp:
        app, client = built_site(args.db, args.posts, Path(tmp), args.plugins)
        statements = Statements(site_of_app(app).database)
        for n in range(10):  # templates, caches, prepared statements
            client.patch_json(f"/api/posts/{n + 1}", {field: f"warm-{n}"})
        statements.keep = True
        client.patch_json("/api/posts/20", {field: "counted"})
        statements.keep = False
        print(f"{args.db}: a PATCH sends {len(statements.kept)} statements:")
        print("\n".join(f"  {statement}" for statement in statements.kept))
        profile = cProfile.Profile()
        for run in range(1, args.runs + 1):
            if args.profile and run == args.runs:
                profile.enable()
            started = time.process_time()
            for n in range(args.patches):
                post = 100 + (run * args.patches + n) % (args.posts - 100)
                client.patch_json(f"/api/posts/{post}", {field: f"run-{run}-{n}"})
            spent = (time.process_time() - started) * 1000 / args.patches
            profile.disable()
            print(f"run {run}: {spent:.2f} ms CPU per PATCH (this process)")
        if args.profile:
            stats = pstats.Stats(profile)
            stats.sort_stats("tottime").print_stats(30)
            stats.sort_stats("cumulative").print_stats(70)
            stats.print_callees("tm_tween|_finish|commit")
        site_of_app(app).close()


if __name__ == "__main__":
    sys.exit(main())
