"""Posts of every type (S-102).

``prepare_post`` holds every rule about what a post may look like; ``create_post`` (the API,
``seed-demo``) and the bulk importer (which inserts prepared rows in batches) both use it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import datetime
from typing import Any

from sqlalchemy import ColumnElement, and_, delete, insert, select, update
from sqlalchemy.orm import Session, aliased

from ..batches import chunks
from ..content import object_urls
from ..content.links import Links
from ..content.slugs import slugify, unique_slug
from ..content.translations import group_members
from ..content.trees import descendants
from ..errors import Conflict, FieldProblem, Invalid
from ..models import Author, Post, PostStatus, PostType, SiteSettings, Term, post_terms
from ..models.meta import utcnow
from ..models.site import ExcludedPost
from ..sitemaps.changes import note
from . import common
from .common import (
    add_with_free_slug,
    among_ancestors,
    apply,
    existing,
    flush,
    get_or_404,
    lock_parents,
    lock_slugs,
    normal_site_path,
    parse_datetime,
    parse_modified,
    record,
    with_normal_slug,
)
from .ids import insert_with_ids, use_explicit_id

FIELDS = (
    "title",
    "status",
    "password",
    "content",
    "featured_image",
    "images",
    "robots",
    "canonical",
    "exclude_from_sitemap",
    "parts",
    "path",
    "language",
    "translation_group",
)
# Statuses whose posts have a publication date even when the client leaves it out.
DATED_STATUSES = {PostStatus.PUBLISH, PostStatus.FUTURE, PostStatus.PRIVATE}
# What a post's URLs are made of: a 409 for a taken URL names the first one a PATCH has.
URL_FIELDS = ("path", "slug", "parent", "published_at", "parts", "modified_at", "author", "terms")


class Lookups:
    """Reference checks for one transaction, cached so an import does not repeat them.

    Everything is answered from the database on first use; ``remember_*`` records what the
    current transaction created, so later lines of an import can refer to it.
    """

    def __init__(self, session: Session) -> None:
        self.session = session
        self._types: dict[str, PostType | None] = {}
        self._authors: set[int] = set()
        self._terms: set[int] = set()
        self._post_types: dict[int, str] = {}  # post id -> its type
        self._no_posts: set[int] = set()  # ids known to be no post's (``prefetch_posts``)
        # (type, parent) -> slugs known to be taken, and known to be free (``siblings``)
        self._slugs: dict[tuple[str, int | None], set[str]] = {}
        self._free_slugs: dict[tuple[str, int | None], set[str]] = {}
        # (type, translation group, language) -> the post that has it (None: not yet known)
        self._translations: dict[tuple[str, str, str], int | None] = {}
        self._languages: list[str] | None = None

    def forget(self) -> None:
        """Forget what the database can tell again (an import, after each batch: its memory
        stays the same whatever the size of the import); the types and languages stay."""
        for known in (self._authors, self._terms, self._post_types, self._no_posts):
            known.clear()
        for by_scope in (self._slugs, self._free_slugs, self._translations):
            by_scope.clear()

    def post_type(self, name: str) -> PostType | None:
        if name not in self._types:
            self._types[name] = self.session.get(PostType, name)
        return self._types[name]

    def author_exists(self, author_id: int) -> bool:
        if author_id not in self._authors and self.session.get(Author, author_id) is not None:
            self._authors.add(author_id)
        return author_id in self._authors

    def missing_terms(self, term_ids: Iterable[int]) -> list[int]:
        unknown = [t for t in term_ids if t not in self._terms]
        if unknown:
            found = self.session.scalars(select(Term.id).where(Term.id.in_(unknown)))
            self._terms.update(found)
        return [t for t in unknown if t not in self._terms]

    def prefetch_references(self, authors: Iterable[int], terms: Iterable[int]) -> None:
        """Learn in one query each which of ``authors`` and ``terms`` exist (the importer,
        per batch: what its posts name)."""
        self._authors |= existing(self.session, Author.id, set(authors) - self._authors)
        self._terms |= existing(self.session, Term.id, set(terms) - self._terms)

    def type_of_post(self, post_id: int) -> str | None:
        if post_id not in self._post_types:
            if post_id in self._no_posts:
                return None
            found = self.session.scalar(select(Post.type).where(Post.id == post_id))
            if found is None:
                return None
            self._post_types[post_id] = found
        return self._post_types[post_id]

    def prefetch_posts(self, post_ids: Iterable[int]) -> None:
        """Learn in one query which of ``post_ids`` are posts, and of what type (the
        importer, per batch: the ids its posts ask for, and their parents)."""
        wanted = {i for i in post_ids if i not in self._post_types and i not in self._no_posts}
        for batch in chunks(sorted(wanted)):
            query = select(Post.id, Post.type).where(Post.id.in_(batch))
            found = {i: t for i, t in self.session.execute(query)}
            self._post_types.update(found)
            self._no_posts.update(i for i in batch if i not in found)

    def slug_taken(self, post_type: str, slug: str, parent: int | None = None) -> bool:
        """Whether a post of ``post_type`` under ``parent`` (``siblings``) has ``slug``."""
        scope = (post_type, parent)
        if slug in self._slugs.setdefault(scope, set()):
            return True
        if slug in self._free_slugs.get(scope, ()):
            return False
        found = self.session.scalar(
            select(Post.id).where(siblings(post_type, parent), Post.slug == slug).limit(1)
        )
        if found is not None:
            self._slugs[scope].add(slug)
        return found is not None

    def prefetch_slugs(self, post_type: str, parent: int | None, slugs: Iterable[str]) -> None:
        """Learn in one query which of ``slugs`` are taken (the importer, per batch)."""
        scope = (post_type, parent)
        wanted = set(slugs) - self._slugs.setdefault(scope, set())
        if not wanted:
            return
        taken = existing(self.session, Post.slug, wanted, siblings(post_type, parent))
        self._slugs[scope] |= taken
        self._free_slugs.setdefault(scope, set()).update(wanted - taken)

    def translation_of(self, post_type: str, group: str, language: str) -> int | None:
        """The post of ``post_type`` that is the ``language`` member of ``group``, if any."""
        key = (post_type, group, language)
        if key not in self._translations:
            self._translations[key] = self.session.scalar(
                select(Post.id).where(
                    Post.type == post_type,
                    Post.translation_group == group,
                    Post.language == language,
                )
            )
        return self._translations[key]

    def site_languages(self) -> list[str]:
        if self._languages is None:
            settings = self.session.get(SiteSettings, 1)
            self._languages = list(settings.languages or []) if settings is not None else []
        return self._languages

    def remember_translation(
        self, post_type: str, group: str | None, language: str | None, post_id: int
    ) -> None:
        if group is not None and language is not None:
            self._translations[post_type, group, language] = post_id

    def remember_post(
        self, post_type: str, slug: str, post_id: int | None, parent: int | None = None
    ) -> None:
        self._slugs.setdefault((post_type, parent), set()).add(slug)
        self._free_slugs.get((post_type, parent), set()).discard(slug)
        if post_id is not None:
            self._post_types[post_id] = post_type
            self._no_posts.discard(post_id)


def siblings(post_type: str, parent: int | None) -> ColumnElement[bool]:
    """The posts among which a slug must be unique: WordPress's rule, the posts of
    ``post_type`` with the same parent (``None``: at the top; the only place of a post of
    a type that is not hierarchical). Two unique indexes hold it (``models.content``)."""
    at = Post.parent_id.is_(None) if parent is None else Post.parent_id == parent
    return and_(Post.type == post_type, at)


def _taken_message(slug: str, post_type: PostType, parent: int | None) -> str:
    where = f" under post {parent}" if post_type.hierarchical and parent is not None else ""
    if post_type.hierarchical and parent is None:
        where = " at the top level"
    return f"{slug!r} is already taken by another {post_type.name}{where}"


def hold_urls(session: Session, post: Post, field: str | None, moved: bool = False) -> None:
    """Give ``post`` its URLs (``object_urls``), and with ``moved`` (its slug or parent
    changed) its descendants theirs, which contain its slug: a 409 on ``field`` when one
    is another object's."""
    links = Links(session, "")  # paths only
    urls = object_urls.urls_of_post(links.post_path(post), post)
    if moved and links.hierarchical(post.type):
        urls += object_urls.post_urls(session, ids=descendants(session, {post.id}))
    object_urls.hold(session, urls, field, written={("post", post.id)})


