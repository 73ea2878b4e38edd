"""URLs of stored content: permalinks of posts, author and term archives."""

from __future__ import annotations

from datetime import tzinfo

from sqlalchemy import select
from sqlalchemy.orm import Session

from ..models import Author, Post, PostType, Taxonomy, Term
from ..models.site import zone_of
from . import permalinks


class Links:
    """Builds absolute URLs for one site, caching the types it looks up."""

    def __init__(self, session: Session, site_url: str, zone: tzinfo | None = None) -> None:
        self.session = session
        self.site_url = site_url
        self._zone = zone
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

    @property
    def zone(self) -> tzinfo:
        """The site's time zone: the dates in permalinks are local to it."""
        if self._zone is None:
            self._zone = zone_of(self.session)
        return self._zone

    def post(self, post: Post) -> str:
        return permalinks.absolute(self.site_url, self.post_path(post))

    def post_path(self, post: Post) -> str:
        """The permalink of ``post`` as a path on the site."""
        post_type = self._post_type(post.type)
        return permalinks.post_path(
            post_type.permalink_pattern,
            post_id=post.id,
            slug=post.slug,
            post_type=post.type,
            date=post.published_at or post.modified_at,
            ancestors=self._ancestor_slugs(post.parent_id) if post_type.hierarchical else (),
            explicit_path=post.path,
            zone=self.zone,
        )

    def hierarchical(self, post_type: str) -> bool:
        return self._post_type(post_type).hierarchical

    def author(self, author: Author) -> str:
        return permalinks.absolute(self.site_url, permalinks.author_path(author.slug))

    def term(self, term: Term) -> str:
        return permalinks.absolute(self.site_url, self.term_path(term))

    def term_path(self, term: Term) -> str:
        """The archive of ``term`` as a path on the site."""
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
        return permalinks.term_path(taxonomy.archive_base, slugs[::-1])
