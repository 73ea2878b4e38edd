"""``sitemap_versions``: one row per provider (and ``SITE``) whose number grows with every
change a crawler could see (ETags, caches, the reader), and when the provider is next
due to change by itself (a scheduled post going live)."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import bindparam, select
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import Session

from ..models import SitemapVersion
from ..models.meta import utcnow

# Read by every maintainer pass, built once (building costs more than running it).
STORED_STATE = select(
    SitemapVersion.provider,
    SitemapVersion.due_at,
    SitemapVersion.rendered_with,
    SitemapVersion.built_with,
)


def set_due(session: Session, provider: str, due_at: datetime | None) -> None:
    """Store ``due_at`` without a new version (nothing a crawler sees has changed)."""
    session.execute(
        _upsert(session)
        .values(provider=provider, version=0, changed_at=utcnow(), due_at=due_at)
        .on_conflict_do_update(index_elements=[SitemapVersion.provider], set_={"due_at": due_at})
    )


@dataclass(frozen=True)
class StoredState:
    """Each built provider's stored ``due_at`` (a provider missing here was never built),
    ``rendered_with`` (``rendering.render_key`` of what made its fragments) and
    ``built_with`` (the output settings of that key, as they read)."""

    due: dict[str, datetime | None]
    rendered: dict[str, str | None]
    built: dict[str, dict[str, Any] | None]


def stored_state(session: Session) -> StoredState:
    """The providers' stored state, in one query."""
    rows = session.execute(STORED_STATE).all()
    return StoredState(
        {row.provider: row.due_at for row in rows},
        {row.provider: row.rendered_with for row in rows},
        {row.provider: row.built_with for row in rows},
    )


def set_rendered(
    session: Session, provider: str, rendered_with: str, built_with: dict[str, Any]
) -> None:
    """Every stored fragment of ``provider`` was rendered with ``rendered_with``, from
    the output settings ``built_with``."""
    values = {"rendered_with": rendered_with, "built_with": built_with}
    session.execute(
        _upsert(session)
        .values(provider=provider, version=0, changed_at=utcnow(), **values)
        .on_conflict_do_update(index_elements=[SitemapVersion.provider], set_=values)
    )


def bump(session: Session, *providers: str) -> None:
    """One more change for each of ``providers``, in one call; locks their rows until
    commit on PostgreSQL."""
    if not providers:
        return
    now: datetime = utcnow()
    rows = [{"name": name, "now": now} for name in sorted(set(providers))]
    session.execute(_bump_statement(session.get_bind().dialect.name), rows)


@functools.cache
def _bump_statement(dialect: str) -> Any:
    """``bump``'s statement, built once a dialect (building costs more than running it)."""
    statement = _insert_of(dialect).values(
        provider=bindparam("name"), version=1, changed_at=bindparam("now")
    )
    return statement.on_conflict_do_update(
        index_elements=[SitemapVersion.provider],
        set_={"version": SitemapVersion.version + 1, "changed_at": statement.excluded.changed_at},
    )


def _upsert(session: Session) -> Any:
    """``INSERT … ON CONFLICT`` into sitemap_versions, in the session's dialect."""
    return _insert_of(session.get_bind().dialect.name)


def _insert_of(dialect: str) -> Any:
    module: Any = postgresql if dialect == "postgresql" else sqlite
    return module.insert(SitemapVersion)
