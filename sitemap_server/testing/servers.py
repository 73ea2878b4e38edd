"""Real servers for tests: ``pserve production.ini`` on a free port, and a local stand-in
for search engines."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
import requests

from .fixtures import PROJECT_ROOT

PSERVE = Path(sys.executable).parent / "pserve"
# Bounds the wait, generously: a loaded machine starts slowly (nothing waits this long
# when the server is up).
SERVER_STARTUP_SECONDS = 120


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def server_environment(**variables: str) -> dict[str, str]:
    """This environment without any SITEMAP_SERVER_* setting, plus ``variables``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("SITEMAP_SERVER_")}
    env.update(variables)
    return env


def production_command(env: dict[str, str], *args: str) -> str:
    """``sitemap-server --config production.ini ARGS`` run to completion in ``env`` (see
    ``server_environment``): its standard output (its error output if it fails)."""
    finished = subprocess.run(
        [str(PSERVE.parent / "sitemap-server"), "--config", "production.ini", *args],
        cwd=PROJECT_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert finished.returncode == 0, f"sitemap-server {' '.join(args)}:\n{finished.stderr}"
    return finished.stdout


def pserve_production(port: int) -> list[str]:
    return [str(PSERVE), "production.ini", f"listen=127.0.0.1:{port}"]


@contextmanager
def serve_production(
    database_url: str,
    site_url: str,
    log: Path,
    ready_path: str = "/robots.txt",
    port: int | None = None,
) -> Iterator[str]:
    """A real ``pserve production.ini`` on ``database_url``: its base URL while it runs.

    Waits (bounded) until ``ready_path`` answers; always stops the process afterwards.
    ``port``: where to listen (by default a free one), for a site URL that is the server.
    """
    port = port or free_port()
    env = server_environment(
        SITEMAP_SERVER_DATABASE_URL=database_url, SITEMAP_SERVER_SITE_URL=site_url
    )
    with running(pserve_production(port), PROJECT_ROOT, env, log, port, ready_path) as base:
        yield base


@contextmanager
def running(
    command: list[str],
    cwd: Path,
    env: dict[str, str],
    log: Path,
    port: int,
    ready_path: str = "/robots.txt",
) -> Iterator[str]:
    """A server started with ``command`` (``started``), listening on ``port`` of
    127.0.0.1: its base URL once ``ready_path`` answers."""
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + SERVER_STARTUP_SECONDS

    def answers() -> bool:
        try:
            # Once connected, its first answer may take a while: it may rebuild the
            # stored sitemaps first (a start with another site URL), on a busy machine.
            left = max(deadline - time.monotonic(), 1.0)
            requests.get(base + ready_path, timeout=(2, left))
        except (requests.ConnectionError, requests.Timeout):
            return False
        return True

    with started(command, log, answers, "to answer", cwd, env):
        yield base


@contextmanager
def started(
    command: list[str],
    log: Path,
    ready: Callable[[], bool],
    what: str,
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
) -> Iterator[subprocess.Popen[bytes]]:
    """``command`` running, once ``ready()`` holds (within ``SERVER_STARTUP_SECONDS``,
    failing with its output, ``log``, if it does not or if it exits); stopped afterwards,
    whatever happens. It runs in a session of its own, as a service manager starts a
    service: the kernel then shares the CPU between it and the other programs, not
    between all their threads (a cache's dozens of busy threads would leave a server a
    sliver of it; ``bench/varnish_bench.py``)."""
    with log.open("wb") as output:
        process = subprocess.Popen(
            command,
            cwd=cwd,
            env=env,
            stdout=output,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        deadline = time.monotonic() + SERVER_STARTUP_SECONDS
        while not ready():
            if process.poll() is not None:
                pytest.fail(f"{command[0]} exited with {process.returncode}:\n{log.read_text()}")
            if time.monotonic() > deadline:
                pytest.fail(
                    f"{command[0]} not {what} in {SERVER_STARTUP_SECONDS} s:\n{log.read_text()}"
                )
            time.sleep(0.1)  # polling the starting program, bounded by the deadline
        yield process
    finally:
        stop(process)


def stop(process: subprocess.Popen[bytes]) -> None:
    """Stop ``process`` if it still runs: SIGTERM, then SIGKILL if it lingers."""
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def wait_until(condition: Callable[[], bool], what: str, seconds: float = 120) -> None:
    """Until ``condition()`` holds, polled every 0.1 s, failing after ``seconds``
    (generous: a loaded machine is slow) with what was awaited."""
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail(f"still waiting, after {seconds} s, for {what}")
        time.sleep(0.1)


@contextmanager
def worker_process(
    config: str, env: dict[str, str], log: Path, *args: str, cwd: Path = PROJECT_ROOT
) -> Iterator[subprocess.Popen[bytes]]:
    """A real ``sitemap-server --config CONFIG worker ARGS`` in ``env``, its output added
    to ``log``, in a session of its own (as ``started``); stopped afterwards if it still
    runs (SIGTERM, then SIGKILL)."""
    with log.open("ab") as output:
        process = subprocess.Popen(
            [str(PSERVE.parent / "sitemap-server"), "--config", config, "worker", *args],
            cwd=cwd,
            env=env,
            stdout=output,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        yield process
    finally:
        stop(process)


class SearchEngine:
    """A local stand-in for search engines (ping endpoints, IndexNow), on 127.0.0.1.

    Every request is recorded in ``requests`` (method, path, query, JSON body). Answers
    are scripted per path with ``answer(path, *statuses)``: each request takes the next
    one, and the last is repeated; a status may be ``("sleep", seconds, status)`` (a slow
    engine), ``("hold", event, status)`` (an answer sent once the test sets ``event``) or
    ``(status, {"Retry-After": "…"})``. Unscripted paths answer 200.
    """

    def __init__(self) -> None:
        import threading

        self.requests: list[dict[str, Any]] = []
        self.scripts: dict[str, list[Any]] = {}
        self.lock = threading.Lock()
        self.url = ""

    def answer(self, path: str, *answers: Any) -> None:
        with self.lock:
            self.scripts[path] = list(answers)

    def next_answer(self, path: str) -> Any:
        with self.lock:
            script = self.scripts.get(path)
            if not script:
                return 200
            return script.pop(0) if len(script) > 1 else script[0]

    def received(self, path: str | None = None, method: str | None = None) -> list[dict[str, Any]]:
        with self.lock:
            return [
                r
                for r in self.requests
                if (path is None or r["path"] == path) and (method is None or r["method"] == method)
            ]


@contextmanager
def http_server(handler: type[BaseHTTPRequestHandler]) -> Iterator[str]:
    """``handler`` answering on a free port of 127.0.0.1, each request in a thread of its
    own, while the block runs: its base URL (``http://127.0.0.1:PORT``)."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def search_engine(_search_engine_server: SearchEngine) -> SearchEngine:
    """A running ``SearchEngine`` that has received nothing and answers 200 to everything.

    One server for the whole session: its URL never changes, so applications configured
    with it are built once (``app_with``). A request still in flight from an earlier test
    (a worker that was killed) may land in this one's list: match on what you sent.
    """
    with _search_engine_server.lock:
        _search_engine_server.requests.clear()
        _search_engine_server.scripts.clear()
    return _search_engine_server


@pytest.fixture(scope="session")
def _search_engine_server() -> Iterator[SearchEngine]:
    """The server behind ``search_engine``; stopped when the session ends."""
    import json
    from urllib.parse import parse_qs, urlsplit

    engine = SearchEngine()

    class Handler(BaseHTTPRequestHandler):
        def _handle(self) -> None:
            parts = urlsplit(self.path)
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            record = {
                "method": self.command,
                "path": parts.path,
                "query": {k: v[0] for k, v in parse_qs(parts.query).items()},
                "headers": dict(self.headers),
                "body": json.loads(raw) if raw else None,
                "at": time.monotonic(),
            }
            with engine.lock:
                engine.requests.append(record)
            answer = engine.next_answer(parts.path)
            if isinstance(answer, tuple) and answer[:1] == ("sleep",):
                _, seconds, answer = answer
                time.sleep(seconds)  # a slow engine; the client may give up meanwhile
            elif isinstance(answer, tuple) and answer[:1] == ("hold",):
                _, release, answer = answer
                # An engine that answers when the test says (bounded, so a test that
                # fails before releasing it leaves no thread behind for long).
                release.wait(SERVER_STARTUP_SECONDS)
            headers: dict[str, str] = {}
            if isinstance(answer, tuple):
                answer, headers = answer
            try:
                self.send_response(answer)
                for name, value in headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", "0")
                self.end_headers()
            except OSError:
                pass  # the client gave up (a timeout, a killed worker)

        do_GET = do_POST = do_PURGE = _handle

        def log_message(self, *args: Any) -> None:
            pass

    with http_server(Handler) as url:
        engine.url = url
        yield engine