def _check_parent(
    lookups: Lookups, post_type: PostType, parent_id: int | None, post_id: int | None
) -> None:
    if parent_id is None:
        return
    if not post_type.hierarchical:
        raise Invalid.field("parent", f"post type {post_type.name!r} is not hierarchical")
    parent_type = lookups.type_of_post(parent_id)
    if parent_type is None:
        raise Invalid.field("parent", f"unknown post {parent_id}")
    if parent_type != post_type.name:
        raise Invalid.field(
            "parent", f"post {parent_id} is a {parent_type!r}, not a {post_type.name!r}"
        )
    if post_id is None:
        return
    # An existing post: its new parent must not be the post itself or one of its descendants.
    if among_ancestors(lookups.session, Post, parent_id, post_id):
        raise Invalid.field("parent", "a post cannot be its own ancestor")


def check_translation(
    lookups: Lookups,
    post_type: str,
    group: str | None,
    language: str | None,
    post_id: int | None,
) -> None:
    def member(group: str, language: str) -> int | None:
        return lookups.translation_of(post_type, group, language)

    common.check_translation(
        lookups.site_languages(), group, language, member, post_id, "post", post_type
    )


def _check_references(lookups: Lookups, data: dict[str, Any]) -> None:
    if data.get("author") is not None and not lookups.author_exists(data["author"]):
        raise Invalid.field("author", f"unknown author {data['author']}")
    if data.get("terms"):
        missing = lookups.missing_terms(data["terms"])
        if missing:
            problems = [
                FieldProblem(f"terms/{i}", f"unknown term {t}")
                for i, t in enumerate(data["terms"])
                if t in missing
            ]
            raise Invalid(f"unknown terms {missing}", problems)


