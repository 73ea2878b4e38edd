"""Import throughput: ``sitemap-server import`` of a generated site, end to end.

    .venv/bin/python bench/import_bench.py --posts 100000            # SQLite
    scripts/with-postgres .venv/bin/python bench/import_bench.py      # PostgreSQL too

Generates an NDJSON file (authors, categories, tags, posts with terms, images and
content), migrates a fresh database, and times the real command in a subprocess, several
runs each. Prints one line per run and the median. PostgreSQL is measured when
SITEMAP_SERVER_TEST_DATABASE_URL is set (scripts/with-postgres sets it).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import drop_all_tables
from sqlalchemy import create_engine, text

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent


def generate(path: Path, posts: int, authors: int, terms: int) -> None:
    rng = random.Random(1)
    with path.open("w") as out:
        for n in range(1, authors + 1):
            out.write(
                json.dumps({"author": {"id": n, "slug": f"author-{n}", "name": f"Author {n}"}})
                + "\n"
            )
        for n in range(1, terms + 1):
            taxonomy = "category" if n <= terms // 10 else "post_tag"
            out.write(
                json.dumps({"term": {"id": n, "taxonomy": taxonomy, "name": f"Term {n}"}}) + "\n"
            )
        for n in range(1, posts + 1):
            day = 1 + n % 28
            post = {
                "type": "post",
                "title": f"Post number {n} about {rng.choice(['gardens', 'rivers', 'cities'])}",
                "status": "publish" if n % 20 else "draft",
                "author": 1 + n % authors,
                "published_at": f"2024-{1 + n % 12:02d}-{day:02d}T10:{n % 60:02d}:00+00:00",
                "content": f'<p>Text {n}.</p><img src="/uploads/{n}.jpg" alt="">',
                "featured_image": f"/uploads/featured-{n}.jpg",
                "terms": sorted(
                    {1 + n % (terms // 10), terms // 10 + 1 + n % (terms - terms // 10)}
                ),
            }
            out.write(json.dumps({"post": post}) + "\n")


def write_ini(directory: Path, url: str) -> Path:
    ini = directory / "bench.ini"
    ini.write_text(
        "[app:main]\nuse = egg:sitemap-server\n"
        f"sqlalchemy.url = {url}\nsitemap_server.site_url = http://bench.test\n"
    )
    return ini


def fresh_database(url: str, ini: Path) -> None:
    drop_all_tables(url)
    subprocess.run(
        [BIN / "sitemap-server", "--config", ini, "migrate"], check=True, capture_output=True
    )


def run_once(url: str, ini: Path, data: Path, posts: int) -> tuple[float, int]:
    fresh_database(url, ini)
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    started = time.perf_counter()
    subprocess.run(
        [BIN / "sitemap-server", "--config", ini, "import", "-q", data],
        check=True,
        capture_output=True,
    )
    elapsed = time.perf_counter() - started
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    engine = create_engine(url)
    with engine.connect() as conn:
        stored = conn.scalar(text("SELECT count(*) FROM posts"))
    engine.dispose()
    assert stored == posts, f"expected {posts} posts, found {stored}"
    return elapsed, max(peak, before)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--posts", type=int, default=100_000)
    parser.add_argument("--authors", type=int, default=2_000)
    parser.add_argument("--terms", type=int, default=5_000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp)
        data = directory / "site.ndjson"
        generate(data, args.posts, args.authors, args.terms)
        size_mb = data.stat().st_size / 1e6
        lines = args.posts + args.authors + args.terms
        print(f"{data.name}: {lines} lines, {size_mb:.1f} MB ({args.posts} posts)")
        targets = [("sqlite", f"sqlite:///{directory / 'bench.sqlite'}")]
        if os.environ.get("SITEMAP_SERVER_TEST_DATABASE_URL"):
            targets.append(("postgresql", os.environ["SITEMAP_SERVER_TEST_DATABASE_URL"]))
        for name, url in targets:
            ini = write_ini(directory, url)
            times = []
            for run in range(1, args.runs + 1):
                elapsed, peak_kb = run_once(url, ini, data, args.posts)
                times.append(elapsed)
                print(
                    f"{name:10} run {run}: {elapsed:6.1f} s  {args.posts / elapsed:8.0f} posts/s  "
                    f"peak RSS (largest child so far) {peak_kb / 1024:.0f} MB"
                )
            median = statistics.median(times)
            print(f"{name:10} median: {median:6.1f} s  {args.posts / median:8.0f} posts/s")


if __name__ == "__main__":
    main()
