"""Authors (S-104)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from ..content import object_urls, permalinks
from ..errors import Conflict
from ..models import Author, Post
from .common import (
    apply,
    ensure_free,
    existing,
    flush,
    get_or_404,
    record,
    with_normal_slug,
)
from .ids import insert_with_ids, use_explicit_id

FIELDS = ("slug", "name", "noindex")


def _url(author: Author) -> object_urls.Url:
    return object_urls.url_of("author", author.id, permalinks.author_path(author.slug))


def get_author(
    session: Session, author_id: int, for_update: bool = False, for_delete: bool = False
) -> Author:
    return get_or_404(session, Author, author_id, "author", for_update, for_delete)


class AuthorLookups:
    """Which author slugs and ids are taken, for one transaction, cached so that an
    import's batches do not ask again; ``remember`` records what it creates."""

    def __init__(self, session: Session) -> None:
        self.session = session
        self._slugs: set[str] = set()  # taken
        self._free_slugs: set[str] = set()
        self._ids: set[int] = set()
        self._free_ids: set[int] = set()

    def forget(self) -> None:
        """Forget what the database can tell again (``Lookups.forget``)."""
        for known in (self._slugs, self._free_slugs, self._ids, self._free_ids):
            known.clear()

    def prefetch(self, slugs: Iterable[str], ids: Iterable[int]) -> None:
        """Learn in one query a batch which of ``slugs`` and ``ids`` are taken."""
        wanted_slugs = set(slugs) - self._slugs - self._free_slugs
        taken_slugs = existing(self.session, Author.slug, wanted_slugs)
        self._slugs |= taken_slugs
        self._free_slugs |= wanted_slugs - taken_slugs
        wanted_ids = set(ids) - self._ids - self._free_ids
        taken_ids = existing(self.session, Author.id, wanted_ids)
        self._ids |= taken_ids
        self._free_ids |= wanted_ids - taken_ids

    def slug_taken(self, slug: str) -> bool:
        if slug not in self._slugs and slug not in self._free_slugs:
            self.prefetch([slug], [])
        return slug in self._slugs

    def id_taken(self, author_id: int) -> bool:
        if author_id not in self._ids and author_id not in self._free_ids:
            self.prefetch([], [author_id])
        return author_id in self._ids

    def remember(self, row: dict[str, Any]) -> None:
        self._slugs.add(row["slug"])
        self._free_slugs.discard(row["slug"])
        if "id" in row:
            self._ids.add(row["id"])
            self._free_ids.discard(row["id"])


def prepare_author(lookups: AuthorLookups, data: dict[str, Any]) -> dict[str, Any]:
    """Check a new author and return its row (nothing is written): the rules of
    ``create_author`` and of the importer's batches."""
    data = with_normal_slug(data)
    if lookups.slug_taken(data["slug"]):
        raise Conflict.field("slug", f"{data['slug']!r} is already taken")
    if "id" in data and lookups.id_taken(data["id"]):
        raise Conflict.field("id", f"{data['id']} is already taken")
    row = {"slug": data["slug"], "name": data["name"], "noindex": data.get("noindex", False)}
    if "id" in data:
        row["id"] = data["id"]
    lookups.remember(row)
    return row


def insert_prepared(session: Session, rows: list[dict[str, Any]]) -> None:
    """Insert prepared authors (``prepare_author``) in one statement (the bulk importer),
    each row given its id; their URLs and changes are the caller's."""
    insert_with_ids(session, Author, rows, "author")


def create_author(session: Session, data: dict[str, Any]) -> Author:
    row = prepare_author(AuthorLookups(session), data)
    author = Author()
    use_explicit_id(session, Author, author, row)
    apply(author, row, FIELDS)
    session.add(author)
    flush(session, "author")
    object_urls.hold(session, [_url(author)], "slug", written={("author", author.id)})
    record(session, authors={author.id})
    return author


def update_author(session: Session, author: Author, data: dict[str, Any]) -> Author:
    data = with_normal_slug(data)
    if "slug" in data and data["slug"] != author.slug:
        ensure_free(session, Author.slug, data["slug"], "slug")
    apply(author, data, FIELDS)
    flush(session, "author")
    posts: set[int] = set()
    if "slug" in data:
        # The URLs of its posts that hold it (``{author}``) move too.
        posts = object_urls.posts_using(session, "author", Post.author_id == author.id)
        urls = [_url(author), *object_urls.post_urls(session, ids=posts)]
        object_urls.hold(session, urls, "slug", written={("author", author.id)})
    record(session, authors={author.id}, posts=posts)
    return author


def delete_author(session: Session, author: Author) -> None:
    count = session.scalar(select(func.count()).where(Post.author_id == author.id))
    if count:
        raise Conflict(
            f"author {author.id} still has {count} posts; give them another author first"
        )
    session.delete(author)
    flush(session, "author")
    object_urls.release(session, "author", {author.id})
    record(session, authors={author.id})
