"""Commands run beside a server that writes (issue 29, case 9).

``sitemap-server import`` of thousands of posts while ``pserve`` and its worker thread
ran used to import the content, then die with ``database is locked`` and a traceback
(exit 1), so a retry duplicated the content. A command now waits for the database within
a bound and says what it waits for; an import that committed exits 0 whatever follows
(the worker applies the changes); no expected condition prints a traceback.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
import requests
from sqlalchemy import create_engine, text

from sitemap_server.testing import (
    PROJECT_ROOT,
    free_port,
    running,
    server_environment,
    wait_until,
)
from sitemap_server.testing.servers import PSERVE

pytestmark = pytest.mark.slow

SITEMAP_SERVER = PSERVE.parent / "sitemap-server"
# Bounds on waiting for a process to reach a point (generous: the machine may be loaded).
WAIT_SECONDS = 120


def posts_file(path: Path, count: int, prefix: str) -> Path:
    with path.open("w") as lines:
        for n in range(count):
            post = {"type": "post", "status": "publish", "title": f"{prefix} {n}"}
            lines.write(json.dumps({"post": {**post, "slug": f"{prefix}-{n}"}}) + "\n")
    return path


def waiting_changes(url: str) -> int:
    engine = create_engine(url)
    try:
        with engine.connect() as connection:
            return int(connection.scalar(text("SELECT count(*) FROM sitemap_changes")) or 0)
    finally:
        engine.dispose()


def test_a_command_waits_for_another_writer_and_says_so(
    ini_file, database_url, clean_database, tmp_path
):
    if clean_database.dialect.name != "sqlite":
        pytest.skip("PostgreSQL locks rows, not the database: writers do not wait for one")
    path = posts_file(tmp_path / "posts.ndjson", 3, "patient")
    blocker = clean_database.raw_connection()
    try:
        blocker.execute("BEGIN IMMEDIATE")  # another process's write transaction
        process = subprocess.Popen(
            [str(SITEMAP_SERVER), "--config", str(ini_file), "import", "--quiet", str(path)],
            cwd=tmp_path,
            env=server_environment(),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert process.stderr is not None
        said = process.stderr.readline()  # blocks until the command says something
        assert said.startswith("waiting for the database: another process is writing"), said
    finally:
        blocker.rollback()
        blocker.close()
    out, err = process.communicate(timeout=WAIT_SECONDS)
    assert process.returncode == 0, err
    assert out == "imported 3 lines: 3 post\n"
    assert "Traceback" not in err


@pytest.fixture
def development_server(database_url, clean_database, tmp_path) -> Any:
    """``pserve development.ini`` (its worker thread on) on the test database."""
    port = free_port()
    env = server_environment(
        SITEMAP_SERVER_DATABASE_URL=database_url, SITEMAP_SERVER_SITE_URL="http://beside.test"
    )
    command = [str(PSERVE), "development.ini", f"listen=127.0.0.1:{port}"]
    with running(command, PROJECT_ROOT, env, tmp_path / "pserve.log", port) as base:
        yield base, env


def test_an_import_beside_a_running_server_leaves_the_changes_to_its_worker(
    development_server, database_url, tmp_path
):
    base, env = development_server
    path = posts_file(tmp_path / "posts.ndjson", 2000, "beside")
    finished = subprocess.run(
        [str(SITEMAP_SERVER), "--config", "development.ini", "import", str(path)],
        cwd=PROJECT_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert finished.returncode == 0, finished.stderr
    assert finished.stdout == "imported 2000 lines: 2000 post\n"
    assert "Traceback" not in finished.stderr
    assert "a worker is running: it brings the sitemaps up to date" in finished.stderr

    wait_until(lambda: not waiting_changes(database_url), "the server's worker to apply it")
    index = requests.get(f"{base}/post-sitemap.xml", timeout=30)
    assert index.status_code == 200
    assert index.text.count("<loc>") >= 1000
