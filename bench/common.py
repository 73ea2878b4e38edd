"""What the benchmarks share: each starts from an empty database."""

from __future__ import annotations

import os
from pathlib import Path

from sqlalchemy import MetaData, create_engine


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
