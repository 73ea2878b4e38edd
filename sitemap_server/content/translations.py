"""Translation groups (S-405): the posts of one type, or the terms of one taxonomy, that
share a ``translation_group`` key, one per language."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from ..sitemaps.providers import chunks


def group_members(session: Session, kind: Any, ids: Iterable[int]) -> set[int]:
    """The ids of every member of the translation groups of ``ids``, those included when
    they are in one. ``kind`` is ``Post.type`` or ``Term.taxonomy``: a group is one key
    within one type or taxonomy."""
    model = kind.class_
    found: set[int] = set()
    for batch in chunks(sorted(ids)):
        grouped = (
            select(kind, model.translation_group)
            .where(model.id.in_(batch), model.translation_group.is_not(None))
            .subquery()
        )
        found.update(
            session.scalars(
                select(model.id).join(
                    grouped, (kind == grouped.c[0]) & (model.translation_group == grouped.c[1])
                )
            )
        )
    return found
