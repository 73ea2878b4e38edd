"""What a write changed, collected during a transaction and handed to the hooks."""

from __future__ import annotations

from dataclasses import dataclass, field

from sqlalchemy.orm import Session

PENDING = "sitemap_server.pending_changes"


@dataclass
class ContentChanges:
    """Ids of what was created, changed or deleted; ``everything`` for site-wide changes."""

    posts: set[int] = field(default_factory=set)
    authors: set[int] = field(default_factory=set)
    terms: set[int] = field(default_factory=set)
    everything: bool = False
    # Only site-wide answers changed (privacy, title): a new site version, no entry moves.
    site: bool = False
    # Every sitemap is new to search engines: the site stopped being private, or moved.
    whole_site: bool = False

    def __bool__(self) -> bool:
        return (
            self.everything
            or self.site
            or self.whole_site
            or bool(self.posts or self.authors or self.terms)
        )

    def merge(self, other: ContentChanges) -> None:
        self.posts |= other.posts
        self.authors |= other.authors
        self.terms |= other.terms
        self.everything |= other.everything
        self.site |= other.site
        self.whole_site |= other.whole_site


def record(
    session: Session,
    *,
    posts: set[int] | set[int | None] | None = None,
    authors: set[int] | set[int | None] | None = None,
    terms: set[int] | set[int | None] | None = None,
    everything: bool = False,
    site: bool = False,
    whole_site: bool = False,
) -> None:
    """Note a change; it is handed to ``sitemap_content_changed`` at the next service flush."""
    pending: ContentChanges = session.info.setdefault(PENDING, ContentChanges())
    pending.merge(
        ContentChanges(
            posts={p for p in posts or () if p is not None},
            authors={a for a in authors or () if a is not None},
            terms={t for t in terms or () if t is not None},
            everything=everything,
            site=site,
            whole_site=whole_site,
        )
    )


def take(session: Session) -> ContentChanges:
    return session.info.pop(PENDING, None) or ContentChanges()


@dataclass(frozen=True)
class UrlChange:
    """One URL of a sitemap that a crawler should look at again."""

    url: str  # absolute
    change: str  # "added", "updated" or "removed" (deleted, or no longer listed)
