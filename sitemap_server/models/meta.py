"""Declarative base, naming convention, the column types shared by every model, and the
site a session belongs to."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from sqlalchemy import BigInteger, DateTime, Integer, MetaData
from sqlalchemy.engine import Dialect
from sqlalchemy.orm import DeclarativeBase, Session
from sqlalchemy.types import TypeDecorator

if TYPE_CHECKING:
    from ..site import Site

# Constraint names must be stable and predictable so that Alembic migrations can refer to
# them on SQLite (batch mode) and PostgreSQL alike.
NAMING_CONVENTION = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}

metadata = MetaData(naming_convention=NAMING_CONVENTION)


class Base(DeclarativeBase):
    metadata = metadata


# A 64-bit id that counts itself: BIGINT on PostgreSQL; on SQLite only INTEGER PRIMARY KEY
# is the rowid (64-bit there too).
BigId = BigInteger().with_variant(Integer(), "sqlite")


class UTCDateTime(TypeDecorator[datetime]):
    """A timezone-aware datetime, stored in UTC.

    PostgreSQL keeps it as ``timestamptz``. SQLite has no time zones, so the value is stored
    as naive UTC text, which also sorts correctly. Either way Python only ever sees aware
    UTC datetimes, and a naive one is refused on the way in: a naive time in a ``lastmod``
    is a bug.
    """

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> Any:
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError(f"naive datetime {value!r} given where an aware one is required")
        value = value.astimezone(UTC)
        if dialect.name == "sqlite":
            return value.replace(tzinfo=None)
        return value

    def process_result_value(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            return value.replace(tzinfo=UTC)
        return value.astimezone(UTC)


class Clock:
    """The application's idea of now. Tests move it forward (``testing.clock``) instead of
    sleeping; everything that depends on the time asks ``utcnow()``."""

    offset = timedelta(0)
    # Set: time stands still at this moment (a test at an edge, such as one second before
    # an expiry, must not depend on how fast the machine runs).
    frozen: datetime | None = None


def utcnow() -> datetime:
    if Clock.frozen is not None:
        return Clock.frozen
    return datetime.now(UTC) + Clock.offset


# Where a session's ``info`` holds the site that made it (``site.Site.sessions``), and
# the Pyramid registry holds the application's site.
SITE_KEY = "sitemap_server.site"


def site_of(session: Session) -> Site:
    """The site (``site.Site``) that made ``session``: its plugins, settings and engine."""
    found = session.info.get(SITE_KEY)
    if found is None:
        raise LookupError(
            "this session was not made by a site: make it with site.Site(settings).sessions()"
        )
    return found
