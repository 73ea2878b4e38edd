"""Explicit ids on create, so that an import can refer to what it created earlier."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any

from sqlalchemy import func, select, text
from sqlalchemy.exc import DataError
from sqlalchemy.orm import Session

from .errors import Conflict

# Ids are PostgreSQL integers; the OpenAPI ``Id`` schema documents the same range.
MAX_ID = 2**31 - 1
# PostgreSQL's SQLSTATE when nextval() passes the sequence's maximum.
SEQUENCE_LIMIT_EXCEEDED = "2200H"


def _no_id_left(what: str) -> Conflict:
    return Conflict(
        f"no {what} id is left: new ids follow the largest one in use, and ids end at {MAX_ID}"
    )


@contextmanager
def allocating_ids(what: str) -> Iterator[None]:
    """A 409, not a 500, when an explicit id took the last one PostgreSQL can allocate."""
    try:
        yield
    except DataError as exc:
        if getattr(exc.orig, "sqlstate", None) != SEQUENCE_LIMIT_EXCEEDED:
            raise
        raise _no_id_left(what) from exc


def check_allocated_ids(ids: Iterable[int | None], what: str) -> None:
    """SQLite allocates ids past ``MAX_ID`` instead of failing: refuse them the same way."""
    if any(new_id is not None and new_id > MAX_ID for new_id in ids):
        raise _no_id_left(what)


def use_explicit_id(session: Session, model: Any, obj: Any, data: dict[str, Any]) -> None:
    if "id" not in data:
        return
    if session.get(model, data["id"]) is not None:
        raise Conflict.field("id", f"{data['id']} is already taken")
    obj.id = data["id"]
    note_explicit_ids(session, model.__table__)


def note_explicit_ids(session: Session, table: Any) -> None:
    session.info.setdefault("explicit_id_tables", set()).add(table)


def sync_sequences(session: Session) -> None:
    """After rows were inserted with explicit ids, move PostgreSQL's sequences past them.

    SQLite's INTEGER PRIMARY KEY always continues after the largest id, so it needs nothing.
    ``setval`` is not transactional: an aborted import leaves a gap in the ids, nothing worse.
    """
    tables = session.info.pop("explicit_id_tables", set())
    if not tables or session.get_bind().dialect.name != "postgresql":
        return
    for table in tables:
        largest = session.scalar(select(func.max(table.c.id))) or 1
        session.execute(
            text("SELECT setval(pg_get_serial_sequence(:table, 'id'), :value)"),
            {"table": table.name, "value": largest},
        )
