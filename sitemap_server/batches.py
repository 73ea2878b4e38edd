"""Values in batches, for statements that bind one parameter per value: 500 keeps every
``IN (…)`` far below what either database takes (SQLite's 32,766 bound parameters,
PostgreSQL's 65,535) and each statement's plan small. It imports nothing of the
application, so every layer uses it."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any


def chunks(values: Iterable[Any], size: int = 500) -> Iterator[list[Any]]:
    """``values`` in lists of ``size`` (the last one shorter), in order."""
    batch: list[Any] = []
    for value in values:
        batch.append(value)
        if len(batch) >= size:
            yield batch
            batch = []
    if batch:
        yield batch
