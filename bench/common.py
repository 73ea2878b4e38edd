"""What the benchmarks share: each starts from an empty database."""

from __future__ import annotations

import os
import subprocess
import sys
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
