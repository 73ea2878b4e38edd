"""The reference Varnish deployment (deploy/varnish/) under load: cached documents per
second, reads while the API writes, and how soon each write shows through the cache.

    scripts/with-postgres .venv/bin/python bench/varnish_bench.py --runs 2

Sets up what tests/deploy/test_varnish.py tests, at size, on PostgreSQL: ``--posts``
posts generated with bulk SQL (``sitemap_bench.generate``), their sitemaps built, two
``pserve production.ini`` processes, varnishd with the repository's VCL in front of them
(``sitemap_server.testing.varnish``) and ``sitemap-server worker`` purging it by tag after
each applied change. Everything listens on 127.0.0.1 and is stopped at the end, whatever
happens (Ctrl-C and SIGTERM included). Each run has four phases; in the first three
wrk reads the same paths (``read_paths.lua``: the index and every sitemap page, as .xml
and .xml.gz, and robots.txt, in turn, gzip accepted as crawlers ask):

1. "origin": straight from the first pserve process, for comparison;
2. "cache": through Varnish, every path cached beforehand;
3. "cache+writes": the same while ``--rate`` PATCHes a second, through Varnish as the
   admin API's clients send them, change the slugs of posts (each write another post,
   open loop over 16 connections). A poller reads each written post's sitemap page through
   Varnish every ``--poll-ms`` (conditional requests: 304 until the page changes) until it
   lists the new slug: the time from the API's answer to that read is the write's
   visibility. A sampler reads the change log and the outbox every 50 ms: when each write
   was applied to the sitemaps and when its purge had been sent (upper bounds, to 50 ms);
4. "writes alone": the same writes with no wrk, and what they cost.

For the reads: wrk's requests/s and p50/p99, Varnish's hit ratio and misses
(varnishstat), and CPU seconds per 1,000 reads (/proc/PID/stat, user + system) of
varnishd, both pserve processes, the worker, PostgreSQL (the postmaster and its
children, without the sampler's connection), wrk, this script (writers, poller, sampler)
and everything else on the machine ("other": a noisy neighbour shows there), with how
many of the two cores were busy. For the writes: PATCH latency from sending (and p99
from the time each was due), the time from the API's answer until applied, purge sent
and visible through Varnish, the Varnish purges the worker stored and how long they
waited to be sent (the outbox's own dates), and, for "writes alone", CPU time per write.
Medians over ``--runs`` follow, then the issue's targets.

Each program runs in a session of its own (pserve, varnishd, the worker, wrk; PostgreSQL
is started by ``scripts/with-postgres``), as a service manager starts services: with the
kernel's autogroup scheduling (on on this machine), the CPU is shared between them,
not between all their threads. In one session Varnish's 32 busy threads left the Python
processes a sliver of the two cores: reads kept 85 % of their rate, but the writes were
applied seconds late (visible p99 8.0 s, 39 of 50 PATCHes a second answered).

wrk runs ``-t2 -c32 -d10s`` by default: on two cores, one wrk thread was the limit (16,000
to 19,000 cached reads a second against 25,000 with two, both cores busy either way),
and 16 keep-alive connections a thread keep Varnish's threads busy without the queueing
tail 64 gave (p99 near 1 s). 10 s a phase keeps two runs within a few minutes.
"""

from __future__ import annotations

import argparse
import bisect
import gzip
import http.client
import json
import os
import random
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from itertools import pairwise
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import requests
from common import empty_database, wrk_numbers
from lxml import etree
from sitemap_bench import generate, percentile
from sqlalchemy import create_engine, text
from sqlalchemy.engine import Engine, make_url

from sitemap_server.sitemaps.presence import worker_alive
from sitemap_server.testing import (
    PROJECT_ROOT,
    SITEMAP_NS,
    TEST_DATABASE_ENV,
    production_command,
    pserve_production,
    running,
    wait_until,
    worker_process,
)
from sitemap_server.testing.varnish import deployment_environment, varnish

HERE = Path(__file__).resolve().parent
SITE_URL = "http://bench.test"  # written into the documents, never contacted
TICKS = os.sysconf("SC_CLK_TCK")
LOOPBACK = {"127.0.0.1", "localhost", "::1"}

# The targets.
CACHED_RATE_TARGET = 10_000  # cached documents through Varnish, requests/s
UNDER_WRITES_SHARE_TARGET = 0.80  # reads at --rate writes/s, of their rate without
UNDER_WRITES_P99_TARGET_MS = 10.0
VISIBLE_P99_TARGET_S = 1.0

