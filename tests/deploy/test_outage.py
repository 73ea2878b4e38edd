"""A real PostgreSQL stopped under a real ``pserve production.ini``, then started again.

While the database is down every request answers 503 with ``Retry-After`` (problem
details on the API, a short plain body on the sitemaps), requests in flight when it stops
included; none answers 500 or hangs. Once it is back, the same requests answer 200 without
restarting anything (``pool_pre_ping`` replaces the dead connections).

The cluster is this test's own (initdb on a free port of 127.0.0.1), so stopping it
disturbs no other test. ``make test`` runs this module once, on PostgreSQL, where
``scripts/with-postgres`` has made sure the server's binaries are installed.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
import threading
import time
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import requests
from sqlalchemy import create_engine, text

from sitemap_server.sitemaps.maintenance import MAINTAINER
from sitemap_server.sitemaps.presence import worker_alive
from sitemap_server.testing import (
    free_port,
    production_command,
    serve_production,
    server_environment,
    wait_until,
    worker_process,
)

pytestmark = pytest.mark.slow

SITE_URL = "http://outage.test"
URLS = ["/sitemap_index.xml", "/post-sitemap.xml", "/sitemaps/post-sitemap.html", "/api/posts"]
# Bounds on waiting for the server to notice (each poll is one request).
DEADLINE_SECONDS = 30


def postgresql_binaries() -> Path:
    found = sorted(Path("/usr/lib/postgresql").glob("*/bin/pg_ctl"), key=lambda p: p.parts)
    if not found:
        pytest.fail("PostgreSQL is not installed: run the suite through scripts/with-postgres")
    return found[-1].parent


@dataclass
class Cluster:
    """A PostgreSQL cluster of our own, which the test may stop and start."""

    binaries: Path
    directory: Path
    port: int
    as_user: list[str]

    @property
    def url(self) -> str:
        return f"postgresql+psycopg://postgres@127.0.0.1:{self.port}/sitemap"

    def ctl(self, *args: str) -> None:
        options = f"-h 127.0.0.1 -p {self.port} -k {self.directory} -c fsync=off"
        command = [str(self.binaries / "pg_ctl"), "-D", str(self.directory / "data")]
        subprocess.run(
            [*self.as_user, *command, "-l", str(self.directory / "log"), "-o", options, *args],
            check=True,
            capture_output=True,
            timeout=60,
        )

    def start(self) -> None:
        self.ctl("-w", "start")

    def stop(self) -> None:
        self.ctl("-m", "immediate", "-w", "stop")


@pytest.fixture
def cluster() -> Iterator[Cluster]:
    binaries = postgresql_binaries()
    directory = Path(tempfile.mkdtemp(prefix="sitemap-outage."))
    as_user: list[str] = []
    if os.geteuid() == 0:  # initdb refuses root; the package brings the postgres user
        shutil.chown(directory, "postgres")
        as_user = ["runuser", "-u", "postgres", "--"]
    found = Cluster(binaries, directory, free_port(), as_user)
    initdb = [str(binaries / "initdb"), "-D", str(directory / "data"), "-U", "postgres"]
    subprocess.run(
        [*as_user, *initdb, "-A", "trust", "-E", "UTF8", "--no-sync"],
        check=True,
        capture_output=True,
        timeout=120,
    )
    found.start()
    createdb = [str(binaries / "createdb"), "-h", "127.0.0.1", "-p", str(found.port)]
    subprocess.run([*as_user, *createdb, "-U", "postgres", "sitemap"], check=True, timeout=60)
    try:
        yield found
    finally:
        stop = [str(binaries / "pg_ctl"), "-D", str(directory / "data"), "-m", "immediate"]
        subprocess.run([*as_user, *stop, "stop"], capture_output=True, timeout=60)
        shutil.rmtree(directory, ignore_errors=True)


def command(cluster: Cluster, *args: str) -> str:
    env = server_environment(
        SITEMAP_SERVER_DATABASE_URL=cluster.url, SITEMAP_SERVER_SITE_URL=SITE_URL
    )
    return production_command(env, *args)


@dataclass
class Crawler:
    """Requests every URL in turn until stopped, recording what each answered."""

    base: str
    token: str
    answers: list[tuple[str, int, str | None]] = field(default_factory=list)
    running: bool = True

    def crawl(self) -> None:
        with requests.Session() as session:
            session.headers["Authorization"] = f"Bearer {self.token}"
            while self.running:
                for url in URLS:
                    response = session.get(self.base + url, timeout=DEADLINE_SECONDS)
                    retry = response.headers.get("Retry-After")
                    self.answers.append((url, response.status_code, retry))

    def wait_for(self, status: int) -> None:
        """Until every URL has answered ``status`` since this was called (bounded)."""
        start = len(self.answers)
        deadline = time.monotonic() + DEADLINE_SECONDS
        while {url for url, got, _ in self.answers[start:] if got == status} != set(URLS):
            assert time.monotonic() < deadline, f"not every URL answered {status}"
            time.sleep(0.05)  # polling the crawler thread, bounded by the deadline


def test_postgresql_stopped_and_started_under_the_server(cluster, tmp_path):
    command(cluster, "migrate")
    command(cluster, "seed-demo", "--posts", "20")
    token = command(cluster, "token", "create", "outage").strip()
    with serve_production(cluster.url, SITE_URL, tmp_path / "pserve.log") as base:
        crawler = Crawler(base, token)
        thread = threading.Thread(target=crawler.crawl, daemon=True)
        thread.start()
        try:
            crawler.wait_for(200)
            cluster.stop()  # with requests in flight
            crawler.wait_for(503)
            cluster.start()
            crawler.wait_for(200)
        finally:
            crawler.running = False
            thread.join(timeout=DEADLINE_SECONDS)

    statuses = {status for _, status, _ in crawler.answers}
    assert statuses == {200, 503}, crawler.answers
    assert all(retry == "5" for _, status, retry in crawler.answers if status == 503)
    assert "Traceback" not in (tmp_path / "pserve.log").read_text()


# The worker beside an outage, and a worker killed mid-pass (issue 29, cases 7 and 8) ---


def worker(cluster: Cluster, log: Path) -> Any:
    """``sitemap-server worker`` (production.ini) on the cluster, its output in ``log``."""
    env = server_environment(
        SITEMAP_SERVER_DATABASE_URL=cluster.url, SITEMAP_SERVER_SITE_URL=SITE_URL
    )
    return worker_process("production.ini", env, log)


def import_one_post(cluster: Cluster, tmp_path: Path, slug: str) -> None:
    line = {"post": {"type": "post", "status": "publish", "title": slug, "slug": slug}}
    path = tmp_path / f"{slug}.ndjson"
    path.write_text(json.dumps(line) + "\n")
    command(cluster, "import", "--quiet", str(path))


def waiting_changes(engine: Any) -> int:
    with engine.connect() as connection:
        return int(connection.scalar(text("SELECT count(*) FROM sitemap_changes")) or 0)


def test_a_worker_logs_an_outage_once_and_applies_again_after_it(cluster, tmp_path):
    command(cluster, "migrate")
    command(cluster, "seed-demo", "--posts", "5")
    log = tmp_path / "worker.log"
    engine = create_engine(cluster.url)
    try:
        with worker(cluster, log) as process:
            wait_until(lambda: "started" in log.read_text(), "the worker to start")
            cluster.stop()
            wait_until(lambda: "database is unavailable" in log.read_text(), "the outage")
            # Passes fail, one every 0.1 s, until the cluster is back: one line says so.
            cluster.start()
            wait_until(lambda: "the database is back" in log.read_text(), "the recovery")
            import_one_post(cluster, tmp_path, "after-the-outage")
            wait_until(lambda: waiting_changes(engine) == 0, "the change to be applied")
            assert process.poll() is None
    finally:
        engine.dispose()
    text_ = log.read_text()
    assert text_.count("database is unavailable") == 1, text_
    assert text_.count("the database is back") == 1, text_
    assert "Traceback" not in text_


def test_a_killed_worker_frees_the_maintainer_within_seconds(cluster, tmp_path):
    """kill -9 in the middle of a pass: its backend notices the client is gone (it checks
    every 2 s, even while waiting for a lock) and drops the maintainer's lock, so a new
    worker applies the log at once instead of minutes later."""
    command(cluster, "migrate")
    command(cluster, "seed-demo", "--posts", "5")
    engine = create_engine(cluster.url)
    maintainer = {"key": zlib.crc32(MAINTAINER.encode())}
    try:
        with worker(cluster, tmp_path / "first.log") as first:
            wait_until(lambda: worker_alive(engine), "the first worker")
            with engine.connect() as blocker:
                # The pass will wait here, holding the maintainer's lock.
                blocker.execute(text("LOCK TABLE sitemap_entries IN ACCESS EXCLUSIVE MODE"))
                import_one_post(cluster, tmp_path, "held-up")
                wait_until(lambda: not maintainer_free(engine, maintainer), "the pass to start")
                first.kill()
                first.wait(timeout=30)
                wait_until(lambda: maintainer_free(engine, maintainer), "the lock to go", 60)
                blocker.rollback()
        with worker(cluster, tmp_path / "second.log"):
            wait_until(lambda: waiting_changes(engine) == 0, "the second worker to apply")
    finally:
        engine.dispose()


def maintainer_free(engine: Any, key: dict[str, int]) -> bool:
    """Whether no one holds the maintainer's lock (tried in a statement of its own)."""
    with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as connection:
        return bool(connection.scalar(text("SELECT pg_try_advisory_xact_lock(:key)"), key))
