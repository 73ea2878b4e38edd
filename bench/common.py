"""What the benchmarks share: each starts from an empty database."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import requests
from sqlalchemy import MetaData, create_engine, event


def drop_all_tables(url: str) -> None:
    """Every table of the database at ``url`` dropped, Alembic's version tables included,
    so that ``sitemap-server migrate`` starts from nothing."""
    engine = create_engine(url)
    meta = MetaData()
    meta.reflect(engine)
    with engine.begin() as conn:
        meta.drop_all(conn)
    engine.dispose()


def empty_database(db: str, directory: Path) -> str:
    """The URL of an empty database: a new SQLite file in ``directory``, or the
    PostgreSQL database ``scripts/with-postgres`` names, emptied."""
    if db == "sqlite":
        return f"sqlite:///{directory / 'bench.sqlite'}"
    url = os.environ["SITEMAP_SERVER_TEST_DATABASE_URL"]
    drop_all_tables(url)
    return url


def migrate(url: str, directory: Path) -> Path:
    """``sitemap-server migrate`` on ``url``, with a minimal ini file (no plugins) written
    in ``directory``; that file."""
    ini = directory / "bench.ini"
    ini.write_text(
        "[app:main]\nuse = egg:sitemap-server\n"
        f"sqlalchemy.url = {url}\nsitemap_server.site_url = http://bench.test\n"
        "sitemap_server.load_entrypoints = false\n"
    )
    command = Path(sys.executable).parent / "sitemap-server"
    subprocess.run([command, "--config", ini, "migrate"], check=True, capture_output=True)
    return ini


# How long a server may take to answer its first request: generous, since a benchmark
# (and the test that runs it) may start on a machine busy with other work.
STARTUP_SECONDS = 180


def wait_until_up(base: str, process: subprocess.Popen[bytes] | None = None) -> None:
    """Until ``base``/robots.txt answers 200 (bounded by ``STARTUP_SECONDS``); fails at
    once if ``process``, the server, has exited."""
    deadline = time.monotonic() + STARTUP_SECONDS
    while time.monotonic() < deadline:
        if process is not None and process.poll() is not None:
            raise RuntimeError(f"the server exited with {process.returncode} before answering")
        try:
            if requests.get(f"{base}/robots.txt", timeout=5).status_code == 200:
                return
        except requests.ConnectionError:
            pass
        time.sleep(0.1)  # polling the starting server, bounded by the deadline
    raise RuntimeError(f"{base} did not answer within {STARTUP_SECONDS} s")


class Statements:
    """The SQL statements the engine sends, counted (and kept while ``keep``, each with
    the wall time it took to execute)."""

    def __init__(self, engine: Any) -> None:
        self.count = 0
        self.keep = False
        self.kept: list[str] = []
        self.started = 0.0
        event.listen(engine, "before_cursor_execute", self._before)
        event.listen(engine, "after_cursor_execute", self._after)

    def _before(self, *_: Any) -> None:
        self.count += 1
        self.started = time.perf_counter()

    def _after(self, _conn: Any, _cursor: Any, statement: str, *_: Any) -> None:
        if self.keep:
            took = (time.perf_counter() - self.started) * 1000
            self.kept.append(f"{took:6.2f} ms  " + " ".join(statement.split())[:150])


# wrk's units of time, in milliseconds.
WRK_UNITS = {"us": 0.001, "ms": 1.0, "s": 1000.0}


def wrk_numbers(out: str) -> dict[str, Any]:
    """What ``wrk --latency`` printed: requests/s, requests, p50 and p99 in ms, non-2xx
    or 3xx answers, and its socket errors by kind (connect, read, write, timeout)."""

    def latency(percent: str) -> float:
        found = re.search(rf"^\s*{percent}%\s+([\d.]+)(us|ms|s)\s*$", out, re.MULTILINE)
        return float(found.group(1)) * WRK_UNITS[found.group(2)] if found else float("nan")

    def count(pattern: str) -> float:
        found = re.search(pattern, out)
        return float(found.group(1)) if found else 0.0

    errors = next((line for line in out.splitlines() if "Socket errors" in line), "")
    return {
        "rate": count(r"Requests/sec:\s+([\d.]+)"),
        "requests": count(r"(\d+) requests in"),
        "p50": latency("50"),
        "p99": latency("99"),
        "non2xx": count(r"Non-2xx or 3xx responses:\s+(\d+)"),
        "socket": {
            kind: float(n) for kind, n in re.findall(r"(connect|read|write|timeout) (\d+)", errors)
        },
    }