def base_slug(data: dict[str, Any]) -> str:
    """The slug a new post gets from its title when the client gives none."""
    return slugify(data.get("title", ""), fallback=data["type"].replace("_", "-"))


def prepare_post(
    lookups: Lookups, data: dict[str, Any], now: datetime | None = None
) -> tuple[dict[str, Any], list[int]]:
    """Check a new post and return its row and its term ids (nothing is written)."""
    data = with_normal_slug(data)
    now = now or utcnow()
    post_type = lookups.post_type(data["type"])
    if post_type is None:
        raise Invalid.field("type", f"unknown post type {data['type']!r}")
    # Also catches an id given twice in one import: earlier lines are remembered.
    if "id" in data and lookups.type_of_post(data["id"]) is not None:
        raise Conflict.field("id", f"{data['id']} is already taken")
    _check_references(lookups, data)
    _check_parent(lookups, post_type, data.get("parent"), None)
    group, language = data.get("translation_group"), data.get("language")
    check_translation(lookups, post_type.name, group, language, data.get("id"))

    parent = data.get("parent")
    if "slug" in data:
        if lookups.slug_taken(post_type.name, data["slug"], parent):
            raise Conflict.field("slug", _taken_message(data["slug"], post_type, parent))
        slug = data["slug"]
    else:
        slug = unique_slug(base_slug(data), lambda s: lookups.slug_taken(post_type.name, s, parent))

    status = data.get("status", PostStatus.DRAFT)
    published_at = parse_datetime(data.get("published_at"), "published_at")
    if published_at is None and status in DATED_STATUSES:
        published_at = now
    modified_at = parse_modified(data.get("modified_at")) or published_at or now

    row: dict[str, Any] = {
        "type": post_type.name,
        "slug": slug,
        "status": status,
        "title": data.get("title", ""),
        "password": data.get("password") or None,
        "author_id": data.get("author"),
        "parent_id": data.get("parent"),
        "content": data.get("content", ""),
        "featured_image": data.get("featured_image"),
        "images": data.get("images", []),
        "published_at": published_at,
        "modified_at": modified_at,
        "robots": data.get("robots", "default"),
        "canonical": data.get("canonical"),
        "exclude_from_sitemap": data.get("exclude_from_sitemap", False),
        "parts": data.get("parts", 1),
        "path": normal_site_path(data.get("path"), "path"),
        "language": language,
        "translation_group": group,
    }
    if "id" in data:
        row["id"] = data["id"]
    lookups.remember_post(post_type.name, slug, data.get("id"), parent)
    # An import line after this one may not take the same place in the group (the id is
    # not known yet for a new post: any number but a real id says "taken").
    lookups.remember_translation(post_type.name, group, language, data.get("id", 0))
    return row, list(data.get("terms", []))


