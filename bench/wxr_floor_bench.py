"""The least a WordPress import's writes can cost: its rows written again by the driver alone.

    .venv/bin/python bench/wxr_floor_bench.py --posts 50000
    scripts/with-postgres .venv/bin/python bench/wxr_floor_bench.py --posts 50000

Imports ``wxr_bench.generate``'s export with the real command into a fresh SQLite
database, then copies the rows the import left (posts, their terms, URLs, sources and
sitemap entries) into a freshly migrated database, table by table, in one transaction,
with nothing between the rows and the driver: SQLite's ``executemany`` of plain tuples,
PostgreSQL's ``COPY`` (psycopg). No parse, no check, no rendering, no change log (the
import's own rows of it are gone once applied): what is left is a lower bound on what
writing one post costs this schema on this machine, CPU time a post, median of
``--runs``. On PostgreSQL the server's CPU is counted too (the backend's, from /proc).
Set beside the parse's floor (``wxr_parse_bench.py --floor``), it says which throughput
a Python importer can and cannot reach here.
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from import_bench import BIN, fresh_database, write_ini
from wxr_bench import generate

# Parents first: what a row refers to is there before it.
REFERENCED = ["authors", "taxonomies", "post_types", "terms"]
WRITTEN = ["posts", "post_terms", "object_urls", "imported_objects", "sitemap_entries"]
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def rows_of(source: sqlite3.Connection, table: str) -> tuple[list[str], list[tuple[Any, ...]]]:
    cursor = source.execute(f'SELECT * FROM "{table}"')
    return [d[0] for d in cursor.description], cursor.fetchall()


def sqlite_floor(
    source: sqlite3.Connection, directory: Path, run: int
) -> dict[str, tuple[float, float]]:
    """CPU and wall seconds each written table took, copied into a fresh SQLite file."""
    url = f"sqlite:///{directory / f'floor{run}.sqlite'}"
    fresh_database(url, write_ini(directory, url))
    target = sqlite3.connect(directory / f"floor{run}.sqlite", isolation_level=None)
    target.execute("PRAGMA foreign_keys = ON")
    target.execute("BEGIN")
    for table in REFERENCED:
        target.execute(f'DELETE FROM "{table}"')

    def write(table: str, columns: list[str], rows: list[tuple[Any, ...]]) -> None:
        names = ", ".join(f'"{c}"' for c in columns)
        marks = ", ".join("?" * len(columns))
        target.executemany(f'INSERT INTO "{table}" ({names}) VALUES ({marks})', rows)

    times = copy_tables(source, write, lambda: 0.0)
    target.execute("COMMIT")
    target.close()
    return times


def postgresql_floor(source: sqlite3.Connection, url: str) -> dict[str, tuple[float, float]]:
    """CPU (ours and the server's) and wall seconds each written table took, copied with
    COPY into a freshly migrated PostgreSQL database."""
    import psycopg

    with tempfile.TemporaryDirectory() as tmp:
        fresh_database(url, write_ini(Path(tmp), url))
    with psycopg.connect(url.replace("postgresql+psycopg://", "postgresql://")) as target:
        backend = target.execute("SELECT pg_backend_pid()").fetchone()[0]  # type: ignore[index]
        for table in REFERENCED:
            target.execute(f'DELETE FROM "{table}"')
        flags = bool_columns(target)

        def write(table: str, columns: list[str], rows: list[tuple[Any, ...]]) -> None:
            names = ", ".join(f'"{c}"' for c in columns)
            booleans = [i for i, c in enumerate(columns) if (table, c) in flags]
            with target.cursor().copy(f'COPY "{table}" ({names}) FROM STDIN') as copy:
                for row in rows:
                    if booleans:
                        row = tuple(
                            bool(v) if i in booleans and v is not None else v
                            for i, v in enumerate(row)
                        )
                    copy.write_row(row)

        times = copy_tables(source, write, lambda: server_cpu(backend))
        target.commit()
    return times


def bool_columns(target: Any) -> set[tuple[str, str]]:
    """The boolean columns (SQLite keeps them as 0 and 1, COPY wants true and false)."""
    found = target.execute(
        "SELECT table_name, column_name FROM information_schema.columns "
        "WHERE table_schema = current_schema() AND data_type = 'boolean'"
    )
    return {(t, c) for t, c in found}


def server_cpu(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS


def copy_tables(
    source: sqlite3.Connection,
    write: Callable[[str, list[str], list[tuple[Any, ...]]], None],
    other_cpu: Callable[[], float],
) -> dict[str, tuple[float, float]]:
    for table in REFERENCED:
        write(table, *rows_of(source, table))
    times = {}
    for table in WRITTEN:
        columns, rows = rows_of(source, table)
        cpu, other, wall = time.process_time(), other_cpu(), time.perf_counter()
        write(table, columns, rows)
        times[table] = (
            time.process_time() - cpu + other_cpu() - other,
            time.perf_counter() - wall,
        )
    return times


def report(name: str, runs: list[dict[str, tuple[float, float]]], posts: int) -> None:
    for table in WRITTEN:
        cpu = statistics.median(r[table][0] for r in runs)
        print(f"{name:10} {table:18} {cpu / posts * 1e6:6.1f} µs CPU a post")
    cpu = statistics.median(sum(c for c, _ in r.values()) for r in runs)
    wall = statistics.median(sum(w for _, w in r.values()) for r in runs)
    print(
        f"{name:10} {'all':18} {cpu / posts * 1e6:6.1f} µs CPU a post, "
        f"{wall / posts * 1e6:6.1f} µs wall: at most {posts / wall:,.0f} posts/s "
        f"from the writes alone (median of {len(runs)})"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--posts", type=int, default=50_000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp)
        export = directory / "export.xml"
        generate(export, args.posts)
        url = f"sqlite:///{directory / 'imported.sqlite'}"
        ini = write_ini(directory, url)
        fresh_database(url, ini)
        subprocess.run(
            [BIN / "sitemap-server", "--config", ini, "import-wordpress", "-q", export],
            check=True,
            capture_output=True,
        )
        source = sqlite3.connect(directory / "imported.sqlite")
        posts = source.execute("SELECT count(*) FROM posts").fetchone()[0]
        print(f"{posts} posts and pages imported; their rows written again:")
        report("sqlite", [sqlite_floor(source, directory, n) for n in range(args.runs)], posts)
        if os.environ.get("SITEMAP_SERVER_TEST_DATABASE_URL"):
            pg = os.environ["SITEMAP_SERVER_TEST_DATABASE_URL"]
            report("postgresql", [postgresql_floor(source, pg) for _ in range(args.runs)], posts)


if __name__ == "__main__":
    main()
