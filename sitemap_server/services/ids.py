"""Explicit ids on create, so that an import can refer to what it created earlier."""

from __future__ import annotations

from typing import Any

from sqlalchemy import func, select, text
from sqlalchemy.orm import Session

from .errors import Conflict


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