def get_post(
    session: Session, post_id: int, for_update: bool = False, for_delete: bool = False
) -> Post:
    return get_or_404(session, Post, post_id, "post", for_update, for_delete)


def create_post(session: Session, data: dict[str, Any], lookups: Lookups | None = None) -> Post:
    data = with_normal_slug(data)
    lookups = lookups or Lookups(session)
    if "slug" not in data:
        lock_slugs(session, "posts", data["type"])
    row, term_ids = prepare_post(lookups, data)
    post = Post()
    use_explicit_id(session, Post, post, row)
    apply(post, row, row.keys() - {"id"})
    if term_ids:
        post.terms = list(
            session.scalars(select(Term).where(Term.id.in_(term_ids)).order_by(Term.id))
        )
    if "slug" in data:
        session.add(post)
        flush(session, "post")
    else:
        taken = _slug_taken(session, post.type, post.parent_id)
        add_with_free_slug(session, post, "post", base_slug(data), taken)
    hold_urls(session, post, "path" if post.path else "slug")
    record(session, posts={post.id}, authors={post.author_id}, terms=set(term_ids))
    return post


def _slug_taken(session: Session, post_type: str, parent: int | None) -> Callable[[str], bool]:
    def taken(slug: str) -> bool:
        query = select(Post.id).where(siblings(post_type, parent), Post.slug == slug).limit(1)
        return session.scalar(query) is not None

    return taken


def update_post(session: Session, post: Post, data: dict[str, Any]) -> Post:
    data = with_normal_slug(data)
    if data.get("parent") is not None:
        lock_parents(session, "posts", post.type)  # first: see update_term
    lookups = Lookups(session)
    _check_references(lookups, data)
    # What the post was linked to before counts as changed too (author and term dates,
    # the translations that named it).
    translations = (
        set() if post.translation_group is None else group_members(session, Post.type, {post.id})
    )
    note(
        session,
        posts=translations | {post.id},
        authors={post.author_id},
        terms={t.id for t in post.terms},
    )
    # A PATCH that leaves the language and the group alone cannot break them (and is not
    # refused because the site's languages changed since).
    if "translation_group" in data or "language" in data:
        check_translation(
            lookups,
            post.type,
            data.get("translation_group", post.translation_group),
            data.get("language", post.language),
            post.id,
        )
    slug, parent = data.get("slug", post.slug), data.get("parent", post.parent_id)
    if (slug, parent) != (post.slug, post.parent_id):
        post_type = session.get_one(PostType, post.type)
        if "parent" in data:
            _check_parent(lookups, post_type, parent, post.id)
        # Its new place must be free: the slug among its new siblings (a move under a
        # parent with a child of the same slug would give two posts one URL).
        with session.no_autoflush:
            other = session.scalar(
                select(Post.id)
                .where(siblings(post.type, parent), Post.slug == slug, Post.id != post.id)
                .limit(1)
            )
        if other is not None:
            field = "slug" if "slug" in data else "parent"
            raise Conflict.field(field, f"{_taken_message(slug, post_type, parent)} (post {other})")
        post.parent_id, post.slug = parent, slug
    if "author" in data:
        post.author_id = data["author"]
    if "published_at" in data:
        post.published_at = parse_datetime(data["published_at"], "published_at")
    if "terms" in data:
        post.terms = list(
            session.scalars(select(Term).where(Term.id.in_(data["terms"])).order_by(Term.id))
        )
    changes = {k: v for k, v in data.items() if k in FIELDS}
    if changes.get("path") is not None:
        changes["path"] = normal_site_path(changes["path"], "path")
    if "password" in changes:
        changes["password"] = changes["password"] or None
    apply(post, changes, FIELDS)
    if post.published_at is None and post.status in DATED_STATUSES:
        post.published_at = utcnow()
    # Saving a post is a modification unless the client says when it happened.
    post.modified_at = parse_modified(data.get("modified_at")) or utcnow()
    flush(session, "post")
    moved = "slug" in data or "parent" in data
    url_field = next((f for f in URL_FIELDS if f in data), None)
    # A draft without a date takes the year of its last change (``Links.post``), which
    # this write moves; other posts' URLs move only with the URL's fields.
    if url_field is not None or post.published_at is None:
        hold_urls(session, post, url_field, moved)
    record(session, posts={post.id}, authors={post.author_id}, terms={t.id for t in post.terms})
    return post


