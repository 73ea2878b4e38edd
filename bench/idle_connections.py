"""Idle connections: does a normal client still get ``/sitemap_index.xml`` from one
``pserve production.ini`` while many other TCP connections sit open doing nothing?

    .venv/bin/python bench/idle_connections.py                        # SQLite, 1,000 idle
    scripts/with-postgres .venv/bin/python bench/idle_connections.py --db postgresql
    .venv/bin/python bench/idle_connections.py --variants production --idle 3000 --shed-wait 45

Migrates a fresh database through ``production.ini`` and imports a small site (``--posts``).
Then, for each run and each variant of the ``[server:main]`` section, it starts ``pserve``,
times ``--requests`` requests for ``/sitemap_index.xml`` (each over a fresh connection,
answer read in full, 200 and a parsed ``sitemapindex`` required) with no other client,
opens ``--idle`` TCP connections (every other one sends half a request line and stops: a
slowloris client; the rest send nothing), and times the same requests again. Prints the
median and largest latency and the failures (no complete answer within ``--timeout``).

Variants:

- ``defaults``: production.ini without its connection settings, i.e. waitress's defaults
  (connection_limit 100, channel_timeout 120 s, cleanup_interval 30 s, select()): the
  settings before issue 12;
- ``select``: production.ini as it is, but with select() instead of poll();
- ``production``: production.ini as it is.

``--shed-wait S``: afterwards, wait up to S seconds for the server to close the idle
connections (channel_timeout) and report when it did.
"""

from __future__ import annotations

import argparse
import configparser
import http.client
import json
import os
import re
import resource
import select
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from xml.etree import ElementTree

from common import drop_all_tables
from waitress.adjustments import Adjustments

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
PRODUCTION_INI = ROOT / "production.ini"
SITE_URL = "https://bench.test"
INDEX_TAG = "{http://www.sitemaps.org/schemas/sitemap/0.9}sitemapindex"
# What a slowloris client sends before it stops: half of a request line.
HALF_REQUEST = b"GET /sitemap_ind"
CONNECTION_SETTINGS = ("connection_limit", "channel_timeout", "cleanup_interval")
VARIANTS = {
    "defaults": (*CONNECTION_SETTINGS, "asyncore_use_poll"),
    "select": ("asyncore_use_poll",),
    "production": (),
}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def variant_ini(directory: Path, name: str) -> Path:
    """production.ini, or a copy of it without some keys of ``[server:main]``."""
    dropped = VARIANTS[name]
    if not dropped:
        return PRODUCTION_INI
    lines, section = [], None
    for line in PRODUCTION_INI.read_text().splitlines():
        header = re.fullmatch(r"\s*\[(.+)\]\s*", line)
        if header:
            section = header.group(1)
        key = line.split("=", 1)[0].strip()
        if section == "server:main" and "=" in line and key in dropped:
            continue
        lines.append(line)
    path = directory / f"{name}.ini"
    path.write_text("\n".join(lines) + "\n")
    return path


def describe(ini: Path) -> str:
    """The waitress settings that matter here, as waitress will use them."""
    parser = configparser.ConfigParser(interpolation=None)
    parser.read(ini)
    server = parser["server:main"]

    def value(key: str) -> str:
        return server.get(key, str(getattr(Adjustments, key)))

    poll = value("asyncore_use_poll").lower() in ("true", "yes", "on", "1")
    return (
        f"threads={value('threads')} connection_limit={value('connection_limit')} "
        f"channel_timeout={value('channel_timeout')} cleanup_interval={value('cleanup_interval')} "
        f"loop={'poll' if poll else 'select'}"
    )


