"""Explicit ids on create, so that an import can refer to what it created earlier.

New ids continue after the largest one ever given (PostgreSQL's sequences; SQLite's
AUTOINCREMENT tables, ``models.content.NEVER_REUSED``): a deleted object's id is never
given again. An explicit id may be any the API allows, up to ``MAX_ID``: once the largest
is there, new ids are the lowest free ones instead (then, and only then, an id freed by a
delete can come back), so no explicit id can block later creates; only a table with
every id in use is full (409).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any

from sqlalchemy import exists, func, insert, select, text
from sqlalchemy.exc import DataError
from sqlalchemy.orm import Session

from ..errors import Conflict
from ..models import mark_written, take_write_lock

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


def free_ids(session: Session, table: Any, count: int, what: str) -> list[int] | None:
    """None while ``count`` new rows of ``table`` can take the ids after the largest (the
    usual case: one indexed lookup); else the ``count`` lowest free ids, or a 409 when
    fewer than ``count`` are left."""
    largest = session.scalar(select(func.max(table.c.id)))
    if largest is None or largest + count <= MAX_ID:
        return None
    used, later = table.alias("used"), table.alias("later")
    # Each gap: from after a used id to before the next used one (at most ``count`` gaps).
    gaps = [(1, session.scalar(select(func.min(table.c.id))))]
    gaps += session.execute(
        select(
            used.c.id + 1,
            select(func.min(later.c.id)).where(later.c.id > used.c.id).scalar_subquery(),
        )
        .where(used.c.id < MAX_ID, ~exists().where(later.c.id == used.c.id + 1))
        .order_by(used.c.id)
        .limit(count)
    ).all()
    free: list[int] = []
    for start, end in gaps:
        end = MAX_ID + 1 if end is None else end
        free.extend(range(start, min(end, start + count - len(free))))
        if len(free) == count:
            return free
    raise _no_id_left(what)


def assign_free_ids(session: Session, new: list[Any], what: str) -> None:
    """Give the new objects that have no id yet a free one when the ids after the largest
    are used up (``free_ids``); otherwise leave them to the database."""
    by_table: dict[Any, list[Any]] = {}
    for obj in new:
        table = getattr(obj, "__table__", None)
        if table is not None and "id" in table.c and table.c.id.primary_key and obj.id is None:
            by_table.setdefault(table, []).append(obj)
    for table, objects in by_table.items():
        with session.no_autoflush:  # the objects are flushed by the caller, who handles it
            free = free_ids(session, table, len(objects), what)
        for obj, new_id in zip(objects, free or [], strict=False):
            obj.id = new_id


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

    SQLite's AUTOINCREMENT always continues after the largest id given, so it needs nothing.
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


def new_ids(session: Session, table: Any, count: int, what: str) -> list[int]:
    """``count`` ids for new rows of ``table``, given now rather than by the insert, so
    that a bulk insert is one plain statement with no RETURNING: PostgreSQL's sequence
    gives them (other writers go on taking theirs); on SQLite they follow the largest id
    ever given (AUTOINCREMENT's rule), with the write lock held so that no one else takes
    them first. When the ids after the largest are used up, the lowest free ones."""
    free = free_ids(session, table, count, what)
    if free is not None:
        return free
    if session.get_bind().dialect.name == "postgresql":
        with allocating_ids(what):
            ids = list(
                session.scalars(
                    text(
                        "SELECT nextval(pg_get_serial_sequence(:table, 'id')) "
                        "FROM generate_series(1, :count)"
                    ),
                    {"table": table.name, "count": count},
                )
            )
        check_allocated_ids(ids, what)
        return ids
    take_write_lock(session)
    given = session.scalar(
        text("SELECT seq FROM sqlite_sequence WHERE name = :table"), {"table": table.name}
    )
    largest = max(given or 0, session.scalar(select(func.max(table.c.id))) or 0)
    check_allocated_ids([largest + count], what)
    return list(range(largest + 1, largest + count + 1))


def insert_with_ids(session: Session, model: Any, rows: list[dict[str, Any]], what: str) -> None:
    """Insert ``rows`` of ``model`` in plain statements (the bulk importer), those with an
    ``id`` first, then the others with new ones (``new_ids``): Core, without the ORM's
    work for each row."""
    table = model.__table__
    explicit = [r for r in rows if "id" in r]
    implicit = [r for r in rows if "id" not in r]
    if explicit:
        session.execute(insert(table), explicit)
        # PostgreSQL: the ids its sequence gives next come after these.
        note_explicit_ids(session, table)
        sync_sequences(session)
    if implicit:
        for row, new_id in zip(implicit, new_ids(session, table, len(implicit), what), strict=True):
            row["id"] = new_id
        session.execute(insert(table), implicit)
    mark_written(session)
