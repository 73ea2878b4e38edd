"""Small helpers the service modules share."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping
from datetime import UTC, datetime, timedelta
from typing import Any, TypeVar

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session
from sqlalchemy.orm.exc import StaleDataError

from ..batches import chunks
from ..content.sanitize import UnsafeUrl, normal_path
from ..content.slugs import normal_slug, unique_slug
from ..errors import Conflict, Invalid, NotFound, logged
from ..models import hold_lock, take_write_lock
from ..models.meta import utcnow
from ..sitemaps.changes import holding_back
from ..sitemaps.changes import record as record
from .ids import allocating_ids, assign_free_ids, check_allocated_ids, sync_sequences

T = TypeVar("T")
log = logging.getLogger(__name__)

# Another request stored something this write conflicts with since it was checked: the
# same unique value, or a row this one refers to deleted.
CONFLICTED_CONCURRENTLY = (
    "the {what} conflicts with a change another request made at the same time (a value "
    "that must be unique was taken, or something it refers to was deleted); nothing was "
    "changed: fetch what it refers to again and retry"
)
# A row this request changes was deleted (or changed) by another one since it was read.
CHANGED_CONCURRENTLY = (
    "the {what} was changed or deleted by another request at the same time; "
    "fetch it again and retry"
)


def with_normal_slug(data: dict[str, Any]) -> dict[str, Any]:
    """``data`` with its slug as it is stored, in NFC: "über" is one slug however a
    client's keyboard composed it (``content.slugs``)."""
    if isinstance(data.get("slug"), str):
        return {**data, "slug": normal_slug(data["slug"])}
    return data


def normal_site_path(value: str | None, field: str) -> str | None:
    """A path on the site as it is stored and compared, in normal form (RFC 3986: one
    URL, one spelling); one that is no path on the site is a 422 naming ``field``."""
    if value is None:
        return None
    try:
        return normal_path(value)
    except UnsafeUrl as unsafe:
        raise Invalid.field(field, f"{value[:100]!r} {unsafe}") from None


def get_or_404(
    session: Session,
    model: type[T],
    key: Any,
    what: str,
    for_update: bool = False,
    for_delete: bool = False,
) -> T:
    """The object, or a 404. ``for_update`` is for a request that changes it,
    ``for_delete`` for one that deletes it: the object is read under a lock held until the
    transaction ends, so a concurrent delete either waits for this request or has already
    removed it (and this is a 404).

    On PostgreSQL a change takes ``FOR NO KEY UPDATE``: rows that come to refer to this
    one (a new child, a post of this author) do not wait for it, so two requests that each
    change a row and point it at the other's cannot deadlock. A delete takes ``FOR
    UPDATE``: they wait for it, and then find it gone. On SQLite either is the database's
    write lock."""
    if for_update or for_delete:
        take_write_lock(session)
    lock: bool | dict[str, bool] | None = None
    if for_delete:
        lock = True
    elif for_update:
        lock = {"key_share": True}
    obj = session.get(model, key, with_for_update=lock)
    if obj is None:
        raise NotFound(f"{what} {key!r} does not exist")
    return obj


def require_reference(session: Session, model: type[T], key: Any, field: str, what: str) -> T:
    """The object a field refers to, or a 422 naming the field."""
    obj = session.get(model, key)
    if obj is None:
        raise Invalid.field(field, f"unknown {what} {key!r}")
    return obj


def existing(session: Session, column: Any, values: Iterable[Any], *where: Any) -> set[Any]:
    """Which of ``values`` some row has in ``column`` (within ``where``): what an import's
    batch asks of the database, one query a chunk of values."""
    found: set[Any] = set()
    for batch in chunks(sorted(set(values))):
        found.update(session.scalars(select(column).where(column.in_(batch), *where)))
    return found


def ensure_free(session: Session, column: Any, value: Any, field: str, *where: Any) -> None:
    """409 if another row already has ``value`` in ``column`` (within ``where``)."""
    taken = session.scalar(select(column).where(column == value, *where).limit(1))
    if taken is not None:
        raise Conflict.field(field, f"{value!r} is already taken")


def apply(obj: object, data: Mapping[str, Any], fields: Iterable[str]) -> None:
    for name in fields:
        if name in data:
            setattr(obj, name, data[name])


# Every date-time the API, the import and the plugins take lies in [EARLIEST_DATETIME,
# LATEST_DATETIME) once in UTC, or is refused where it enters (422 naming the field). These
# are the years MySQL, and so WordPress, can store (1000 to 9999), less the last year of
# 9999: what the sitemaps do with a date (add the news sitemap's 48 hours, show it in the
# site's time zone, up to 14 hours either side of UTC) then never leaves the years Python's
# datetime holds (1 to 9999), where it would fail every maintainer pass after it.
EARLIEST_DATETIME = datetime(1000, 1, 1, tzinfo=UTC)
LATEST_DATETIME = datetime(9999, 1, 1, tzinfo=UTC)  # not included
DATETIME_RANGE = "must be between {} and {}".format(
    *(bound.isoformat().replace("+00:00", "Z") for bound in (EARLIEST_DATETIME, LATEST_DATETIME))
)


def in_datetime_range(value: datetime) -> bool:
    """Whether an aware datetime lies in [EARLIEST_DATETIME, LATEST_DATETIME)."""
    try:
        return EARLIEST_DATETIME <= value.astimezone(UTC) < LATEST_DATETIME
    except OverflowError:  # year 1 east of UTC, or 9999 west of it
        return False


