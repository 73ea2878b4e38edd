"""The content model (SPEC S-101 … S-105): post types, posts, authors, taxonomies, terms."""

from __future__ import annotations

import enum
from datetime import datetime

from sqlalchemy import (
    JSON,
    Boolean,
    CheckConstraint,
    Column,
    ForeignKey,
    Index,
    Integer,
    String,
    Table,
    Text,
    UniqueConstraint,
    text,
)
from sqlalchemy.orm import Mapped, mapped_column, relationship

from .meta import Base, UTCDateTime, metadata

# Protocol limit: sitemaps.org and every crawler reject URLs of 2,048 characters or more.
MAX_URL_LENGTH = 2047
MAX_SLUG_LENGTH = 200
MAX_TITLE_LENGTH = 1000
# A BCP 47 language tag as site owners write them (en, pt-BR, zh-Hant, sr-Latn-RS): what
# hreflang takes. 35 characters hold any tag of a language and its script, region and
# variants (RFC 5646, 4.4.1).
LANGUAGE_TAG = r"[a-z]{2,3}(-[A-Za-z0-9]{1,8})*"
MAX_LANGUAGE_TAG = 35
# A translation group's key: any name the site owner's system gives it (a slug, a number).
MAX_TRANSLATION_GROUP = 64


class PostStatus(enum.StrEnum):
    PUBLISH = "publish"
    DRAFT = "draft"
    PENDING = "pending"
    PRIVATE = "private"
    FUTURE = "future"
    TRASH = "trash"


# The statuses a post is listed with once its publication date has come: ``future`` is
# WordPress's scheduled post, which WordPress's cron publishes at that date (S-201).
LISTED_STATUSES = (PostStatus.PUBLISH, PostStatus.FUTURE)


class Robots(enum.StrEnum):
    """A post's own robots setting; ``default`` defers to its post type."""

    DEFAULT = "default"
    NOINDEX = "noindex"
    INDEX = "index"


def _in(column: str, values: type[enum.StrEnum]) -> str:
    return f"{column} IN ({', '.join(repr(v.value) for v in values)})"


class PostType(Base):
    __tablename__ = "post_types"

    name: Mapped[str] = mapped_column(String(20), primary_key=True)
    label: Mapped[str] = mapped_column(String(200))
    public: Mapped[bool] = mapped_column(Boolean, default=True)
    noindex: Mapped[bool] = mapped_column(Boolean, default=False)
    hierarchical: Mapped[bool] = mapped_column(Boolean, default=False)
    archive_path: Mapped[str | None] = mapped_column(String(MAX_URL_LENGTH))
    permalink_pattern: Mapped[str] = mapped_column(String(255))
    builtin: Mapped[bool] = mapped_column(Boolean, default=False)


# Ids are never given twice: SQLite continues after the largest id ever given, not the
# largest in use (PostgreSQL's sequences always do); a deleted object's id names nothing.
# A migration that copies one of these tables in batch mode must say it again
# (``table_kwargs``): SQLite's reflection does not see it (0013 does).
NEVER_REUSED = {"sqlite_autoincrement": True}


class Author(Base):
    __tablename__ = "authors"
    __table_args__ = NEVER_REUSED

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    slug: Mapped[str] = mapped_column(String(MAX_SLUG_LENGTH), unique=True)
    name: Mapped[str] = mapped_column(String(255))
    noindex: Mapped[bool] = mapped_column(Boolean, default=False)


post_terms = Table(
    "post_terms",
    metadata,
    Column("post_id", ForeignKey("posts.id", ondelete="CASCADE"), primary_key=True),
    Column("term_id", ForeignKey("terms.id", ondelete="CASCADE"), primary_key=True),
    # The primary key serves "terms of a post"; this serves "posts of a term".
    Index("ix_post_terms_term_id_post_id", "term_id", "post_id"),
)


