"""Write-path benchmark: PATCH latency, and sustained writes while crawlers read.

    .venv/bin/python bench/write_bench.py --posts 100000                       # SQLite
    scripts/with-postgres .venv/bin/python bench/write_bench.py --db postgresql --processes 2

Generates a site with bulk SQL (``sitemap_bench.generate``), builds its sitemaps, then
starts ``--processes`` pserve processes (waitress, 4 threads each) and one
``sitemap-server worker`` (the maintainer) on 127.0.0.1 and measures:

1. "sequential": ``--patches`` PATCHes of random posts one after the other over one
   keep-alive connection: p50/p95 (the write path alone);
2. "reads alone": wrk (4 connections per server process) on a cached post sitemap page;
   with ``--api-processes N``, N more processes take the writes, as when a proxy routes
   ``/api`` to processes of its own (docs/operations.md);
3. "reads + writes": the same wrk run while a second wrk PATCHes random posts at
   ``--rate`` per second (``patch_posts.lua``: open loop over 8 connections per server
   process; wrk's achieved rate shows a backlog), with a sampler reading the age of the
   oldest change waiting in the change log every 20 ms: how long a committed write waits
   to be served.

Responses that are not 2xx/3xx are counted on both sides. Prints one block per run; run it
twice (or more, ``--runs``) and quote medians.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import requests
import sitemap_bench
from common import drop_all_tables, wait_until_up, wrk_numbers
from sitemap_bench import BIN, blog_shaped, cli, free_port, generate, percentile
from sqlalchemy import create_engine, text

HERE = Path(__file__).resolve().parent


def write_ini(
    directory: Path, url: str, port: int, apply_poll: str = "auto", max_staleness: str = "1"
) -> Path:
    return sitemap_bench.write_ini(
        directory,
        url,
        port,
        plugins=False,
        extra=f"sitemap_server.maintainer.poll_seconds = {apply_poll}\n"
        f"sitemap_server.max_staleness = {max_staleness}\n",
    )


def wrk(
    base: str,
    path: str,
    seconds: int,
    connections: int = 4,
    script: Path | None = None,
    env: dict[str, str] | None = None,
) -> subprocess.Popen[str]:
    command = ["wrk", "-t1", f"-c{connections}", f"-d{seconds}s", "--latency"]
    if script is not None:
        command += ["-s", str(script)]
    return subprocess.Popen(
        [*command, f"{base}{path}"],
        stdout=subprocess.PIPE,
        text=True,
        env=None if env is None else {**os.environ, **env},
    )


def wrk_result(process: subprocess.Popen[str]) -> dict[str, float]:
    out, _ = process.communicate()
    found = wrk_numbers(out)
    return {
        "rate": found["rate"],
        "requests": found["requests"],
        "p50_ms": found["p50"],
        "p99_ms": found["p99"],
        "errors": found["non2xx"]
        + found["socket"].get("connect", 0.0)
        + found["socket"].get("timeout", 0.0),
    }


def combined(results: list[dict[str, float]]) -> dict[str, float]:
    """Several wrk runs (one per server process) as one: rates and counts add up, the
    latencies are the worst process's."""
    return {
        "rate": sum(r["rate"] for r in results),
        "requests": sum(r["requests"] for r in results),
        "p50_ms": max(r["p50_ms"] for r in results),
        "p99_ms": max(r["p99_ms"] for r in results),
        "errors": sum(r["errors"] for r in results),
    }


def reads(bases: list[str], path: str, seconds: int) -> dict[str, float]:
    return combined([wrk_result(wrk(base, path, seconds)) for base in bases])


def writes(bases: list[str], token: str, max_id: int, rate: float, seconds: int) -> list[Any]:
    """wrk PATCHing random posts at ``rate`` per second in all, spread over ``bases``
    (``patch_posts.lua``). A client in C: a Python one at 50 requests/s took so much of
    the two cores that reads fell by half with writes that did nothing."""
    env = {"WRITE_TOKEN": token, "WRITE_MAX_ID": str(max_id), "WRITE_RATE": str(rate / len(bases))}
    return [wrk(base, "", seconds, 8, HERE / "patch_posts.lua", env) for base in bases]


class Staleness:
    """The age of the oldest change waiting in the change log, sampled every 20 ms."""

    def __init__(self, url: str) -> None:
        self.engine = create_engine(url)
        self.ages: list[float] = []
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._sample)

    def _sample(self) -> None:
        oldest = text("SELECT recorded_at FROM sitemap_changes ORDER BY id LIMIT 1")
        with self.engine.connect() as conn:
            while not self.stop.is_set():
                try:
                    found = conn.execute(oldest).scalar()
                except Exception:  # a version without a change log: writes apply inline
                    return
                finally:
                    conn.rollback()
                if found is None:
                    self.ages.append(0.0)
                else:
                    if isinstance(found, str):  # SQLite stores text
                        found = datetime.fromisoformat(found)
                    if found.tzinfo is None:
                        found = found.replace(tzinfo=UTC)
                    self.ages.append((datetime.now(UTC) - found).total_seconds())
                time.sleep(0.02)

    def __enter__(self) -> Staleness:
        self.thread.start()
        return self

    def __exit__(self, *_: Any) -> None:
        self.stop.set()
        self.thread.join()
        self.engine.dispose()


