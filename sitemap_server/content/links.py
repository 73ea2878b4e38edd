"""URLs of stored content: permalinks of posts, author and term archives."""

from __future__ import annotations

from urllib.parse import unquote

from sqlalchemy import select
from sqlalchemy.orm import Session

from ..models import Author, Post, PostType, Taxonomy, Term
from . import permalinks


class Links:
    """Builds absolute URLs for one site, caching the types it looks up."""

    def __init__(self, session: Session, site_url: str) -> None:
        self.session = session
        self.site_url = site_url
        self._types: dict[str, PostType] = {}
        self._taxonomies: dict[str, Taxonomy] = {}

    def _post_type(self, name: str) -> PostType:
        if name not in self._types:
            self._types[name] = self.session.get_one(PostType, name)
        return self._types[name]

    def _ancestor_slugs(self, parent_id: int | None) -> list[str]:
        slugs: list[str] = []
        seen: set[int] = set()
        while parent_id is not None and parent_id not in seen:
            seen.add(parent_id)
            row = self.session.execute(
                select(Post.slug, Post.parent_id).where(Post.id == parent_id)
            ).one_or_none()
            if row is None:
                break
            slugs.append(row.slug)
            parent_id = row.parent_id
        return slugs[::-1]

    def post(self, post: Post) -> str:
        post_type = self._post_type(post.type)
        path = permalinks.post_path(
            post_type.permalink_pattern,
            post_id=post.id,
            slug=post.slug,
            post_type=post.type,
            date=post.published_at or post.modified_at,
            ancestors=self._ancestor_slugs(post.parent_id) if post_type.hierarchical else (),
            explicit_path=post.path,
        )
        return permalinks.absolute(self.site_url, path)

    def holder(self, path: str, own_post: int | None = None) -> str | None:
        """Which object other than post ``own_post`` has the URL ``path`` (a path on the
        site in normal form), in words ("post 12", "term 4", "author 3"), or None: a
        post whose explicit path it is, or whose permalink, term archive or author
        archive it is among those whose slug its last segment could be."""
        url = permalinks.absolute(self.site_url, path)
        other = self.session.scalar(
            select(Post.id).where(Post.path == path, Post.id != (own_post or 0)).limit(1)
        )
        if other is not None:
            return f"post {other}"
        archive = self.session.scalar(select(PostType.name).where(PostType.archive_path == path))
        if archive is not None:
            return f"the archive of post type {archive!r}"
        segments = [unquote(s) for s in path.split("/") if s]
        if not segments:
            return None
        last = segments[-1]
        for post in self.session.scalars(
            select(Post).where(Post.slug == last, Post.id != (own_post or 0)).limit(50)
        ):
            if post.path is None and self.post(post) == url:
                return f"post {post.id}"
        for term in self.session.scalars(select(Term).where(Term.slug == last).limit(50)):
            if self.term(term) == url:
                return f"term {term.id}"
        if len(segments) == 2 and segments[0] == "author":
            author = self.session.scalar(select(Author).where(Author.slug == last))
            if author is not None and self.author(author) == url:
                return f"author {author.id}"
        return None

    def author(self, author: Author) -> str:
        return permalinks.absolute(self.site_url, permalinks.author_path(author.slug))

    def term(self, term: Term) -> str:
        if term.taxonomy not in self._taxonomies:
            self._taxonomies[term.taxonomy] = self.session.get_one(Taxonomy, term.taxonomy)
        taxonomy = self._taxonomies[term.taxonomy]
        slugs = [term.slug]
        seen = {term.id}
        parent_id = term.parent_id if taxonomy.hierarchical else None
        while parent_id is not None and parent_id not in seen:
            seen.add(parent_id)
            parent = self.session.get(Term, parent_id)
            if parent is None:
                break
            slugs.append(parent.slug)
            parent_id = parent.parent_id
        return permalinks.absolute(
            self.site_url, permalinks.term_path(taxonomy.archive_base, slugs[::-1])
        )
