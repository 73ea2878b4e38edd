"""``sitemap-server check``: how long a nightly check of a large site takes, and its memory.

    .venv/bin/python bench/check_bench.py --posts 100000            # SQLite
    scripts/with-postgres .venv/bin/python bench/check_bench.py      # PostgreSQL too

Imports a generated site (``import_bench``'s: authors, categories, tags, posts with terms
and images) into a fresh database, then times the real command in a subprocess, several
runs each, with the peak resident memory of each run (``/usr/bin/time -v``). Every run must
find nothing: the import keeps the sitemaps current. PostgreSQL is measured when
SITEMAP_SERVER_TEST_DATABASE_URL is set (scripts/with-postgres sets it).
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from import_bench import BIN, fresh_database, generate, write_ini


def run_check(ini: Path) -> tuple[float, int, str]:
    """One ``check``: seconds, peak RSS in kB, what it printed."""
    started = time.perf_counter()
    finished = subprocess.run(
        ["/usr/bin/time", "-v", BIN / "sitemap-server", "--config", ini, "check"],
        capture_output=True,
        text=True,
    )
    elapsed = time.perf_counter() - started
    assert finished.returncode == 0, finished.stdout + finished.stderr
    peak = re.search(r"Maximum resident set size \(kbytes\): (\d+)", finished.stderr)
    assert peak is not None, finished.stderr
    return elapsed, int(peak.group(1)), finished.stdout.strip()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--posts", type=int, default=100_000)
    parser.add_argument("--authors", type=int, default=2_000)
    parser.add_argument("--terms", type=int, default=5_000)
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument(
        "--skip-sqlite", action="store_true", help="measure PostgreSQL only (a 1M import is long)"
    )
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp)
        data = directory / "site.ndjson"
        generate(data, args.posts, args.authors, args.terms)
        targets = []
        if not args.skip_sqlite:
            targets.append(("sqlite", f"sqlite:///{directory / 'bench.sqlite'}"))
        if os.environ.get("SITEMAP_SERVER_TEST_DATABASE_URL"):
            targets.append(("postgresql", os.environ["SITEMAP_SERVER_TEST_DATABASE_URL"]))
        for name, url in targets:
            ini = write_ini(directory, url)
            fresh_database(url, ini)
            started = time.perf_counter()
            subprocess.run(
                [BIN / "sitemap-server", "--config", ini, "import", "-q", data],
                check=True,
                capture_output=True,
            )
            print(f"{name:10} import of {args.posts} posts: {time.perf_counter() - started:.0f} s")
            times = []
            for run in range(1, args.runs + 1):
                elapsed, peak_kb, said = run_check(ini)
                times.append(elapsed)
                print(f"{name:10} check {run}: {elapsed:6.1f} s  peak RSS {peak_kb / 1024:.0f} MB")
                print(f"{'':10} {said}")
            print(f"{name:10} median: {statistics.median(times):6.1f} s")


if __name__ == "__main__":
    main()
