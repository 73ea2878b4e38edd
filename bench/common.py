"""What the benchmarks share: each starts from an empty database."""

from __future__ import annotations

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