# Connections the writers keep open: enough that slow PATCHes do not hold back the next
# ones due (open loop), as long as fewer than this many are under way at once.
WRITERS = 16
# How often the sampler reads the change log and the outbox (the resolution of "applied"
# and "purged").
SAMPLE_SECONDS = 0.05
# How long a write may take to show before it counts as never shown.
VISIBLE_DEADLINE_SECONDS = 15.0
# One statement, one snapshot: the oldest change waiting, the newest notification, the
# oldest Varnish purge not yet sent.
OUTBOX_SAMPLE = text(
    "SELECT (SELECT min(id) FROM sitemap_changes), (SELECT max(id) FROM notifications),"
    " (SELECT min(id) FROM notifications WHERE channel = 'varnish' AND status = 'pending')"
)
SETTLED = text(
    "SELECT (SELECT count(*) FROM sitemap_changes)"
    " + (SELECT count(*) FROM notifications WHERE channel = 'varnish' AND status = 'pending')"
)
PURGES_SINCE = text(
    "SELECT created_at, finished_at FROM notifications"
    " WHERE channel = 'varnish' AND id > :after ORDER BY id"
)
# varnishstat counters reported per phase.
VARNISH_COUNTERS = ("MAIN.client_req", "MAIN.cache_hit", "MAIN.cache_miss")


# Processes and their CPU time --------------------------------------------------------------


