"""The trees of the content: pages under pages, terms under terms.

A post's URL holds its ancestors' slugs and a term's its ancestors' (``permalinks``), so a
change of a parent moves every descendant: the services, the providers and ``explain``
ask for them here.
"""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.orm import Session

from ..batches import chunks
from ..models import Post, Term


def descendants(session: Session, ids: set[int]) -> set[int]:
    """The children of the posts ``ids``, their children and so on (their URLs contain
    their ancestors' slugs, so a change of a parent moves them)."""
    found: set[int] = set()
    frontier = set(ids)
    while frontier:
        children: set[int] = set()
        for batch in chunks(sorted(frontier)):
            children.update(session.scalars(select(Post.id).where(Post.parent_id.in_(batch))))
        frontier = children - found - ids
        found |= frontier
    return found


def term_subtree(session: Session, taxonomy: str, term_id: int) -> list[int]:
    """The term and all its descendants in ``taxonomy`` (a hierarchical one)."""
    children: dict[int | None, list[int]] = {}
    for row in session.execute(select(Term.id, Term.parent_id).where(Term.taxonomy == taxonomy)):
        children.setdefault(row.parent_id, []).append(row.id)
    return subtree(term_id, children)


def subtree(term_id: int, children: dict[int | None, list[int]]) -> list[int]:
    """The term and all its descendants, ``children`` naming each term's children."""
    found, frontier = [term_id], [term_id]
    while frontier:
        frontier = [k for t in frontier for k in children.get(t, []) if k not in found]
        found.extend(frontier)
    return found
