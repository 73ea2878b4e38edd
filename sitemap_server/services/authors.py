"""Authors (S-104)."""

from __future__ import annotations

from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from ..content import object_urls, permalinks
from ..errors import Conflict
from ..models import Author, Post
from .common import (
    apply,
    ensure_free,
    flush,
    get_or_404,
    record,
    with_normal_slug,
)
from .ids import use_explicit_id

FIELDS = ("slug", "name", "noindex")


def _url(author: Author) -> object_urls.Url:
    return object_urls.url_of("author", author.id, permalinks.author_path(author.slug))


def get_author(
    session: Session, author_id: int, for_update: bool = False, for_delete: bool = False
) -> Author:
    return get_or_404(session, Author, author_id, "author", for_update, for_delete)


def create_author(session: Session, data: dict[str, Any]) -> Author:
    data = with_normal_slug(data)
    ensure_free(session, Author.slug, data["slug"], "slug")
    author = Author(noindex=False)
    use_explicit_id(session, Author, author, data)
    apply(author, data, FIELDS)
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
    if "slug" in data:
        object_urls.hold(session, [_url(author)], "slug", written={("author", author.id)})
    record(session, authors={author.id})
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