class Post(Base):
    __tablename__ = "posts"
    __table_args__ = (
        # A slug is unique among its siblings (WordPress's rule): the posts of one type
        # with one parent, and those at the top (a unique index of its own: NULL parents
        # all differ in the first). A type that is not hierarchical has no parents: its
        # slugs are unique in it.
        Index("uq_posts_type_parent_slug", "type", "parent_id", "slug", unique=True),
        Index(
            "uq_posts_type_slug_top",
            "type",
            "slug",
            unique=True,
            sqlite_where=text("parent_id IS NULL"),
            postgresql_where=text("parent_id IS NULL"),
        ),
        # A translation group holds one post per language, all of one type (S-405).
        UniqueConstraint(
            "type", "translation_group", "language", name="uq_posts_type_translation_group"
        ),
        # Sitemaps list one type's published posts in id order: this index answers them.
        Index("ix_posts_type_status_id", "type", "status", "id"),
        # The next scheduled post of a type (its sitemap's ``due_at``).
        Index("ix_posts_type_status_published_at", "type", "status", "published_at"),
        CheckConstraint(_in("status", PostStatus), name="status"),
        CheckConstraint(_in("robots", Robots), name="robots"),
        CheckConstraint("parts >= 1", name="parts"),
        NEVER_REUSED,
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    type: Mapped[str] = mapped_column(ForeignKey("post_types.name"))
    title: Mapped[str] = mapped_column(String(MAX_TITLE_LENGTH), default="")
    slug: Mapped[str] = mapped_column(String(MAX_SLUG_LENGTH))
    status: Mapped[str] = mapped_column(String(16), default=PostStatus.DRAFT)
    password: Mapped[str | None] = mapped_column(String(255))
    author_id: Mapped[int | None] = mapped_column(ForeignKey("authors.id"), index=True)
    parent_id: Mapped[int | None] = mapped_column(ForeignKey("posts.id"), index=True)
    content: Mapped[str] = mapped_column(Text, default="")
    featured_image: Mapped[str | None] = mapped_column(String(MAX_URL_LENGTH))
    images: Mapped[list[str]] = mapped_column(JSON, default=list)
    published_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    modified_at: Mapped[datetime] = mapped_column(UTCDateTime, index=True)
    robots: Mapped[str] = mapped_column(String(8), default=Robots.DEFAULT)
    canonical: Mapped[str | None] = mapped_column(String(MAX_URL_LENGTH))
    exclude_from_sitemap: Mapped[bool] = mapped_column(Boolean, default=False)
    parts: Mapped[int] = mapped_column(Integer, default=1)
    path: Mapped[str | None] = mapped_column(String(MAX_URL_LENGTH))
    # Its language, and the group of its translations (S-405): the listed members of a
    # group name each other in their <url> (hreflang).
    language: Mapped[str | None] = mapped_column(String(MAX_LANGUAGE_TAG))
    translation_group: Mapped[str | None] = mapped_column(String(MAX_TRANSLATION_GROUP))

    terms: Mapped[list[Term]] = relationship(
        secondary=post_terms, order_by="Term.id", lazy="selectin"
    )


class ObjectUrl(Base):
    """The URL of every post (and each further part of one), term and author, as a path on
    the site in normal form: its primary key makes one URL, one object (S-107) a property
    of what is stored. ``content.object_urls`` keeps it with every write that moves a URL.
    """

    __tablename__ = "object_urls"
    __table_args__ = (Index("ix_object_urls_owner", "kind", "object_id"),)

    path: Mapped[str] = mapped_column(String(MAX_URL_LENGTH), primary_key=True)
    kind: Mapped[str] = mapped_column(String(8))  # "post", "term" or "author"
    object_id: Mapped[int] = mapped_column(Integer)
    part: Mapped[int] = mapped_column(Integer, default=1)


class ImportedObject(Base):
    """Where an imported post, term or author came from (S-706): the site it was exported
    from (``source``, its URL), its id there (``source_id``: a WordPress post id, a
    taxonomy and term slug, an author's login) and a digest of what was imported, so that
    importing the export again finds it, and changes it only where the export changed.
    A row whose object was deleted here is a new object next time."""

    __tablename__ = "imported_objects"
    __table_args__ = (Index("ix_imported_objects_object", "kind", "object_id"),)

    source: Mapped[str] = mapped_column(String(MAX_URL_LENGTH), primary_key=True)
    kind: Mapped[str] = mapped_column(String(8), primary_key=True)  # "post", "term", "author"
    source_id: Mapped[str] = mapped_column(String(255), primary_key=True)
    object_id: Mapped[int] = mapped_column(Integer)
    guid: Mapped[str | None] = mapped_column(String(MAX_URL_LENGTH))
    digest: Mapped[str] = mapped_column(String(64))


class Taxonomy(Base):
    __tablename__ = "taxonomies"

    name: Mapped[str] = mapped_column(String(32), primary_key=True)
    label: Mapped[str] = mapped_column(String(200))
    public: Mapped[bool] = mapped_column(Boolean, default=True)
    noindex: Mapped[bool] = mapped_column(Boolean, default=False)
    hierarchical: Mapped[bool] = mapped_column(Boolean, default=False)
    archive_base: Mapped[str] = mapped_column(String(200))
    builtin: Mapped[bool] = mapped_column(Boolean, default=False)


class Term(Base):
    __tablename__ = "terms"
    __table_args__ = (
        UniqueConstraint("taxonomy", "slug", name="uq_terms_taxonomy_slug"),
        UniqueConstraint(
            "taxonomy", "translation_group", "language", name="uq_terms_taxonomy_translation_group"
        ),
        NEVER_REUSED,
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    taxonomy: Mapped[str] = mapped_column(ForeignKey("taxonomies.name"))
    slug: Mapped[str] = mapped_column(String(MAX_SLUG_LENGTH))
    name: Mapped[str] = mapped_column(String(255))
    parent_id: Mapped[int | None] = mapped_column(ForeignKey("terms.id"), index=True)
    description: Mapped[str] = mapped_column(Text, default="")
    noindex: Mapped[bool] = mapped_column(Boolean, default=False)
    canonical: Mapped[str | None] = mapped_column(String(MAX_URL_LENGTH))
    language: Mapped[str | None] = mapped_column(String(MAX_LANGUAGE_TAG))
    translation_group: Mapped[str | None] = mapped_column(String(MAX_TRANSLATION_GROUP))
