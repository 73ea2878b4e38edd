"""URLs of stored content: permalinks of posts, author and term archives."""

from __future__ import annotations

from datetime import tzinfo

from sqlalchemy import select
from sqlalchemy.orm import Session

from ..models import Author, Post, PostType, Taxonomy, Term
from ..models.site import zone_of
from . import object_urls, permalinks


class Links:
    """Builds absolute URLs for one site, caching the types it looks up."""

    def __init__(self, session: Session, site_url: str, zone: tzinfo | None = None) -> None:
        self.session = session
        self.site_url = site_url
        self._zone = zone
        self._types: dict[str, PostType] = {}
        self._fields: dict[str, set[str]] = {}  # pattern -> the fields it holds
        self._taxonomies: dict[str, Taxonomy] = {}
        self._author_slugs: dict[int, str] = {}
        # post id -> its ``{category}`` slugs, for the posts ``prefetch_categories`` read.
        self._categories: dict[int, list[str]] = {}

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
        pattern = post_type.permalink_pattern
        if pattern not in self._fields:
            self._fields[pattern] = permalinks.fields_of(pattern)
        fields = self._fields[pattern] if not post.path else set()
        return permalinks.post_path(
            pattern,
            post_id=post.id,
            slug=post.slug,
            post_type=post.type,
            date=post.published_at or post.modified_at,
            ancestors=self._ancestor_slugs(post.parent_id) if post_type.hierarchical else (),
            explicit_path=post.path,
            zone=self.zone,
            author=self._author_slug(post.author_id) if "author" in fields else "",
            category=self._category(post.id) if "category" in fields else (),
        )

    def _author_slug(self, author_id: int | None) -> str:
        if author_id is None:
            return ""
        if author_id not in self._author_slugs:
            slug = self.session.scalar(select(Author.slug).where(Author.id == author_id))
            self._author_slugs[author_id] = slug or ""
        return self._author_slugs[author_id]

    def prefetch_categories(self, post_ids: list[int]) -> None:
        """Read the ``{category}`` of ``post_ids`` at once (a sitemap's chunk of posts),
        in place of those read before."""
        found = object_urls.first_categories(self.session, post_ids)
        self._categories = {post_id: found.get(post_id, []) for post_id in post_ids}

    def _category(self, post_id: int) -> list[str]:
        """The slugs of the post's first category (the lowest id) and its parents."""
        if post_id not in self._categories:
            return object_urls.first_categories(self.session, [post_id]).get(post_id, [])
        return self._categories[post_id]

    def hierarchical(self, post_type: str) -> bool:
        return self._post_type(post_type).hierarchical

    def author(self, author: Author) -> str:
        return permalinks.absolute(self.site_url, permalinks.author_path(author.slug))

    def term(self, term: Term) -> str:
        return permalinks.absolute(self.site_url, self.term_path(term))

    def term_path(self, term: Term) -> str:
        """The archive of ``term`` as a path on the site."""
        taxonomy = self._taxonomy(term.taxonomy)
        return permalinks.term_path(taxonomy.archive_base, self._lineage(term))

    def _taxonomy(self, name: str) -> Taxonomy:
        if name not in self._taxonomies:
            self._taxonomies[name] = self.session.get_one(Taxonomy, name)
        return self._taxonomies[name]

    def _lineage(self, term: Term) -> list[str]:
        """The slugs of ``term``'s ancestors and its own, outermost first (its own alone
        in a taxonomy that is not hierarchical)."""
        slugs = [term.slug]
        seen = {term.id}
        parent_id = term.parent_id if self._taxonomy(term.taxonomy).hierarchical else None
        while parent_id is not None and parent_id not in seen:
            seen.add(parent_id)
            parent = self.session.get(Term, parent_id)
            if parent is None:
                break
            slugs.append(parent.slug)
            parent_id = parent.parent_id
        return slugs[::-1]
