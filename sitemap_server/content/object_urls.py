"""One URL, one object (S-107), by construction: the ``object_urls`` table.

Every post (and each further part of a multi-part post, ``/a/2/`` …), term and author has
a row per URL: its path on the site in normal form, which is the table's primary key. A
write that gives an object a URL, or moves URLs as a side effect (a slug, a parent or a
date changed, a post or term deleted and its children moved up, a post type's permalink
pattern or a taxonomy's base changed), brings the rows of every object it moves up to date
in its own transaction (``hold``). A path another object has, or one no object may have
(the home page, a document the server serves, the admin API, the IndexNow key file, a
post type's archive), refuses the write with a 409 naming it, and the transaction changes
nothing. When two requests take one path at once, the primary key lets one of them commit
and the other answers 409.

Paths are compared as they are stored: relative to the site (one site URL for all), in
RFC 3986's normal form with Unicode in NFC (``content.sanitize.normal_path``; slugs are
percent-encoded UTF-8, ``content.permalinks.segment``).

Posts of every status hold their URL (a draft's is the one it gets when published, as
its slug is), so publishing never collides. ``sitemap-server check`` compares the table
with the content (``differences``); ``--repair`` rewrites it (``rebuild``).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, cast

from sqlalchemy import Table, and_, delete, func, insert, literal, or_, select, union_all
from sqlalchemy.exc import IntegrityError

from ..batches import chunks
from ..errors import Conflict
from ..models import Author, ObjectUrl, Post, PostType, Taxonomy, Term, post_terms, site_of
from ..models.site import zone_of
from . import permalinks
from .sanitize import normal_path
from .urls import server_path_problem

_urls = cast(Table, ObjectUrl.__table__)
_posts = cast(Table, Post.__table__)
_terms = cast(Table, Term.__table__)
_authors = cast(Table, Author.__table__)
_types = cast(Table, PostType.__table__)
# The taxonomy of WordPress's ``{category}``.
CATEGORY = "category"
KINDS = ("post", "term", "author")
ARCHIVE = "archive"  # what ``_held`` calls a post type's archive among the URLs
# Past this many objects and URLs, one read of the whole table is cheaper than lookups.
WHOLE_TABLE = 5_000


# Two requests took one URL at once: the one that stored it second is refused.
TAKEN_CONCURRENTLY = (
    "another request gave one of the URLs this write makes to another object at the same "
    "time; nothing was changed: fetch the objects again and retry"
)


@dataclass(frozen=True)
class Url:
    """A URL an object has: part 1 is its own, 2 … the further parts of a post."""

    kind: str
    object_id: int
    part: int
    path: str

    @property
    def owner(self) -> str:
        return f"{self.kind} {self.object_id}"

    def row(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "kind": self.kind,
            "object_id": self.object_id,
            "part": self.part,
        }


class UrlTaken(Conflict):
    """A write would give ``claimant`` (kind, id) a URL that is taken or reserved."""

    claimant: tuple[str, int] = ("", 0)


def _normal(path: str) -> str:
    # Slugs come percent-encoded in upper case already; what a pattern or an explicit
    # path holds besides may not be in normal form.
    return normal_path(path) if "%" in path or not path.isascii() else path


def _rows(session: Any, columns: list[Any], ids: Iterable[int] | None, where: Any) -> list[Any]:
    """``columns`` (the first is the id) of the rows ``ids``, or of those ``where`` (None:
    all of them)."""
    query = select(*columns)
    if ids is None:
        return list(session.execute(query if where is None else query.where(where)))
    found: list[Any] = []
    for batch in chunks(sorted(set(ids))):
        found.extend(session.execute(query.where(columns[0].in_(batch))))
    return found


def _ancestry(session: Any, table: Table, rows: Iterable[Any]) -> dict[int, tuple[str, int | None]]:
    """id -> (slug, parent id) of ``rows`` and of all their ancestors."""
    known: dict[int, tuple[str, int | None]] = {r.id: (r.slug, r.parent_id) for r in rows}
    asked: set[int] = set(known)
    wanted = {parent for _slug, parent in known.values() if parent is not None} - asked
    while wanted:
        asked |= wanted
        for batch in chunks(sorted(wanted)):
            query = select(table.c.id, table.c.slug, table.c.parent_id).where(table.c.id.in_(batch))
            for row in session.execute(query):
                known[row.id] = (row.slug, row.parent_id)
        wanted = {parent for _slug, parent in known.values() if parent is not None} - asked
    return known


def _slugs_down_to(node: int, known: dict[int, tuple[str, int | None]]) -> list[str]:
    """The slugs from the top ancestor down to ``node`` (a stored cycle ends the walk)."""
    slugs: list[str] = []
    seen: set[int] = set()
    current: int | None = node
    while current is not None and current in known and current not in seen:
        seen.add(current)
        slug, current = known[current]
        slugs.append(slug)
    return slugs[::-1]


def post_urls(
    session: Any,
    *,
    ids: Iterable[int] | None = None,
    post_type: str | None = None,
    rows: Sequence[Any] | None = None,
) -> list[Url]:
    """The URLs of the posts ``ids``, or of every post of ``post_type``, or of all posts,
    or of ``rows`` (with the columns' attributes: what an import has just inserted)
    (``session``: a Session or a Connection)."""
    columns = [
        _posts.c.id,
        _posts.c.type,
        _posts.c.slug,
        _posts.c.parent_id,
        _posts.c.author_id,
        _posts.c.published_at,
        _posts.c.modified_at,
        _posts.c.path,
        _posts.c.parts,
    ]
    if rows is None:
        where = None if post_type is None else _posts.c.type == post_type
        rows = _rows(session, columns, ids, where)
    types = {t.name: t for t in session.execute(select(PostType.__table__))}
    fields = {name: permalinks.fields_of(t.permalink_pattern) for name, t in types.items()}
    zone = zone_of(session)
    known = _ancestry(session, _posts, [r for r in rows if types[r.type].hierarchical])
    patterned = [r for r in rows if not r.path]
    authors = _author_slugs(
        session, {r.author_id for r in patterned if "author" in fields[r.type] and r.author_id}
    )
    categories = first_categories(
        session, [r.id for r in patterned if "category" in fields[r.type]]
    )
    urls: list[Url] = []
    for row in rows:
        post_type_row = types[row.type]
        ancestors = (
            _slugs_down_to(row.parent_id, known)
            if post_type_row.hierarchical and row.parent_id is not None
            else []
        )
        path = _normal(
            permalinks.post_path(
                post_type_row.permalink_pattern,
                post_id=row.id,
                slug=row.slug,
                post_type=row.type,
                date=row.published_at or row.modified_at,
                ancestors=ancestors,
                explicit_path=row.path,
                zone=zone,
                author=authors.get(row.author_id, ""),
                category=categories.get(row.id, ()),
            )
        )
        urls.extend(_with_parts("post", row.id, path, row.parts))
    return urls


def _author_slugs(session: Any, ids: set[int]) -> dict[int, str]:
    found: dict[int, str] = {}
    for batch in chunks(sorted(ids)):
        query = select(_authors.c.id, _authors.c.slug).where(_authors.c.id.in_(batch))
        found.update({row.id: row.slug for row in session.execute(query)})
    return found


def first_categories(session: Any, post_ids: list[int]) -> dict[int, list[str]]:
    """post id -> the slugs of its first category (the lowest id: WordPress's
    ``{category}``) and that one's ancestors, outermost first; posts in none are absent."""
    first: dict[int, int] = {}
    for batch in chunks(sorted(post_ids)):
        query = (
            select(post_terms.c.post_id, func.min(post_terms.c.term_id))
            .join(_terms, _terms.c.id == post_terms.c.term_id)
            .where(post_terms.c.post_id.in_(batch), _terms.c.taxonomy == CATEGORY)
            .group_by(post_terms.c.post_id)
        )
        first.update({post_id: term_id for post_id, term_id in session.execute(query)})
    if not first:
        return {}
    terms = _rows(session, [_terms.c.id, _terms.c.slug, _terms.c.parent_id], first.values(), None)
    known = _ancestry(session, _terms, terms)
    return {post_id: _slugs_down_to(term_id, known) for post_id, term_id in first.items()}


def posts_using(session: Any, field: str, where: Any) -> set[int]:
    """The posts meeting ``where`` whose URL holds ``field`` (``author``, ``category``):
    of a type whose pattern has it, without a path of their own. Their URLs move with
    their author's slug, or their category's."""
    types = [
        name
        for name, pattern in session.execute(select(_types.c.name, _types.c.permalink_pattern))
        if field in permalinks.fields_of(pattern)
    ]
    if not types:
        return set()
    query = select(_posts.c.id).where(where, _posts.c.type.in_(types), _posts.c.path.is_(None))
    return set(session.scalars(query))


def urls_of_post(path: str, post: Post) -> list[Url]:
    """The URLs of ``post`` whose own path (``Links.post``, relative) is ``path``."""
    return list(_with_parts("post", post.id, _normal(path), post.parts or 1))


def url_of(kind: str, object_id: int, path: str) -> Url:
    """The one URL of a term or author whose archive is ``path`` (``Links``)."""
    return Url(kind, object_id, 1, _normal(path))


def _with_parts(kind: str, object_id: int, path: str, parts: int) -> Iterator[Url]:
    yield Url(kind, object_id, 1, path)
    for part in range(2, parts + 1):
        yield Url(kind, object_id, part, _normal(permalinks.part_url(path, part)))


def term_urls(
    session: Any, *, ids: Iterable[int] | None = None, taxonomy: str | None = None
) -> list[Url]:
    """The archive URLs of the terms ``ids``, or of every term of ``taxonomy``, or of all."""
    columns = [_terms.c.id, _terms.c.taxonomy, _terms.c.slug, _terms.c.parent_id]
    rows = _rows(session, columns, ids, None if taxonomy is None else _terms.c.taxonomy == taxonomy)
    taxonomies = {t.name: t for t in session.execute(select(Taxonomy.__table__))}
    known = _ancestry(session, _terms, [r for r in rows if taxonomies[r.taxonomy].hierarchical])
    urls = []
    for row in rows:
        taxonomy_row = taxonomies[row.taxonomy]
        slugs = _slugs_down_to(row.id, known) if taxonomy_row.hierarchical else [row.slug]
        path = _normal(permalinks.term_path(taxonomy_row.archive_base, slugs))
        urls.append(Url("term", row.id, 1, path))
    return urls


def author_urls(session: Any, *, ids: Iterable[int] | None = None) -> list[Url]:
    rows = _rows(session, [_authors.c.id, _authors.c.slug], ids, None)
    return [Url("author", r.id, 1, _normal(permalinks.author_path(r.slug))) for r in rows]


def all_urls(session: Any) -> list[Url]:
    return [*post_urls(session), *term_urls(session), *author_urls(session)]


def _reserved(session: Any, paths: Iterable[str]) -> Iterator[tuple[str, str]]:
    """(path, why) for each of ``paths`` that is the server's own (the home page, a
    document, the admin API, the IndexNow key file); type archives are ``_held``'s."""
    key = _indexnow_key(session)
    for path in paths:
        problem = "is the home page" if path == "/" else server_path_problem(path, key)
        if problem is not None:
            yield path, problem


def _indexnow_key(session: Any) -> str | None:
    try:
        return site_of(session).settings.get("sitemap_server.indexnow.key")
    except (LookupError, AttributeError):  # a Connection (a migration): no site
        return None


def hold(
    session: Any,
    urls: Sequence[Url],
    field: str | None = None,
    written: Iterable[tuple[str, int]] = (),
) -> None:
    """Make ``urls`` the URLs of their objects (rows they had besides are dropped), or
    raise ``UrlTaken`` (a 409 on ``field``) naming the object or route that has one.

    ``written`` are the objects the request itself creates or changes: a refusal names
    the URL alone for them (a new one's id is gone with the refused request), and says
    whose it would have been for the others (a side effect: "the URL post 7 would get")."""
    owned = {(u.kind, u.object_id) for u in urls}
    if not owned:  # a type or taxonomy with nothing in it
        return
    mentioned = owned - set(written)

    def refuse(url: Url, problem: str) -> None:
        _refuse(url, problem, field, (url.kind, url.object_id) in mentioned)

    wanted: dict[str, Url] = {}
    for url in urls:
        other = wanted.setdefault(url.path, url)
        if other is not url:
            refuse(url, f"is also the URL {other.owner} would get")
    current = list(_held(session, owned, wanted))
    mine = {
        Url(r.kind, r.object_id, r.part, r.path) for r in current if (r.kind, r.object_id) in owned
    }
    want = set(wanted.values())
    if mine == want:
        return
    for row in current:
        if row.kind == ARCHIVE:
            problem = f"is the archive of post type {row.name!r}"
            refuse(wanted[row.path], f"{problem}: no post, term or author may have it")
        if (row.kind, row.object_id) not in owned:
            refuse(wanted[row.path], f"is already the URL of {row.kind} {row.object_id}")
    for path, problem in _reserved(session, [u.path for u in want - mine]):
        refuse(wanted[path], f"{problem}: no post, term or author may have it")
    stale = [u.path for u in mine - want]
    for batch in chunks(stale):
        session.execute(delete(_urls).where(_urls.c.path.in_(batch)))
    new = [u.row() for u in want - mine]
    try:
        for batch in chunks(new, 1000):
            session.execute(insert(_urls), batch)
    except IntegrityError as exc:  # another request took one of them since
        raise Conflict(TAKEN_CONCURRENTLY) from exc


def _held(session: Any, owners: set[tuple[str, int]], wanted: dict[str, Url]) -> Iterator[Any]:
    """The stored rows of ``owners`` and those of the paths in ``wanted``, and the type
    archives among those paths (kind ``ARCHIVE``, the type's name in ``name``): one
    statement for a write of one object, the whole table read once for a type's posts."""
    columns = select(
        _urls.c.path, _urls.c.kind, _urls.c.object_id, _urls.c.part, literal("").label("name")
    )
    archives = select(
        _types.c.archive_path.label("path"),
        literal(ARCHIVE).label("kind"),
        literal(0).label("object_id"),
        literal(0).label("part"),
        _types.c.name,
    )
    if len(owners) + len(wanted) > WHOLE_TABLE:
        every = union_all(columns, archives.where(_types.c.archive_path.is_not(None)))
        for row in session.execute(select(every.subquery()).execution_options(yield_per=10_000)):
            if (row.kind, row.object_id) in owners or row.path in wanted:
                yield row
        return
    by_kind: dict[str, list[int]] = {}
    for kind, object_id in sorted(owners):
        by_kind.setdefault(kind, []).append(object_id)
    # Written kind = … AND object_id IN (…): the owner index answers it on both databases.
    lookups = [
        and_(_urls.c.kind == kind, _urls.c.object_id.in_(batch))
        for kind, ids in by_kind.items()
        for batch in chunks(ids)
    ] + [_urls.c.path.in_(batch) for batch in chunks(sorted(wanted))]
    statements: list[Any] = [columns.where(lookup) for lookup in lookups]
    statements += [archives.where(_types.c.archive_path.in_(b)) for b in chunks(sorted(wanted))]
    if len(lookups) <= 2:  # one object: one statement
        statements = [union_all(columns.where(or_(*lookups)), *statements[len(lookups) :])]
    seen: set[tuple[str, str]] = set()
    for statement in statements:
        for row in session.execute(statement):
            if (row.path, row.kind) not in seen:
                seen.add((row.path, row.kind))
                yield row


def _refuse(url: Url, problem: str, field: str | None, whose: bool) -> None:
    detail = (
        f"{url.path}, the URL {url.owner} would get, {problem}"
        if whose
        else f"{url.path} {problem}"
    )
    taken = cast(UrlTaken, UrlTaken.field(field, detail) if field else UrlTaken(detail))
    taken.claimant = (url.kind, url.object_id)
    raise taken


def release(session: Any, kind: str, ids: Iterable[int]) -> None:
    """The objects ``ids`` are gone: their URLs are free."""
    for batch in chunks(sorted(set(ids))):
        session.execute(delete(_urls).where(_urls.c.kind == kind, _urls.c.object_id.in_(batch)))


def archive_problem(session: Any, path: str, own_type: str | None) -> str | None:
    """Why a post type's archive may not be at ``path`` (normal form), or None."""
    for _path, problem in _reserved(session, [path]):
        return problem
    other = session.scalar(
        select(PostType.name).where(
            PostType.archive_path == path, PostType.name != (own_type or "")
        )
    )
    if other is not None:
        return f"is the archive of post type {other!r}"
    row = session.execute(
        select(_urls.c.kind, _urls.c.object_id).where(_urls.c.path == path)
    ).first()
    return None if row is None else f"is the URL of {row.kind} {row.object_id}"


def differences(session: Any, urls: Sequence[Url]) -> Iterator[tuple[str, str | None, str | None]]:
    """Where the table differs from ``urls`` (``all_urls``: what the content implies):
    (path, stored owner, expected owner); a path two objects would have is expected for
    the one ``rebuild`` keeps it for."""
    expected, _left_out = _kept(urls)
    stored = {
        r.path: Url(r.kind, r.object_id, r.part, r.path)
        for r in session.execute(
            select(_urls.c.path, _urls.c.kind, _urls.c.object_id, _urls.c.part)
        )
    }
    for path in sorted(stored.keys() | expected.keys()):
        old, new = stored.get(path), expected.get(path)
        if old != new:
            yield path, _described(old), _described(new)


def _described(url: Url | None) -> str | None:
    if url is None:
        return None
    return url.owner + (f" part {url.part}" if url.part > 1 else "")


def _kept(urls: Iterable[Url]) -> tuple[dict[str, Url], list[Url]]:
    """Each path with the object that keeps it where several would have it (posts, then
    terms, then authors, each in id order), and the URLs left out."""
    kept: dict[str, Url] = {}
    left_out: list[Url] = []
    for url in sorted(urls, key=lambda u: (KINDS.index(u.kind), u.object_id, u.part)):
        if kept.setdefault(url.path, url) is not url:
            left_out.append(url)
    return kept, left_out


def rebuild(session: Any, urls: Sequence[Url] | None = None) -> list[Url]:
    """Rewrite the table from the content (or from ``urls``, ``all_urls`` already read);
    returns the URLs left out because an earlier object has them (``_kept``)."""
    kept, left_out = _kept(all_urls(session) if urls is None else urls)
    session.execute(delete(_urls))
    for batch in chunks([u.row() for u in kept.values()], 1000):
        session.execute(insert(_urls), batch)
    return left_out