@contextmanager
def profiled(pid: int, output: str, seconds: int) -> Iterator[None]:
    """py-spy samples process ``pid`` for ``seconds`` into ``output`` (collapsed stacks,
    one line per stack: the format ``flamegraph.pl`` and speedscope read)."""
    spy = subprocess.Popen(
        [
            BIN / "py-spy",
            "record",
            "--pid",
            str(pid),
            "--duration",
            str(seconds),
            "--format",
            "raw",
            "--output",
            output,
            "--threads",
            "--idle",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        yield
    finally:
        spy.wait()


def sequential(base: str, token: str, posts: list[int], count: int) -> list[float]:
    session = requests.Session()
    headers = {"Authorization": f"Bearer {token}"}
    rng = random.Random(5)
    times = []
    for n in range(count):
        post = rng.choice(posts)
        started = time.perf_counter()
        response = session.patch(
            f"{base}/api/posts/{post}", json={"title": f"Sequential {n}"}, headers=headers
        )
        times.append(time.perf_counter() - started)
        assert response.status_code == 200, response.text
    return times


def cpu_seconds(pids: list[int]) -> float:
    """User + system CPU time of ``pids`` so far (``/proc/PID/stat``), gone ones as 0."""
    total = 0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except FileNotFoundError:
            continue
        total += int(fields[11]) + int(fields[12])  # utime, stime (fields 14 and 15)
    return total / os.sysconf("SC_CLK_TCK")


def backends(url: str) -> list[int]:
    """The PostgreSQL backends serving the benchmark's database (none on SQLite)."""
    if not url.startswith("postgresql"):
        return []
    engine = create_engine(url)
    try:
        with engine.connect() as conn:
            query = (
                "SELECT pid FROM pg_stat_activity"
                " WHERE datname = current_database() AND pid <> pg_backend_pid()"
            )
            return list(conn.scalars(text(query)))
    finally:
        engine.dispose()


def wait_until_applied(url: str) -> None:
    """Until the change log is empty (bounded): the maintainer has applied every write."""
    engine = create_engine(url)
    deadline = time.monotonic() + 300
    try:
        with engine.connect() as conn:
            while conn.scalar(text("SELECT count(*) FROM sitemap_changes")):
                conn.rollback()
                if time.monotonic() > deadline:
                    raise RuntimeError("the maintainer did not apply the writes in 300 s")
                time.sleep(0.05)  # polling, bounded by the deadline
    finally:
        engine.dispose()


def run(args: argparse.Namespace, url: str, directory: Path, number: int, poll: str) -> None:
    ports = [free_port() for _ in range(args.processes + args.api_processes)]
    inis = [write_ini(directory, url, port, poll, args.max_staleness) for port in ports]
    every = [f"http://127.0.0.1:{port}" for port in ports]
    # Crawlers read from the first ``processes``; writes go to the ``api_processes`` after
    # them if there are any (an operator's proxy routing /api to processes of its own).
    bases, api_bases = every[: args.processes], every[args.processes :] or every
    token = cli(inis[0], "token", "create", f"bench-{number}-{poll}").strip()
    engine = create_engine(url)
    with engine.connect() as conn:
        posts = list(conn.scalars(text("SELECT id FROM posts WHERE status = 'publish'")))
    engine.dispose()
    page = "/post-sitemap.xml"
    with ExitStack() as stack:
        servers = []
        for ini in inis:
            server = subprocess.Popen(
                [BIN / "pserve", ini], stderr=subprocess.DEVNULL, stdout=subprocess.DEVNULL
            )
            servers.append(server)
            stack.callback(server.wait)
            stack.callback(server.terminate)
        worker = subprocess.Popen(
            [BIN / "sitemap-server", "--config", inis[0], "worker"],
            stderr=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
        )
        stack.callback(worker.wait)
        stack.callback(worker.terminate)
        for base in every:
            wait_until_up(base)
            requests.get(f"{base}{page}")  # rendered once: the reads below are cached

        # CPU time per write: the API processes, the maintainer and (PostgreSQL) the
        # backends that serve them, from the first PATCH until every one is applied.
        wait_until_applied(url)
        database = backends(url)
        parts = {"API": [s.pid for s in servers], "maintainer": [worker.pid], "database": database}
        before = {name: cpu_seconds(pids) for name, pids in parts.items()}
        times = sequential(api_bases[0], token, posts, args.patches)
        wait_until_applied(url)
        spent = {
            name: (cpu_seconds(pids) - before[name]) * 1000 / args.patches
            for name, pids in parts.items()
        }
        print(
            f"run {number} sequential PATCH ({args.patches}): "
            f"p50 {statistics.median(times) * 1000:.1f} ms, "
            f"p95 {percentile(times, 0.95) * 1000:.1f} ms"
        )
        print(
            f"run {number} CPU per write: {sum(spent.values()):.1f} ms ("
            + ", ".join(f"{name} {ms:.1f}" for name, ms in spent.items())
            + f"; {len(database)} backends)"
        )
        time.sleep(1)
        alone = reads(bases, page, args.seconds)
        print(
            f"run {number} reads alone: {alone['rate']:.0f} req/s, p99 {alone['p99_ms']:.1f} ms, "
            f"{alone['errors']:.0f} non-2xx/3xx"
        )
        with Staleness(url) as staleness:
            if args.py_spy:  # what the first server process does under reads + writes
                stack.enter_context(profiled(servers[0].pid, args.py_spy, args.seconds))
                stack.enter_context(profiled(worker.pid, f"{args.py_spy}.worker", args.seconds))
            readers = [wrk(base, page, args.seconds) for base in bases]
            writers = writes(api_bases, token, max(posts), args.rate, args.seconds)
            loaded = combined([wrk_result(p) for p in readers])
            written = combined([wrk_result(p) for p in writers])
            time.sleep(1)
        print(
            f"run {number} reads + {args.rate:g} writes/s: {loaded['rate']:.0f} req/s "
            f"({loaded['rate'] / alone['rate']:.0%} of alone), p99 {loaded['p99_ms']:.1f} ms, "
            f"{loaded['errors']:.0f} non-2xx/3xx"
        )
        print(
            f"run {number} writes: {written['requests']:.0f} PATCHes, {written['rate']:.0f}/s, "
            f"p50 {written['p50_ms']:.1f} ms, p99 {written['p99_ms']:.1f} ms, "
            f"{written['errors']:.0f} not 2xx"
        )
        ages = staleness.ages or [0.0]
        print(
            f"run {number} oldest waiting change ({len(ages)} samples): "
            f"p50 {statistics.median(ages) * 1000:.0f} ms, "
            f"p99 {percentile(ages, 0.99) * 1000:.0f} ms, "
            f"max {max(ages) * 1000:.0f} ms"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--db", choices=["sqlite", "postgresql"], default="sqlite")
    parser.add_argument("--posts", type=int, default=100_000)
    parser.add_argument("--per-page", type=int, default=1000)
    parser.add_argument("--processes", type=int, default=1)
    parser.add_argument(
        "--api-processes",
        type=int,
        default=0,
        help="server processes of their own for the writes (0: the readers' take them)",
    )
    parser.add_argument("--rate", type=float, default=50)
    parser.add_argument("--seconds", type=int, default=20)
    parser.add_argument("--patches", type=int, default=300)
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument(
        "--apply-poll",
        default="auto",
        help="the worker's maintainer.poll_seconds (auto); several, comma-separated, are "
        "measured in turn within each run",
    )
    parser.add_argument(
        "--max-staleness", default="1", help="the servers' sitemap_server.max_staleness (1)"
    )
    parser.add_argument(
        "--py-spy",
        metavar="FILE",
        help="profile the first server (FILE) and the worker (FILE.worker) under reads + writes",
    )
    parser.add_argument(
        "--one-author",
        action="store_true",
        help="as most blogs are: every post by one author and in one category",
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp)
        if args.db == "postgresql":
            url = os.environ["SITEMAP_SERVER_TEST_DATABASE_URL"]
        else:
            url = f"sqlite:///{directory / 'bench.sqlite'}"
        drop_all_tables(url)
        ini = write_ini(directory, url, free_port())
        cli(ini, "migrate")
        started = time.perf_counter()
        generate(url, args.posts, args.per_page)
        if args.one_author:
            blog_shaped(url)
        cli(ini, "rebuild-sitemaps")
        print(
            f"{args.db}: {args.posts} posts generated and built in "
            f"{time.perf_counter() - started:.0f} s; {args.processes} server process(es)"
            + (f" for reads, {args.api_processes} for writes" if args.api_processes else "")
        )
        for number in range(1, args.runs + 1):
            for poll in args.apply_poll.split(","):
                if "," in args.apply_poll:
                    print(f"maintainer.poll_seconds = {poll}")
                run(args, url, directory, number, poll)


if __name__ == "__main__":
    sys.exit(main())
