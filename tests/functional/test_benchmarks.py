"""The read-path benchmark still runs: the numbers in the issues' notes come from it.

It is run on a tiny site (SQLite, its own processes), only to see that it goes from start
to end against the code as it is now: a benchmark that no longer runs hides a regression
until someone needs it. Its numbers are not looked at here.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from sitemap_server.testing import PROJECT_ROOT, server_environment

pytestmark = pytest.mark.slow


def test_the_read_path_benchmark_runs_to_the_end(tmp_path):
    finished = subprocess.run(
        [
            sys.executable,
            str(PROJECT_ROOT / "bench" / "sitemap_bench.py"),
            *("--posts", "300", "--first-runs", "2", "--warm-requests", "3"),
            *("--seconds", "0.2"),
        ],
        cwd=tmp_path,
        env=server_environment(),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert finished.returncode == 0, finished.stderr[-3000:]
    for document in ("index", "post page 1", "author page 1", "category page 1"):
        assert f"\n{document} " in finished.stdout, finished.stdout
    assert "server RSS at the end" in finished.stdout