def parse_datetime(value: str | datetime | None, field: str) -> datetime | None:
    """An aware UTC datetime from RFC 3339 text (or an aware datetime), in the range
    every date-time is held to (``DATETIME_RANGE``); naive, malformed or out-of-range
    times are refused with a 422 naming ``field``."""
    if value is None:
        return None
    if isinstance(value, datetime):
        if value.tzinfo is None:
            raise Invalid.field(field, "needs a UTC offset")
        parsed = value
    else:
        shown = repr(value[:40] + ("…" if len(value) > 40 else ""))
        try:
            parsed = datetime.fromisoformat(value)
        except ValueError:
            raise Invalid.field(field, f"{shown} is not an RFC 3339 date-time") from None
        if parsed.tzinfo is None:
            raise Invalid.field(field, f"{shown} has no UTC offset (add Z or +00:00)")
    if not in_datetime_range(parsed):
        raise Invalid.field(field, DATETIME_RANGE)
    return parsed.astimezone(UTC)


# How far a client's clock may run ahead of ours: a modification time up to this far in
# the future is taken as now, a later one refused (no document carries a future lastmod).
CLOCK_SKEW = timedelta(minutes=5)


def parse_modified(value: str | datetime | None, field: str = "modified_at") -> datetime | None:
    """``parse_datetime`` for when something was modified: never later than now."""
    parsed = parse_datetime(value, field)
    if parsed is None:
        return None
    now = utcnow()
    if parsed > now + CLOCK_SKEW:
        shown = parsed.isoformat().replace("+00:00", "Z")
        raise Invalid.field(
            field,
            f"{shown} is in the future: a modification happened at the latest now "
            f"(clocks may differ by up to {CLOCK_SKEW.seconds // 60} minutes)",
        )
    return min(parsed, now)


def flush(session: Session, what: str) -> None:
    """Flush now so that a unique-constraint race surfaces as a 409, not a 500.

    The 409 says what happened in our words; the database's own (constraint names, its
    DETAIL line) goes to the log, not to the client."""
    new = list(session.new)
    assign_free_ids(session, new, what)
    try:
        with allocating_ids(what):
            session.flush()
    except IntegrityError as exc:
        log.info("%s conflicts with stored data: %s", what, logged(exc.orig))
        raise Conflict(CONFLICTED_CONCURRENTLY.format(what=what)) from exc
    except StaleDataError as exc:
        raise Conflict(CHANGED_CONCURRENTLY.format(what=what)) from exc
    check_allocated_ids((getattr(obj, "id", None) for obj in new), what)
    sync_sequences(session)


def among_ancestors(session: Session, model: Any, start: int, wanted: int) -> bool:
    """Whether ``wanted`` is ``start`` or one of its ancestors (``parent_id`` upwards).

    One statement, so one snapshot of the tree: a walk of one query a step could read a
    row before another request's change and the next one after it. A stored cycle ends
    the walk (UNION keeps each row once)."""
    rows = model.__table__
    up = select(rows.c.id, rows.c.parent_id).where(rows.c.id == start).cte("up", recursive=True)
    above = rows.alias("above")
    up = up.union(select(above.c.id, above.c.parent_id).join(up, above.c.id == up.c.parent_id))
    return session.scalar(select(up.c.id).where(up.c.id == wanted).limit(1)) is not None


def lock_slugs(session: Session, table: str, scope: str) -> None:
    """Before a create chooses a slug from a title: one such choice at a time per type
    (``table`` "posts") or taxonomy ("terms"), each seeing the slugs stored before it,
    so creates with one title at once get ``-2``, ``-3`` … instead of a conflict.

    Not in a bulk write (an import, the demo): the lock would be held to its end, and
    every create of the API would wait for all of it. When both then choose one slug, a
    request that stores it second takes the next free one; an import, a 409 (as before)."""
    if not holding_back(session):
        hold_lock(session, f"slugs {table} {scope}")


def lock_parents(session: Session, table: str, scope: str) -> None:
    """Before a change of parent is checked for a cycle: one such check at a time per
    type or taxonomy, each seeing the changes of parent stored before it. Checked alone,
    a→b, b→c and c→a each find no cycle; serialized, the last one does."""
    hold_lock(session, f"parents {table} {scope}")


def add_with_free_slug(
    session: Session, obj: Any, what: str, base: str, taken: Callable[[str], bool]
) -> None:
    """Add ``obj``, whose slug was made from ``base``, and flush it. When another request
    stored the same slug meanwhile (both saw it free), take the next free one (``-2`` …)
    and try again, as if the two had come one after the other."""
    # SQLite: a savepoint opens the transaction, which could not write any more once
    # another request committed; take the write lock first (one writer at a time).
    take_write_lock(session)
    for _attempt in range(SLUG_ATTEMPTS - 1):
        try:
            with session.begin_nested():
                session.add(obj)
                flush(session, what)
            return
        except Conflict:
            if not taken(obj.slug):
                raise
            obj.slug = unique_slug(base, taken)
    session.add(obj)
    flush(session, what)


# How many times a create tries the next free slug when others keep taking it.
SLUG_ATTEMPTS = 5


def check_translation(
    languages: list[str],
    group: str | None,
    language: str | None,
    member: Callable[[str, str], int | None],
    own_id: int | None,
    what: str,
    kind: str,
) -> None:
    """A member of a translation group (S-405) has a language, one of the site's
    ``languages`` when it names some, that no other member has (``member``: the id of
    the one that has it, if any): ``what`` a post or a term, ``kind`` its type or
    taxonomy."""
    if language is not None and languages and language not in languages:
        raise Invalid.field(
            "language", f"{language!r} is not one of the site's languages ({', '.join(languages)})"
        )
    if group is None:
        return
    if language is None:
        raise Invalid.field("language", f"a {what} in a translation group needs a language")
    other = member(group, language)
    if other is not None and other != own_id:
        raise Conflict.field(
            "translation_group",
            f"translation group {group!r} already has a {language!r} {kind}: {what} {other}",
        )