def environment(database_url: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SITEMAP_SERVER_")}
    env["SITEMAP_SERVER_DATABASE_URL"] = database_url
    env["SITEMAP_SERVER_SITE_URL"] = SITE_URL
    return env


def prepare(database_url: str, env: dict[str, str], directory: Path, posts: int) -> None:
    """A migrated database holding ``posts`` posts by 10 authors in 5 categories."""
    if not database_url.startswith("sqlite"):
        drop_all_tables(database_url)
    site = directory / "site.ndjson"
    with site.open("w") as out:
        for i in range(1, 11):
            out.write(json.dumps({"author": {"id": i, "slug": f"a-{i}", "name": f"A {i}"}}) + "\n")
        for i in range(1, 6):
            term = {"id": i, "taxonomy": "category", "name": f"Category {i}"}
            out.write(json.dumps({"term": term}) + "\n")
        for i in range(posts):
            post = {
                "type": "post",
                "title": f"Post {i}",
                "status": "publish",
                "author": 1 + i % 10,
                "terms": [1 + i % 5],
            }
            out.write(json.dumps({"post": post}) + "\n")
    for command in (["migrate"], ["import", str(site)]):
        subprocess.run(
            [BIN / "sitemap-server", "--config", PRODUCTION_INI, *command],
            check=True,
            capture_output=True,
            env=env,
        )


def fetch_index(port: int, timeout: float) -> float:
    """Seconds to get the whole sitemap index over a new connection; raises on failure."""
    started = time.perf_counter()
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        conn.request("GET", "/sitemap_index.xml", headers={"Connection": "close"})
        response = conn.getresponse()
        body = response.read()
    finally:
        conn.close()
    elapsed = time.perf_counter() - started
    if response.status != 200:
        raise RuntimeError(f"status {response.status}")
    if ElementTree.fromstring(body).tag != INDEX_TAG:
        raise RuntimeError("not a sitemap index")
    return elapsed


def timed_requests(port: int, count: int, timeout: float) -> tuple[list[float], list[str]]:
    times, failures = [], []
    for _ in range(count):
        try:
            times.append(fetch_index(port, timeout))
        except (OSError, RuntimeError, ElementTree.ParseError) as error:
            failures.append(type(error).__name__ if isinstance(error, OSError) else str(error))
    return times, failures


def open_idle(port: int, count: int) -> tuple[list[socket.socket], int]:
    """``count`` connections, every other one a slowloris client; and how many did not
    connect within a second (the server's accept queue full)."""
    sockets, not_connected = [], 0
    for n in range(count):
        try:
            sock = socket.create_connection(("127.0.0.1", port), timeout=1)
        except OSError:
            not_connected += 1
            continue
        if n % 2:
            sock.sendall(HALF_REQUEST)
        sockets.append(sock)
    return sockets, not_connected


def wait_for_shedding(sockets: list[socket.socket], seconds: float) -> tuple[int, float]:
    """How many of ``sockets`` the server closed within ``seconds``, and when the last
    of those closed."""
    poller = select.poll()
    waiting = {sock.fileno(): sock for sock in sockets}
    for fd in waiting:
        poller.register(fd, select.POLLIN)
    started = time.monotonic()
    closed, last = 0, 0.0
    while waiting and time.monotonic() - started < seconds:
        for fd, _event in poller.poll(200):
            poller.unregister(fd)
            try:
                data = waiting.pop(fd).recv(1)
            except OSError:  # reset by the server
                data = b""
            if not data:  # closed by the server (anything else would be an answer)
                closed += 1
                last = time.monotonic() - started
    return closed, last


def start_server(ini: Path, port: int, env: dict[str, str], log: Path) -> subprocess.Popen:
    server = subprocess.Popen(
        [BIN / "pserve", str(ini), f"listen=127.0.0.1:{port}"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=log.open("w"),
    )
    deadline = time.monotonic() + 30
    while True:
        try:
            fetch_index(port, 2)
            return server
        except (OSError, RuntimeError):
            if server.poll() is not None or time.monotonic() > deadline:
                server.kill()
                sys.exit(f"pserve {ini} did not start:\n{log.read_text()}")
            time.sleep(0.1)


def stop_server(server: subprocess.Popen) -> None:
    server.terminate()
    try:
        server.wait(timeout=10)
    except subprocess.TimeoutExpired:
        server.kill()
        server.wait()


def ms(seconds: list[float], pick: str) -> str:
    if not seconds:
        return "-"
    value = statistics.median(seconds) if pick == "median" else max(seconds)
    return f"{value * 1000:.1f}"


def raise_descriptor_limit(needed: int) -> None:
    """This process holds the idle sockets, and pserve inherits the limit."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != resource.RLIM_INFINITY and soft < needed:
        if hard != resource.RLIM_INFINITY and hard < needed:
            sys.exit(f"needs {needed} file descriptors; the hard limit is {hard}")
        resource.setrlimit(resource.RLIMIT_NOFILE, (needed, hard))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--db", choices=["sqlite", "postgresql"], default="sqlite")
    parser.add_argument("--posts", type=int, default=200)
    parser.add_argument("--idle", type=int, default=1000, help="idle connections to open")
    parser.add_argument("--requests", type=int, default=20, help="timed requests per phase")
    parser.add_argument(
        "--timeout", type=float, default=3.0, help="seconds before a request counts as failed"
    )
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument(
        "--variants",
        default="defaults,production",
        help=f"comma-separated, in order, of: {', '.join(VARIANTS)}",
    )
    parser.add_argument("--shed-wait", type=float, default=0.0, metavar="SECONDS")
    args = parser.parse_args()
    variants = args.variants.split(",")
    unknown = set(variants) - set(VARIANTS)
    if unknown:
        parser.error(f"unknown variants: {', '.join(sorted(unknown))}")
    raise_descriptor_limit(args.idle + 1000)

    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp)
        if args.db == "sqlite":
            database_url = f"sqlite:///{directory / 'bench.sqlite'}"
        else:
            database_url = os.environ["SITEMAP_SERVER_TEST_DATABASE_URL"]
        env = environment(database_url)
        prepare(database_url, env, directory, args.posts)
        inis = {name: variant_ini(directory, name) for name in variants}
        for name, ini in inis.items():
            print(f"{name:10}  {describe(ini)}")
        print(
            f"{args.db}, {args.posts} posts; {args.idle} idle connections (half of them "
            f"slowloris); {args.requests} requests of /sitemap_index.xml per phase, each on a "
            f"new connection, {args.timeout:g} s timeout"
        )
        print(
            f"{'variant':10} {'run':>3} {'alone p50':>9} {'alone max':>9} {'connected':>9} "
            f"{'idle p50':>9} {'idle max':>9} {'failed':>7}  server"
        )
        for run in range(1, args.runs + 1):
            for name, ini in inis.items():
                port = free_port()
                log = directory / f"{name}-{run}.log"
                server = start_server(ini, port, env, log)
                sockets: list[socket.socket] = []
                try:
                    alone, alone_failed = timed_requests(port, args.requests, args.timeout)
                    sockets, not_connected = open_idle(port, args.idle)
                    time.sleep(0.5)  # let the server accept what it will
                    loaded, failures = timed_requests(port, args.requests, args.timeout)
                    exited = server.poll()
                    if exited is None:
                        state = "running"
                    else:
                        errors = re.findall(r"^\w*Error: .*$", log.read_text(), re.MULTILINE)
                        state = f"exited ({exited}): {errors[-1] if errors else 'see its log'}"
                    print(
                        f"{name:10} {run:3} {ms(alone, 'median'):>9} {ms(alone, 'max'):>9} "
                        f"{len(sockets):9} {ms(loaded, 'median'):>9} {ms(loaded, 'max'):>9} "
                        f"{len(failures) + len(alone_failed):3}/{2 * args.requests:<3}  {state}"
                        + (f"; {not_connected} idle did not connect" if not_connected else "")
                        + (f"; failures: {sorted(set(failures))}" if failures else "")
                    )
                    if args.shed_wait and exited is None:
                        closed, last = wait_for_shedding(sockets, args.shed_wait)
                        print(
                            f"{'':14} the server closed {closed} of {len(sockets)} idle "
                            f"connections within {args.shed_wait:g} s"
                            + (f" (the last after {last:.1f} s)" if closed else "")
                        )
                finally:
                    for sock in sockets:
                        sock.close()
                    stop_server(server)
        print("latencies in ms; alone: no other client; idle: with the idle connections open")


if __name__ == "__main__":
    main()