def delete_post(session: Session, post: Post) -> None:
    """Children move up to the post's parent; settings that named the post are cleared."""
    # The children's URLs lose the post's slug: they (and their descendants) move too.
    children = set(session.scalars(select(Post.id).where(Post.parent_id == post.id)))
    note(
        session,
        posts={post.id, *children} | group_members(session, Post.type, {post.id}),
        authors={post.author_id},
        terms={t.id for t in post.terms},
    )
    _check_children_can_move_up(session, post)
    session.execute(update(Post).where(Post.parent_id == post.id).values(parent_id=post.parent_id))
    # Settings that name the post forget it (a later post given its id explicitly, by an
    # import, inherits nothing).
    session.execute(delete(ExcludedPost).where(ExcludedPost.post_id == post.id))
    settings = session.get(SiteSettings, 1)
    if settings is not None:
        if settings.front_page_id == post.id:
            settings.front_page_id = None
        if settings.posts_page_id == post.id:
            settings.posts_page_id = None
    # The ORM removes the post's term links itself; deleting them here first as well made
    # it find nothing to delete and fail (StaleDataError, a 500).
    session.delete(post)
    flush(session, "post")
    object_urls.release(session, "post", {post.id})
    if children:
        moved = children | descendants(session, children)
        object_urls.hold(session, object_urls.post_urls(session, ids=moved))
    record(session)


def _check_children_can_move_up(session: Session, post: Post) -> None:
    """The children of a deleted post move up beside it: none may have the slug of a post
    already there (WordPress's rule of siblings; a 409 naming both)."""
    child = aliased(Post)
    clash = session.execute(
        select(child.id, child.slug, Post.id)
        .join(Post, and_(siblings(post.type, post.parent_id), Post.slug == child.slug))
        .where(child.parent_id == post.id, Post.id != post.id)
        .limit(1)
    ).first()
    if clash is not None:
        raise Conflict(
            f"deleting post {post.id} would move its child, post {clash[0]}, beside post "
            f"{clash[2]}, which has the same slug {clash[1]!r}: change one of the slugs first"
        )


def insert_prepared(session: Session, rows: list[dict[str, Any]], terms: list[list[int]]) -> None:
    """Insert prepared posts in one statement per table (the bulk importer)."""
    insert_with_ids(session, Post, rows, "post")
    links: list[dict[str, int]] = []
    for row, term_ids in zip(rows, terms, strict=True):
        links.extend({"post_id": row["id"], "term_id": t} for t in term_ids)
    if links:
        session.execute(insert(post_terms), links)