def process_table() -> dict[int, tuple[int, float]]:
    """Every process now: its parent's pid and its CPU seconds so far (user + system, all
    its threads), from /proc/PID/stat."""
    table = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            fields = Path(entry.path, "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:  # gone meanwhile
            continue
        table[int(entry.name)] = (int(fields[1]), (int(fields[11]) + int(fields[12])) / TICKS)
    return table


def command_line(pid: int) -> list[str]:
    return Path(f"/proc/{pid}/cmdline").read_bytes().decode().split("\0")


def children(pid: int) -> list[int]:
    return [child for child, (parent, _) in process_table().items() if parent == pid]


def busy_cores_seconds() -> float:
    """CPU seconds the whole machine has spent busy (not idle, not waiting for I/O)."""
    values = [int(v) for v in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    idle, iowait, steal = values[3], values[4], values[7] if len(values) > 7 else 0
    return (sum(values[:8]) - idle - iowait - steal) / TICKS


@dataclass
class Components:
    """The processes whose CPU time is reported, each named by the roots of its process
    trees (a process's children count with it), minus ``excluded`` pids."""

    roots: dict[str, list[int]]
    excluded: set[int] = field(default_factory=set)

    def cpu(self) -> dict[str, float]:
        table = process_table()
        below: dict[int, list[int]] = {}
        for pid, (parent, _) in table.items():
            below.setdefault(parent, []).append(pid)
        spent = {}
        for name, roots in self.roots.items():
            total, todo = 0.0, list(roots)
            while todo:
                pid = todo.pop()
                if pid in table and pid not in self.excluded:
                    total += table[pid][1]
                todo += below.get(pid, [])
            spent[name] = total
        return spent


@dataclass
class Window:
    """CPU time and Varnish counters from its start to its end."""

    components: Components
    varnish_workdir: str
    cpu: dict[str, float] = field(default_factory=dict)
    counters: dict[str, int] = field(default_factory=dict)
    started: float = 0.0
    busy: float = 0.0
    own: float = 0.0
    seconds: float = 0.0

    def __enter__(self) -> Window:
        self.counters = varnish_counters(self.varnish_workdir)
        self.cpu = self.components.cpu()
        self.busy = busy_cores_seconds()
        self.own = time.process_time()
        self.started = time.monotonic()
        return self

    def __exit__(self, *_: Any) -> None:
        self.seconds = time.monotonic() - self.started
        self.own = time.process_time() - self.own
        self.busy = busy_cores_seconds() - self.busy
        after = self.components.cpu()
        self.cpu = {name: after[name] - self.cpu[name] for name in after}
        now = varnish_counters(self.varnish_workdir)
        self.counters = {name: now[name] - self.counters[name] for name in now}


def varnish_counters(workdir: str) -> dict[str, int]:
    out = subprocess.run(
        ["varnishstat", "-n", workdir, "-1", "-j"], capture_output=True, text=True, check=True
    ).stdout
    found = json.loads(out)
    counters = found.get("counters", found)  # Varnish 6.5+ nests them
    return {name: int(counters[name]["value"]) for name in VARNISH_COUNTERS}


# The deployment ----------------------------------------------------------------------------


@dataclass
class Deployment:
    cache: str  # Varnish's base URL
    origins: list[str]
    token: str
    engine: Engine
    logs: Path
    components: Components
    varnish_workdir: str
    paths_file: Path
    paths: list[str]
    # Every published post: the post sitemap page that lists it.
    post_pages: dict[int, str]

    def settle(self) -> None:
        """Until every change is applied and no purge waits to be sent."""

        def settled() -> bool:
            with self.engine.connect() as conn:
                return conn.scalar(SETTLED) == 0

        wait_until(settled, "every change to be applied and purged", 300)

    def warm_up(self) -> None:
        """What a process does once is not measured: its first write and first pass, its
        first renderings (Chameleon digests every installed distribution the first time a
        process compiles a template: seconds). A few writes through the cache (to both
        servers), then every path read from each server."""
        headers = {"Authorization": f"Bearer {self.token}"}
        with requests.Session() as session:
            for n, post in enumerate(sorted(self.post_pages)[:: len(self.post_pages) // 8][:8]):
                answer = session.patch(
                    f"{self.cache}/api/posts/{post}",
                    json={"slug": f"varnish-bench-warm-up-{n}"},
                    headers=headers,
                )
                assert answer.status_code == 200, answer.text
            self.settle()
            for base in self.origins:
                for path in self.paths:
                    session.get(base + path, headers={"Accept-Encoding": "gzip"})

    def warm(self) -> None:
        """Every path read through the cache once (gzip accepted, as wrk asks)."""
        with requests.Session() as session:
            for path in self.paths:
                answer = session.get(self.cache + path, headers={"Accept-Encoding": "gzip"})
                assert answer.status_code == 200, (path, answer.status_code)


def loopback_only(url: str) -> None:
    """Refuse a database anywhere but this machine's loopback (its CPU time is measured
    here, and the benchmark touches no other host)."""
    parsed = make_url(url or "sqlite://")
    if parsed.get_backend_name() != "postgresql":
        sys.exit("varnish_bench runs on PostgreSQL: scripts/with-postgres .venv/bin/python ...")
    if parsed.host not in LOOPBACK:
        sys.exit(f"the database must be on 127.0.0.1, not {parsed.host}")


def document_paths(origin: str) -> list[str]:
    """robots.txt, the index and every page it lists, as .xml and .xml.gz."""
    answer = requests.get(origin + "/sitemap_index.xml")
    assert answer.status_code == 200, (answer.status_code, answer.text[:2000])
    index = etree.fromstring(answer.content)
    locs = index.xpath("s:sitemap/s:loc/text()", namespaces={"s": SITEMAP_NS})
    names = ["sitemap_index"] + [
        loc.removeprefix(SITE_URL + "/").removesuffix(".xml") for loc in locs
    ]
    return ["/robots.txt"] + [f"/{name}.{form}" for name in names for form in ("xml", "xml.gz")]


def post_pages(engine: Engine) -> dict[int, str]:
    """Each published post's page of the post sitemap (its key is the post's id)."""
    with engine.connect() as conn:
        pages = conn.execute(
            text("SELECT page, first_key, last_key FROM sitemap_pages WHERE provider = 'post'")
        ).all()
        posts = conn.scalars(
            text("SELECT id FROM posts WHERE type = 'post' AND status = 'publish' ORDER BY id")
        ).all()
    found = {}
    for page, first, last in pages:
        path = f"/post-sitemap{page if page > 1 else ''}.xml"
        for post in posts[bisect.bisect_left(posts, first) : bisect.bisect_right(posts, last)]:
            found[post] = path
    return found


def postmaster(engine: Engine) -> int:
    """The PostgreSQL server's main process (the parent of every backend)."""
    with engine.connect() as conn:
        backend = int(conn.scalar(text("SELECT pg_backend_pid()")))
    parent = process_table()[backend][0]
    if Path(f"/proc/{parent}/comm").read_text().strip() not in ("postgres", "postmaster"):
        sys.exit(f"process {parent}, the database backend's parent, is not PostgreSQL")
    return parent


@contextmanager
def deployed(args: argparse.Namespace, directory: Path) -> Iterator[Deployment]:
    loopback_only(os.environ.get(TEST_DATABASE_ENV, ""))
    url = empty_database("postgresql", directory)
    origin_ports, cache_port, env = deployment_environment(url, SITE_URL)
    started = time.monotonic()
    production_command(env, "migrate")
    generate(url, args.posts, args.per_page)
    production_command(env, "rebuild-sitemaps")
    token = production_command(env, "token", "create", "varnish-bench").strip()
    print(
        f"{args.posts} posts generated and their sitemaps built in "
        f"{time.monotonic() - started:.0f} s ({args.per_page} URLs a page)",
        flush=True,
    )
    logs = directory / "logs"
    logs.mkdir()
    engine = create_engine(url)
    with ExitStack() as stack:
        stack.callback(engine.dispose)
        origins = [
            stack.enter_context(
                running(pserve_production(port), PROJECT_ROOT, env, logs / f"pserve{n}.log", port)
            )
            for n, port in enumerate(origin_ports, 1)
        ]
        servers = [
            pid
            for pid in children(os.getpid())
            if any(f"listen=127.0.0.1:{port}" in command_line(pid) for port in origin_ports)
        ]
        assert len(servers) == len(origin_ports), servers
        cache = stack.enter_context(varnish(origin_ports, logs / "varnishd.log", cache_port))
        manager = next(
            pid for pid in children(os.getpid()) if command_line(pid)[0].endswith("varnishd")
        )
        arguments = command_line(manager)
        workdir = arguments[arguments.index("-n") + 1]
        worker = stack.enter_context(worker_process("production.ini", env, logs / "worker.log"))
        wait_until(lambda: worker_alive(engine), "the worker to start")
        components = Components(
            {
                "varnishd": [manager],
                "pserve": servers,
                "worker": [worker.pid],
                "postgres": [postmaster(engine)],
            }
        )
        paths = document_paths(origins[0])
        paths_file = directory / "paths.txt"
        paths_file.write_text("\n".join(paths) + "\n")
        found = Deployment(
            cache,
            origins,
            token,
            engine,
            logs,
            components,
            workdir,
            paths_file,
            paths,
            post_pages(engine),
        )
        found.warm_up()
        yield found
        for log in sorted(logs.glob("*.log")):
            if "Traceback" in log.read_text():
                print(f"{log.name} holds a traceback:\n{log.read_text()[-3000:]}")


# wrk ---------------------------------------------------------------------------------------


def wrk(base: str, deployment: Deployment, args: argparse.Namespace) -> dict[str, float]:
    """wrk reading the deployment's paths from ``base``: its results, and the CPU time it
    took (from its exit status, as it ends)."""
    command = [
        "wrk",
        f"-t{args.threads}",
        f"-c{args.connections}",
        f"-d{args.seconds}s",
        "--latency",
        "-s",
        str(HERE / "read_paths.lua"),
        base,
    ]
    env = {
        **os.environ,
        "READ_PATHS": str(deployment.paths_file),
        "READ_THREADS": str(args.threads),
    }
    with tempfile.TemporaryFile() as output:
        process = subprocess.Popen(
            command, stdout=output, stderr=subprocess.STDOUT, env=env, start_new_session=True
        )
        try:
            _, status, usage = os.wait4(process.pid, 0)
        except BaseException:
            process.kill()
            process.wait()
            raise
        process.returncode = os.waitstatus_to_exitcode(status)
        output.seek(0)
        out = output.read().decode()
    if process.returncode:
        raise RuntimeError(f"wrk failed:\n{out}")
    found = wrk_numbers(out)
    return {
        "rate": found["rate"],
        "requests": found["requests"],
        "p50": found["p50"],
        "p99": found["p99"],
        "errors": found["non2xx"] + sum(found["socket"].values()),
        "wrk_cpu": usage.ru_utime + usage.ru_stime,
    }


# Writes, and when they show ----------------------------------------------------------------


@dataclass
class Write:
    post: int
    slug: str
    page: str  # the post sitemap page that lists the post
    due: float  # seconds after the writers start, then time.monotonic()
    sent: float = 0.0
    answered: float = 0.0
    status: int = 0
    change: int = 0
    visible: float | None = None
    applied: float | None = None
    purged: float | None = None


class Poller:
    """Reads the page of each answered write through the cache every ``interval`` until
    it lists the write's new slug. A conditional request (the page's last ETag) costs a
    304 while the page is unchanged, and the body last read is what the cache holds then
    (a write answered after that body was read, and applied with it, shows at the next
    304); each page is read once a round for all its writes."""

    def __init__(self, port: int, interval: float) -> None:
        self.port = port
        self.interval = interval
        self.pending: dict[str, list[Write]] = {}
        self.etags: dict[str, str] = {}
        self.bodies: dict[str, bytes] = {}
        # The posts whose slugs were looked for in each page's body last read.
        self.searched: dict[str, set[int]] = {}
        self.lock = threading.Lock()
        self.writes_done = threading.Event()
        self.stop = threading.Event()
        self.requests = 0
        self.thread = threading.Thread(target=self._poll, daemon=True)

    def watch(self, write: Write) -> None:
        with self.lock:
            self.pending.setdefault(write.page, []).append(write)

    def _poll(self) -> None:
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        deadline = None
        while not self.stop.is_set():
            round_started = time.monotonic()
            with self.lock:
                pages = {page: list(writes) for page, writes in self.pending.items() if writes}
            if self.writes_done.is_set():
                if not pages:
                    return
                deadline = deadline or round_started + VISIBLE_DEADLINE_SECONDS
                if round_started > deadline:
                    return
            for page, writes in pages.items():
                headers = {"Accept-Encoding": "gzip"}
                if page in self.etags:
                    headers["If-None-Match"] = self.etags[page]
                sent = time.monotonic()
                connection.request("GET", page, headers=headers)
                answer = connection.getresponse()
                body = answer.read()
                read = time.monotonic()
                self.requests += 1
                if answer.status == 200:
                    self.etags[page] = answer.getheader("ETag") or ""
                    if answer.getheader("Content-Encoding") == "gzip":
                        body = gzip.decompress(body)
                    self.bodies[page] = body
                    self.searched[page] = set()
                else:  # 304: what the cache holds is still the body last read
                    assert answer.status == 304, (page, answer.status)
                    body = self.bodies[page]
                # Each write is looked for once in each body read after its answer.
                searched = self.searched[page]
                for write in writes:
                    if write.answered <= sent and write.post not in searched:
                        searched.add(write.post)
                        if f"/{write.slug}/".encode() in body:
                            write.visible = read
                with self.lock:
                    self.pending[page] = [w for w in self.pending[page] if w.visible is None]
            self.stop.wait(max(0.0, round_started + self.interval - time.monotonic()))
        connection.close()


class Sampler:
    """The oldest change waiting, the newest notification and the oldest purge waiting,
    every ``SAMPLE_SECONDS`` on a connection of its own: (started, ended, values)."""

    def __init__(self, engine: Engine) -> None:
        self.connection = engine.execution_options(isolation_level="AUTOCOMMIT").connect()
        self.pid = int(self.connection.scalar(text("SELECT pg_backend_pid()")))
        self.samples: list[tuple[float, float, Any, Any, Any]] = []
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._sample, daemon=True)

    def _sample(self) -> None:
        while not self.stop.is_set():
            started = time.monotonic()
            waiting, newest, unsent = self.connection.execute(OUTBOX_SAMPLE).one()
            self.samples.append((started, time.monotonic(), waiting, newest, unsent))
            self.stop.wait(max(0.0, started + SAMPLE_SECONDS - time.monotonic()))

    def close(self) -> None:
        self.connection.close()

    def date(self, writes: list[Write]) -> None:
        """When each write was applied (no change up to its number waits) and its purge
        sent (no purge waits that was stored by then), from samples taken after the API
        answered it: the end of the first sample that says so."""
        starts = [sample[0] for sample in self.samples]
        for write in writes:
            first = bisect.bisect_left(starts, write.answered)
            mark = None
            for sample in self.samples[first:]:
                _, ended, waiting, newest, unsent = sample
                if mark is None and (waiting is None or waiting > write.change):
                    write.applied, mark = ended, newest or 0
                if mark is not None and (unsent is None or unsent > mark):
                    write.purged = ended
                    break


class Writers:
    """``rate`` PATCHes a second of the slugs of ``posts`` (one write each), sent through
    the cache on ``WRITERS`` keep-alive connections at their due times (open loop)."""

    def __init__(
        self, deployment: Deployment, poller: Poller, writes: list[Write], port: int
    ) -> None:
        self.deployment = deployment
        self.poller = poller
        self.writes = writes
        self.port = port
        self.next = 0
        self.lock = threading.Lock()
        self.stop = threading.Event()
        self.threads = [threading.Thread(target=self._write, daemon=True) for _ in range(WRITERS)]

    def _take(self) -> Write | None:
        with self.lock:
            if self.next == len(self.writes):
                return None
            self.next += 1
            return self.writes[self.next - 1]

    def _write(self) -> None:
        headers = {
            "Authorization": f"Bearer {self.deployment.token}",
            "Content-Type": "application/json",
        }
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
        while (write := self._take()) is not None:
            if self.stop.wait(max(0.0, write.due - time.monotonic())):
                break
            body = json.dumps({"slug": write.slug})
            write.sent = time.monotonic()
            try:
                connection.request("PATCH", f"/api/posts/{write.post}", body, headers)
                answer = connection.getresponse()
                answer.read()
            except (OSError, http.client.HTTPException):
                write.status = -1
                connection.close()
                continue
            write.answered = time.monotonic()
            write.status = answer.status
            if answer.status == 200:
                write.change = int(answer.getheader("Sitemap-Change") or 0)
                self.poller.watch(write)
        connection.close()

    def start(self) -> None:
        started = time.monotonic()
        for write in self.writes:
            write.due += started
        for thread in self.threads:
            thread.start()

    def join(self) -> None:
        for thread in self.threads:
            thread.join()


def planned_writes(deployment: Deployment, args: argparse.Namespace, run: int) -> list[Write]:
    """``rate`` writes a second for the length of a phase, each changing the slug of
    another published post to one never used."""
    count = round(args.rate * args.seconds)
    posts = random.Random(run).sample(sorted(deployment.post_pages), count)
    return [
        Write(post, f"varnish-bench-{run}-{n}", deployment.post_pages[post], n / args.rate)
        for n, post in enumerate(posts)
    ]


def port_of(base: str) -> int:
    return int(urlsplit(base).port or 80)


# A run -------------------------------------------------------------------------------------


@dataclass
class Phase:
    """wrk's reads through one phase, and what they cost."""

    name: str
    reads: dict[str, float]
    window: Window

    def row(self) -> dict[str, float]:
        per_1k = 1000 / max(self.reads["requests"], 1)
        cpu = {name: spent * per_1k for name, spent in self.window.cpu.items()}
        cpu["wrk"] = self.reads["wrk_cpu"] * per_1k
        cpu["bench"] = self.window.own * per_1k
        known = sum(self.window.cpu.values()) + self.reads["wrk_cpu"] + self.window.own
        cpu["other"] = max(0.0, self.window.busy - known) * per_1k
        counters = self.window.counters
        served = counters["MAIN.client_req"]
        return {
            "rate": self.reads["rate"],
            "p50": self.reads["p50"],
            "p99": self.reads["p99"],
            "errors": self.reads["errors"],
            "hit": 100 * counters["MAIN.cache_hit"] / served if served else float("nan"),
            "miss": counters["MAIN.cache_miss"] if served else float("nan"),
            **cpu,
            "busy": self.window.busy / max(self.window.seconds, 1e-9),
        }


@dataclass
class WritePhase:
    """The writes of one phase, when each showed, and (without reads) what they cost."""

    name: str
    writes: list[Write]
    window: Window
    polls: int
    alone: bool
    # The Varnish purges stored meanwhile: (stored, sent) in the database's clock.
    purges: list[tuple[datetime, datetime | None]]

    def row(self, seconds: float) -> dict[str, float]:
        found = write_summary(self.writes, seconds)
        per_write = 1000 / max(found["ok"], 1)  # ms per write
        for name, spent in self.window.cpu.items():
            found[name] = spent * per_write if self.alone else float("nan")
        found["bench"] = self.window.own * per_write if self.alone else float("nan")
        found["polls"] = self.polls
        waits = [(sent - stored).total_seconds() for stored, sent in self.purges if sent]
        sends = sorted(sent for _, sent in self.purges if sent)
        gaps = [(later - earlier).total_seconds() for earlier, later in pairwise(sends)]
        found["purges"] = len(self.purges)
        found["purge_wait_p50"] = percentile(waits, 0.5) * 1000 if waits else float("nan")
        found["purge_wait_p99"] = percentile(waits, 0.99) * 1000 if waits else float("nan")
        found["purge_gap"] = max(gaps) * 1000 if gaps else float("nan")
        return found


def writing(
    deployment: Deployment, args: argparse.Namespace, name: str, seed: int, reads: bool
) -> tuple[WritePhase, Phase | None]:
    """``args.rate`` writes a second for ``args.seconds``, each followed through the cache
    until it shows; with ``reads``, wrk reading through the cache meanwhile."""
    deployment.warm()
    with deployment.engine.connect() as conn:
        last_notification = conn.scalar(text("SELECT coalesce(max(id), 0) FROM notifications"))
    port = port_of(deployment.cache)
    poller = Poller(port, args.poll_ms / 1000)
    sampler = Sampler(deployment.engine)
    writes = planned_writes(deployment, args, seed)
    writers = Writers(deployment, poller, writes, port)
    deployment.components.excluded.add(sampler.pid)
    read = None
    try:
        sampler.thread.start()
        poller.thread.start()
        with Window(deployment.components, deployment.varnish_workdir) as window:
            writers.start()
            if reads:
                read = Phase(name, wrk(deployment.cache, deployment, args), window)
            else:  # until every write shows: what applying and purging them cost too
                writers.join()
                poller.writes_done.set()
                poller.thread.join()
        writers.join()
        poller.writes_done.set()
        poller.thread.join()
    finally:
        writers.stop.set()
        poller.stop.set()
        sampler.stop.set()
        for thread in (*writers.threads, poller.thread, sampler.thread):
            if thread.ident is not None:
                thread.join()
        sampler.close()
        deployment.components.excluded.discard(sampler.pid)
    sampler.date(writes)
    deployment.settle()
    with deployment.engine.connect() as conn:
        rows = conn.execute(PURGES_SINCE, {"after": last_notification})
        purges = [(row.created_at, row.finished_at) for row in rows]
    return WritePhase(name, writes, window, poller.requests, not reads, purges), read


def run(deployment: Deployment, args: argparse.Namespace, number: int) -> dict[str, Any]:
    phases = []
    with Window(deployment.components, deployment.varnish_workdir) as window:
        reads = wrk(deployment.origins[0], deployment, args)
    phases.append(Phase("origin", reads, window))

    deployment.warm()
    with Window(deployment.components, deployment.varnish_workdir) as window:
        reads = wrk(deployment.cache, deployment, args)
    phases.append(Phase("cache", reads, window))

    under_reads, loaded = writing(deployment, args, "cache+writes", 2 * number, reads=True)
    assert loaded is not None
    phases.append(loaded)
    alone, _ = writing(deployment, args, "writes alone", 2 * number + 1, reads=False)
    return {"phases": phases, "writes": [under_reads, alone]}


def write_summary(writes: list[Write], seconds: float) -> dict[str, float]:
    answered = [w for w in writes if w.status == 200]
    # From its due time (open loop: a write that waited for a connection waited), and
    # from when it was sent.
    late = [w.answered - w.due for w in answered]
    took = [w.answered - w.sent for w in answered]

    def after_answer(attribute: str) -> list[float]:
        return [getattr(w, attribute) - w.answered for w in answered if getattr(w, attribute)]

    visible, applied, purged = (after_answer(a) for a in ("visible", "applied", "purged"))

    def p(values: list[float], q: float) -> float:
        return percentile(values, q) * 1000 if values else float("nan")

    return {
        "writes": len(writes),
        "ok": len(answered),
        # Answered a second, from the first due to the last answer: below ``rate`` when
        # the writes fell behind.
        "per_s": len(answered) / max(max(w.answered for w in answered) - writes[0].due, seconds)
        if answered
        else 0.0,
        "patch_p50": p(took, 0.5),
        "patch_p99": p(took, 0.99),
        "due_p99": p(late, 0.99),
        "applied_p50": p(applied, 0.5),
        "applied_p99": p(applied, 0.99),
        "purged_p50": p(purged, 0.5),
        "purged_p99": p(purged, 0.99),
        "visible_p50": p(visible, 0.5),
        "visible_p99": p(visible, 0.99),
        "visible_max": max(visible) * 1000 if visible else float("nan"),
        "never": len(answered) - len(visible),
    }


# Reporting ---------------------------------------------------------------------------------

READ_COLUMNS = [
    ("rate", "req/s", "{:>8.0f}"),
    ("p50", "p50 ms", "{:>7.2f}"),
    ("p99", "p99 ms", "{:>7.2f}"),
    ("errors", "non2xx", "{:>6.0f}"),
    ("hit", "hit %", "{:>6.1f}"),
    ("miss", "miss", "{:>5.0f}"),
    ("varnishd", "varnish", "{:>7.3f}"),
    ("pserve", "pserve", "{:>7.3f}"),
    ("worker", "worker", "{:>7.3f}"),
    ("postgres", "pg", "{:>7.3f}"),
    ("wrk", "wrk", "{:>7.3f}"),
    ("bench", "bench", "{:>7.3f}"),
    ("other", "other", "{:>7.3f}"),
    ("busy", "cores", "{:>5.2f}"),
]
WRITE_COLUMNS = [
    ("per_s", "ok/s", "{:>5.1f}"),
    ("patch_p50", "p50", "{:>6.0f}"),
    ("patch_p99", "p99", "{:>6.0f}"),
    ("due_p99", "due99", "{:>6.0f}"),
    ("applied_p50", "p50", "{:>5.0f}"),
    ("applied_p99", "p99", "{:>5.0f}"),
    ("purged_p50", "p50", "{:>5.0f}"),
    ("purged_p99", "p99", "{:>5.0f}"),
    ("visible_p50", "p50", "{:>5.0f}"),
    ("visible_p99", "p99", "{:>5.0f}"),
    ("visible_max", "max", "{:>5.0f}"),
    ("never", "never", "{:>5.0f}"),
    ("purges", "sent", "{:>5.0f}"),
    ("purge_wait_p50", "wait50", "{:>6.0f}"),
    ("purge_wait_p99", "wait99", "{:>6.0f}"),
    ("purge_gap", "gap", "{:>6.0f}"),
]
# CPU milliseconds per write, measured with no reads.
WRITE_CPU = ("pserve", "worker", "postgres", "varnishd", "bench")


def table(
    rows: list[tuple[str, dict[str, float]]],
    columns: list[tuple[str, str, str]],
    groups: list[tuple[int, str]],
) -> str:
    """``rows`` under ``columns``, with a line above naming ``groups`` of columns (each
    from a column's index to the next group's)."""
    widths = [len(fmt.format(0)) for _, _, fmt in columns]
    starts = [16 + sum(w + 1 for w in widths[:i]) for i in range(len(widths) + 1)]
    above = ""
    for n, (first, title) in enumerate(groups):
        end = groups[n + 1][0] if n + 1 < len(groups) else len(columns)
        above = above.ljust(starts[first] + 1)
        above += f" {title} ".center(starts[end] - starts[first] - 2, "-")
    head = f"{'phase':<16}" + " ".join(
        f"{title:>{width}}" for (_, title, _), width in zip(columns, widths, strict=True)
    )
    lines = [above.rstrip(), head]
    for name, row in rows:
        cells = " ".join(fmt.format(row[key]).replace("nan", "  -") for key, _, fmt in columns)
        lines.append(f"{name:<16}{cells}")
    return "\n".join(lines)


def read_table(rows: list[tuple[str, dict[str, float]]]) -> str:
    return table(
        rows, READ_COLUMNS, [(0, "wrk's reads"), (4, "Varnish"), (6, "CPU s / 1,000 reads")]
    )


def write_table(rows: list[tuple[str, dict[str, float]]]) -> str:
    return table(
        rows,
        WRITE_COLUMNS,
        [
            (0, "PATCH ms"),
            (4, "applied"),
            (6, "purged"),
            (8, "visible via Varnish"),
            (12, "purges stored"),
        ],
    )


def write_cpu_line(row: dict[str, float]) -> str:
    return "CPU ms per write (writes alone, until every one showed): " + ", ".join(
        f"{name} {row[name]:.1f}" for name in WRITE_CPU
    )


def medians(rows: list[dict[str, float]]) -> dict[str, float]:
    return {key: statistics.median(row[key] for row in rows) for key in rows[0]}


def verdict(met: bool) -> str:
    return "met" if met else "MISSED"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--posts", type=int, default=20_000)
    parser.add_argument("--per-page", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--seconds", type=int, default=10, help="length of each phase")
    parser.add_argument("--threads", type=int, default=2, help="wrk's threads (-t)")
    parser.add_argument("--connections", type=int, default=32, help="wrk's connections (-c)")
    parser.add_argument("--rate", type=float, default=50, help="writes per second")
    parser.add_argument("--poll-ms", type=float, default=50, help="the poller's round")
    args = parser.parse_args()
    # SIGTERM as Ctrl-C: the same clean-up of every process started.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    results = []
    with (
        tempfile.TemporaryDirectory(prefix="varnish-bench.") as tmp,
        deployed(args, Path(tmp)) as deployment,
    ):
        print(
            f"{len(deployment.post_pages)} published posts; wrk -t{args.threads} "
            f"-c{args.connections} -d{args.seconds}s over {len(deployment.paths)} paths "
            f"(read_paths.lua); {args.rate:g} writes/s; poller every {args.poll_ms:g} ms",
            flush=True,
        )
        for number in range(1, args.runs + 1):
            result = run(deployment, args, number)
            results.append(result)
            print(f"\nrun {number}")
            print(read_table([(phase.name, phase.row()) for phase in result["phases"]]))
            print(write_table([(w.name, w.row(args.seconds)) for w in result["writes"]]))
            print(write_cpu_line(result["writes"][1].row(args.seconds)))
            sys.stdout.flush()
    read_names = [phase.name for phase in results[0]["phases"]]
    reads = {
        name: medians([r["phases"][i].row() for r in results]) for i, name in enumerate(read_names)
    }
    write_names = [phase.name for phase in results[0]["writes"]]
    writes = {
        name: medians([r["writes"][i].row(args.seconds) for r in results])
        for i, name in enumerate(write_names)
    }
    print(f"\nmedians of {len(results)} runs")
    print(read_table(list(reads.items())))
    print(write_table(list(writes.items())))
    print(write_cpu_line(writes["writes alone"]))
    pooled = [
        write_summary([w for r in results for w in r["writes"][i].writes], args.seconds)
        for i in range(len(write_names))
    ]
    for name, summary in zip(write_names, pooled, strict=True):
        print(
            f"all runs' writes, {name}: visible p99 {summary['visible_p99']:.0f} ms, max "
            f"{summary['visible_max']:.0f} ms, never {summary['never']:.0f} "
            f"(of {summary['ok']:.0f})"
        )

    shares = [r["phases"][2].row()["rate"] / r["phases"][1].row()["rate"] for r in results]
    share = statistics.median(shares)
    cache, loaded = reads["cache"], reads["cache+writes"]
    visible = writes["cache+writes"]["visible_p99"] / 1000
    never = pooled[0]["never"]
    print("\ntargets (medians of the runs)")
    print(
        f"1. cached through Varnish >= {CACHED_RATE_TARGET:,} req/s: {cache['rate']:,.0f} "
        f"({verdict(cache['rate'] >= CACHED_RATE_TARGET)}); origin directly: "
        f"{reads['origin']['rate']:,.0f} req/s"
    )
    print(
        f"2. at {args.rate:g} writes/s, reads >= {UNDER_WRITES_SHARE_TARGET:.0%} of their rate "
        f"without: {share:.0%} ({verdict(share >= UNDER_WRITES_SHARE_TARGET)}); read p99 <= "
        f"{UNDER_WRITES_P99_TARGET_MS:g} ms: {loaded['p99']:.2f} ms "
        f"({verdict(loaded['p99'] <= UNDER_WRITES_P99_TARGET_MS)})"
    )
    print(
        f"3. every write visible through Varnish within {VISIBLE_P99_TARGET_S:g} s p99, under "
        f"the reads: {visible:.3f} s ({verdict(visible <= VISIBLE_P99_TARGET_S and not never)}"
        f"; {never:.0f} never seen within {VISIBLE_DEADLINE_SECONDS:g} s); without reads: "
        f"{writes['writes alone']['visible_p99'] / 1000:.3f} s"
    )


if __name__ == "__main__":
    main()
