"""Translation groups (S-405): the posts of one type, or the terms of one taxonomy, that
share a ``translation_group`` key, one per language."""

from __future__ import annotations

import functools
from collections.abc import Iterable
from typing import Any

from sqlalchemy import bindparam, select
from sqlalchemy.orm import Session

from ..batches import chunks


def group_members(session: Session, kind: Any, ids: Iterable[int]) -> set[int]:
    """The ids of every member of the translation groups of ``ids``, those included when
    they are in one. ``kind`` is ``Post.type`` or ``Term.taxonomy``: a group is one key
    within one type or taxonomy."""
    found: set[int] = set()
    statement = _members(kind)
    for batch in chunks(sorted(ids)):
        found.update(session.scalars(statement, {"ids": batch}))
    return found


@functools.cache
def _members(kind: Any) -> Any:
    """``group_members``' statement for ``kind``, built once (every write and every
    maintainer pass sends it; building one costs more than running it)."""
    model = kind.class_
    grouped = (
        select(kind, model.translation_group)
        .where(model.id.in_(bindparam("ids", expanding=True)), model.translation_group.is_not(None))
        .subquery()
    )
    return select(model.id).join(
        grouped, (kind == grouped.c[0]) & (model.translation_group == grouped.c[1])
    )
