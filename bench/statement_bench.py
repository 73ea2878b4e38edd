"""What a small select costs the maintainer, built each time or built once.

    .venv/bin/python bench/statement_bench.py

Runs one select of ``sitemap_entries`` (a provider's stored keys among two) on an empty
in-memory SQLite database, 3,000 times each way, and prints the CPU time per execution:
built each time from ORM attributes, built each time from the table's columns, built once
with bound parameters (through the session, and through its connection), and as the
driver's own SQL. Why ``sitemaps/store.py``, ``pages.py`` and the providers keep
the statements of a pass in module constants.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from sqlalchemy import bindparam, create_engine, select
from sqlalchemy.orm import Session

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from sitemap_server.models import SitemapEntry
from sitemap_server.models.meta import Base

RUNS = 3000


def per_run(function: Callable[[], Any]) -> float:
    """CPU microseconds per call of ``function``, after 200 to warm the caches."""
    for _ in range(200):
        function()
    started = time.process_time()
    for _ in range(RUNS):
        function()
    return (time.process_time() - started) / RUNS * 1e6


def main() -> None:
    engine = create_engine("sqlite://")
    Base.metadata.create_all(engine)
    table = SitemapEntry.__table__
    built_once = select(table.c.key).where(
        table.c.provider == bindparam("provider"),
        table.c.key.in_(bindparam("keys", expanding=True)),
    )
    parameters = {"provider": "post", "keys": [1, 2]}
    with Session(engine) as session:
        connection = session.connection()
        ways: dict[str, Callable[[], Any]] = {
            "built each time (ORM attributes)": lambda: session.execute(
                select(SitemapEntry.key).where(
                    SitemapEntry.provider == "post", SitemapEntry.key.in_([1, 2])
                )
            ).all(),
            "built each time (table columns)": lambda: session.execute(
                select(table.c.key).where(table.c.provider == "post", table.c.key.in_([1, 2]))
            ).all(),
            "built once, through the session": lambda: session.execute(
                built_once, parameters
            ).all(),
            "built once, through the connection": lambda: connection.execute(
                built_once, parameters
            ).all(),
            "the driver's SQL": lambda: connection.exec_driver_sql(
                "SELECT key FROM sitemap_entries WHERE provider = ? AND key IN (?, ?)",
                ("post", 1, 2),
            ).all(),
        }
        for name, function in ways.items():
            print(f"{name}: {per_run(function):.0f} µs CPU")
    engine.dispose()


if __name__ == "__main__":
    sys.exit(main())
