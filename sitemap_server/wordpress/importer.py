"""A WordPress export imported: its authors, terms and posts become this site's (S-706).

The export is read twice, streaming (``wxr.read``). The first pass surveys it: the post
types and taxonomies it uses, its attachments (images of their posts), the slugs and
parents of hierarchical items (for the ``{path}`` of a page), and a sample of each type's
links, from which the type's permalink structure is found (``permalinks.infer``). The
second pass imports, through the NDJSON import's ``ObjectImport``: the same checks as the
admin API, posts in batches, every change recorded at once at the end. Objects keep their
WordPress ids (posts and terms), so a link with ``%post_id%`` and the import of a newer
export find them.

What is mapped:

- authors (``wp:author``, and any ``dc:creator`` not listed) by their login;
- categories, tags and custom taxonomies, from the channel's lists and from the items'
  ``<category domain nicename>``, with their hierarchy;
- posts, pages and custom post types: status, password, slug (percent-decoded), parent,
  ``post_date_gmt`` / ``post_modified_gmt`` (an export without them, or with
  ``0000-00-00``, falls back on the local dates), multi-part content (``<!--nextpage-->``);
- attachments become images of their parent post; ``_thumbnail_id`` its featured image;
- Yoast's ``_yoast_wpseo_meta-robots-noindex`` (1 noindex, 2 index, else the type's
  default) and ``_yoast_wpseo_canonical``.

What is not (menu items, revisions, blocks and templates, ``post_format`` terms, auto
drafts) is counted by reason in the report, never dropped silently.
"""

from __future__ import annotations

import hashlib
import json
import re
from array import array
from collections import Counter
from collections.abc import Callable, Hashable, Iterable, Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta, tzinfo
from typing import IO, Any, NamedTuple, cast
from urllib.parse import parse_qs, unquote, urlsplit

from sqlalchemy import ColumnElement, Table, and_, delete, func, insert, select, update
from sqlalchemy.orm import Session

from ..batches import chunks
from ..content.sanitize import clean_url
from ..content.slugs import is_slug, normal_slug, slugify
from ..content.urls import is_site_path
from ..errors import ServiceError
from ..models import Author, ImportedObject, Post, PostType, Taxonomy, Term, mark_written
from ..models.meta import utcnow
from ..models.site import get_settings, site_zone
from ..services import authors, posts, site, terms, types
from ..services.importer import LineValidator, ObjectImport, failed_lines
from ..sitemaps.changes import held_back
from . import permalinks, wxr
from .permalinks import Sample, Structure

# WordPress's own post types that are not content with a URL of its own.
INTERNAL_TYPES = frozenset(
    {
        "attachment",
        "revision",
        "nav_menu_item",
        "custom_css",
        "customize_changeset",
        "oembed_cache",
        "user_request",
        "wp_block",
        "wp_template",
        "wp_template_part",
        "wp_global_styles",
        "wp_navigation",
        "wp_font_family",
        "wp_font_face",
    }
)
# Taxonomies that are not archives a sitemap lists: menus, link categories, block themes'
# own; post formats, whose archives Yoast leaves out of its sitemaps by default.
INTERNAL_TAXONOMIES = frozenset(
    {
        "nav_menu",
        "link_category",
        "post_format",
        "wp_theme",
        "wp_template_part_area",
        "wp_pattern_category",
    }
)
STATUSES = frozenset({"publish", "future", "draft", "pending", "private", "trash"})
# Statuses whose URL WordPress served (and a sitemap may list): the others' links are
# previews (``/?p=12``).
SERVED = frozenset({"publish", "future"})
NO_DATE = "0000-00-00 00:00:00"
NEXT_PAGE = "<!--nextpage-->"
MAX_PARTS = 1000
MAX_IMAGES = 1000
YOAST_NOINDEX = "_yoast_wpseo_meta-robots-noindex"
YOAST_CANONICAL = "_yoast_wpseo_canonical"
THUMBNAIL = "_thumbnail_id"
SLUG_TAKEN = "slug taken by an earlier item: its link's or title's instead"
# The taxonomy of WordPress's ``%category%``.
CATEGORY = "category"
# The offsets of the site's clock kept (``Survey.clocks``): one per month of a century.
MAX_CLOCKS = 1200
# Rows of ``imported_objects`` written in one statement.
BATCH = 1000
NAME = re.compile(r"^[a-z0-9_-]{1,20}$")


@dataclass
class Report:
    """What an import read, imported and left out, for the command and the API."""

    items: Counter[str] = field(default_factory=Counter)  # by "type/status"
    imported: Counter[str] = field(default_factory=Counter)  # by kind: new objects
    # Imported before (the same source and id): changed in place, or left as they were.
    updated: Counter[str] = field(default_factory=Counter)
    unchanged: Counter[str] = field(default_factory=Counter)
    # Made by an earlier import, gone from this export, and deleted (``--prune``).
    pruned: Counter[str] = field(default_factory=Counter)
    skipped: Counter[str] = field(default_factory=Counter)  # by reason
    # Imported, but not quite as exported: by what was done.
    adjusted: Counter[str] = field(default_factory=Counter)
    structures: dict[str, Structure] = field(default_factory=dict)
    # Posts, by type, that keep the path WordPress gave them (their link is not the
    # structure's), and those whose WordPress URL cannot be kept (a plain ``/?p=12``,
    # a path that starts with ``//``).
    exported_paths: Counter[str] = field(default_factory=Counter)
    not_kept: Counter[str] = field(default_factory=Counter)
    # Items left out, by their line and why (``--continue-on-error``).
    failed: list[tuple[int, str]] = field(default_factory=list)
    # The time zone the export's dates are local to (None: none found), the site's before
    # the import, and the site's after it (the export's, when the site had no posts).
    export_zone: str | None = None
    site_zone: str = "UTC"
    zone_set: bool = False
    # Exported dates of served items, and how many of them the export's zone gives.
    dates: int = 0
    dates_given: int = 0

    def as_dict(self) -> dict[str, Any]:
        return {
            "timezone": {
                "export": self.export_zone,
                "site": self.site_zone,
                "set": self.zone_set,
                "dates": self.dates,
                "dates_given": self.dates_given,
            },
            "items": dict(sorted(self.items.items())),
            "imported": dict(sorted(self.imported.items())),
            "updated": dict(sorted(self.updated.items())),
            "unchanged": dict(sorted(self.unchanged.items())),
            "pruned": dict(sorted(self.pruned.items())),
            "skipped": dict(sorted(self.skipped.items())),
            "adjusted": dict(sorted(self.adjusted.items())),
            "permalinks": {
                name: {
                    "pattern": s.pattern,
                    "reproduced": s.reproduced,
                    "sampled": s.sampled,
                    "exported_paths": self.exported_paths[name],
                    "not_kept": self.not_kept[name],
                }
                for name, s in sorted(self.structures.items())
            },
        }

    def summary(self) -> list[str]:
        """The report in a few lines of text."""
        lines = [f"read {sum(self.items.values())} items; imported {_listed(self.imported)}"]
        if self.updated or self.unchanged:
            lines.append(
                "imported before: "
                + ", ".join(
                    f"{self.updated[kind]} {kind} updated, {self.unchanged[kind]} unchanged"
                    for kind in sorted(self.updated.keys() | self.unchanged.keys())
                )
            )
        if self.pruned:
            lines.append(f"deleted, no longer in the export: {_listed(self.pruned)}")
        if self.skipped:
            lines.append(f"not imported: {_listed(self.skipped)}")
        if self.adjusted:
            lines.append(f"imported with a change: {_listed(self.adjusted)}")
        lines += failed_lines(self.failed, "items")
        lines.append(self._zone_line())
        for name, s in sorted(self.structures.items()):
            found = s.pattern or "no structure"
            line = (
                f"{name} permalinks: {found} reproduces {s.reproduced} of {s.sampled} sampled links"
            )
            if self.exported_paths[name]:
                line += f"; {self.exported_paths[name]} posts keep their exported path"
            if self.not_kept[name]:
                line += (
                    f"; {self.not_kept[name]} links that are no path here (plain /?p=…, "
                    "//…) get the structure's URL"
                )
            lines.append(line)
        return lines

    def _zone_line(self) -> str:
        if self.export_zone is None:
            return f"time zone: the site's, {self.site_zone}; the export's dates name none"
        found = f"{self.export_zone} ({self.dates_given} of {self.dates} exported dates)"
        if self.zone_set:
            return f"time zone: {found}, the export's, is now the site's (was {self.site_zone})"
        if self.export_zone == self.site_zone:
            return f"time zone: {found}, the export's and the site's"
        return (
            f"time zone: the site's, {self.site_zone}, not the export's, {found}: kept, the "
            "site has posts (dated links it does not make keep their exported path)"
        )


def _listed(counts: Counter[str]) -> str:
    """``2 author, 79 post``: what ``counts`` counts, by name; "nothing" when empty."""
    return ", ".join(f"{n} {what}" for what, n in sorted(counts.items())) or "nothing"


class Known(NamedTuple):
    """An object an earlier import made: its id here, and the digest of what it was made of."""

    object_id: int
    digest: str


class IdSet:
    """A set of WordPress ids in a bit each (an id up to ``BITS``; a set beyond): an
    export of a million posts costs the import 125 KiB, not the 60 MiB of a set."""

    BITS = 2**26  # 8 MiB at most

    def __init__(self) -> None:
        self.bits = bytearray()
        self.beyond: set[int] = set()

    def add(self, value: int) -> None:
        if not 0 <= value < self.BITS:
            self.beyond.add(value)
            return
        byte = value >> 3
        if byte >= len(self.bits):
            self.bits.extend(bytes(max(byte + 1 - len(self.bits), len(self.bits))))
        self.bits[byte] |= 1 << (value & 7)

    def __contains__(self, value: int) -> bool:
        if not 0 <= value < self.BITS:
            return value in self.beyond
        byte = value >> 3
        return byte < len(self.bits) and bool(self.bits[byte] & (1 << (value & 7)))


class Fingerprints:
    """A set of keys kept as their 64-bit hashes, 8 bytes each in an open-addressing
    table: the slugs a million posts took cost 16 MiB, not the 160 MiB of a set of them.
    Two keys of one hash (odds of about 1 in 10^7 among a million) count as one."""

    def __init__(self) -> None:
        self.slots = array("q", bytes(8 * 1024))
        self.count = 0

    def add(self, key: Hashable) -> None:
        if self._find(key) is None:
            return
        if 2 * (self.count + 1) > len(self.slots):
            old = self.slots
            self.slots = array("q", bytes(16 * len(old)))
            for fingerprint in old:
                if fingerprint:
                    self._put(fingerprint)
        self._put(_fingerprint(key))
        self.count += 1

    def __contains__(self, key: Hashable) -> bool:
        return self._find(key) is None

    def _find(self, key: Hashable) -> int | None:
        """None when ``key`` is here, else the fingerprint to store."""
        fingerprint = _fingerprint(key)
        mask = len(self.slots) - 1
        slot = fingerprint & mask
        while self.slots[slot]:
            if self.slots[slot] == fingerprint:
                return None
            slot = (slot + 1) & mask
        return fingerprint

    def _put(self, fingerprint: int) -> None:
        mask = len(self.slots) - 1
        slot = fingerprint & mask
        while self.slots[slot]:
            slot = (slot + 1) & mask
        self.slots[slot] = fingerprint


def _fingerprint(key: Hashable) -> int:
    """``key``'s hash, never 0 (an empty slot)."""
    return hash(key) or 1


@dataclass
class Survey:
    """What the first pass learnt of the export."""

    site: str = ""
    types: set[str] = field(default_factory=set)
    hierarchical: set[str] = field(default_factory=set)
    taxonomies: dict[str, bool] = field(default_factory=dict)  # name -> hierarchical
    attachments: dict[int, str] = field(default_factory=dict)  # id -> url
    images: dict[int, list[str]] = field(default_factory=dict)  # parent id -> urls
    tree: dict[int, tuple[int, str]] = field(default_factory=dict)  # id -> (parent, slug)
    ids: IdSet = field(default_factory=IdSet)  # importable items
    parents: set[int] = field(default_factory=set)  # the parents they name
    # Per type, what the first published items' links are made of: (id, slug, date,
    # parent, path, author's login, category slugs).
    samples: dict[str, list[tuple[int, str, datetime | None, int, str, str, list[str]]]] = field(
        default_factory=dict
    )
    # The categories of the channel's list: slug -> (WordPress id, parent's slug).
    categories: dict[str, tuple[int | None, str]] = field(default_factory=dict)
    # The site's clock, from ``post_date`` beside ``post_date_gmt``: what its time zone was.
    clocks: permalinks.Clocks = field(default_factory=dict)


def _digest(data: dict[str, Any]) -> str:
    """What an import made an object from, in 64 hex digits."""
    text = json.dumps(data, sort_keys=True, default=str, ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()


def import_wordpress(
    session: Session,
    open_export: Callable[[], AbstractContextManager[IO[bytes]]],
    validate: LineValidator,
    progress: Callable[[int], None] | None = None,
    prune: bool = False,
    post_pattern: str | None = None,
    keep_going: bool = False,
) -> Report:
    """Import the export that ``open_export`` opens (it is read twice) in ``session``'s
    transaction.

    With ``prune``, what earlier imports of the same site made and this export no longer
    has is deleted. ``post_pattern`` is the posts' permalink pattern, given rather than
    found (``permalinks.from_wordpress``). With ``keep_going``, an item the site cannot
    take is left out and named in the report (``failed``) instead of failing the import.

    :raises wxr.WxrError: the file is not a WordPress export, or malformed.
    :raises ServiceError: an item the site cannot take, naming its line in the export.
    """

    @contextmanager
    def read() -> Iterator[Iterable[wxr.Record]]:
        with open_export() as stream:
            yield wxr.read(stream)

    return import_records(session, read, validate, progress, prune, post_pattern, keep_going)


def import_records(
    session: Session,
    read: Callable[[], AbstractContextManager[Iterable[wxr.Record]]],
    validate: LineValidator,
    progress: Callable[[int], None] | None = None,
    prune: bool = False,
    post_pattern: str | None = None,
    keep_going: bool = False,
    listed: Iterable[int] = (),
) -> Report:
    """``import_wordpress`` of the records ``read`` gives (read twice): an export's, or
    those a sync made of WordPress's REST API (``sync.py``), in the order an export has
    them (the channel, its authors and terms, then the items). With ``prune``, the posts
    of ``listed`` (WordPress ids) count as named, as the items are: a sync names the
    posts it did not fetch again, and the others are deleted."""
    with read() as records:
        survey = _survey(records)
    report = Report()
    with held_back(session), read() as records:
        importer = _Import(
            session, survey, validate, report, progress, prune, post_pattern, keep_going
        )
        for post_id in listed:
            importer.seen_posts.add(post_id)
        importer.run(records)
    report.failed = importer.objects.failures.by_line()
    return report


def _survey(records: Iterable[wxr.Record]) -> Survey:
    survey = Survey()
    for record in records:
        if isinstance(record, wxr.Channel):
            survey.site = record.base_blog_url or record.link or record.base_site_url
        elif isinstance(record, wxr.WpTerm):
            if record.taxonomy not in INTERNAL_TAXONOMIES:
                hierarchical = survey.taxonomies.get(record.taxonomy, False)
                survey.taxonomies[record.taxonomy] = hierarchical or bool(record.parent_slug)
            if record.taxonomy == CATEGORY:
                parent = normal_slug(unquote(record.parent_slug))
                survey.categories[normal_slug(unquote(record.slug))] = (record.term_id, parent)
        elif isinstance(record, wxr.WpItem):
            _survey_item(survey, record)
    return survey


def _survey_item(survey: Survey, item: wxr.WpItem) -> None:
    post_id = item_id(item)
    kind = item.post_type or "post"
    if kind == "attachment":
        url = clean_url(item.attachment_url or item.guid)
        if post_id is not None and url:
            survey.attachments[post_id] = url
            if item.post_parent:
                survey.images.setdefault(item.post_parent, []).append(url)
        return
    for term in item.terms:
        if term.taxonomy not in INTERNAL_TAXONOMIES:
            survey.taxonomies.setdefault(term.taxonomy, False)
    if kind in INTERNAL_TYPES or item.status not in STATUSES or post_id is None:
        return
    survey.types.add(kind)
    survey.ids.add(post_id)
    if item.post_parent:
        survey.parents.add(item.post_parent)
    slug = unquote(item.post_name)
    if kind != "post" or item.post_parent:
        survey.tree[post_id] = (item.post_parent, slug)
    if item.post_parent:
        survey.hierarchical.add(kind)
    if item.status in SERVED:
        _survey_clock(survey, item)
        path = permalinks.link_path(item.link, survey.site)
        samples = survey.samples.setdefault(kind, [])
        if path is not None and len(samples) < permalinks.SAMPLE:
            sample = (post_id, slug, _published(item), item.post_parent, path, item.creator)
            samples.append((*sample, _item_categories(item)))


def _survey_clock(survey: Survey, item: wxr.WpItem) -> None:
    instant, local = _gmt(item.post_date_gmt), _gmt(item.post_date)
    if instant is None or local is None or not 1000 < instant.year < 9999:
        return  # none, or one the import refuses (and no zone could shift)
    key = ((local - instant) // timedelta(minutes=1), instant.year, instant.month)
    seen = survey.clocks.get(key)
    if seen is not None:
        survey.clocks[key] = (seen[0], seen[1] + 1)
    elif len(survey.clocks) < MAX_CLOCKS:
        survey.clocks[key] = (instant, 1)


def _item_categories(item: wxr.WpItem) -> list[str]:
    """The slugs of the item's categories, as the import keeps them."""
    return [normal_slug(unquote(t.slug)) for t in item.terms if t.taxonomy == CATEGORY and t.slug]


def lineage(categories: dict[str, tuple[int | None, str]], slug: str) -> list[str]:
    """The slugs of category ``slug``'s ancestors and its own, outermost first."""
    found = [slug]
    parent = categories.get(slug, (None, ""))[1]
    while parent and parent not in found:
        found.append(parent)
        parent = categories.get(parent, (None, ""))[1]
    return found[::-1]


def item_id(item: wxr.WpItem) -> int | None:
    """The item's WordPress id: ``wp:post_id``, else the ``?p=`` of its GUID or link (the
    oldest exports have neither id nor slug)."""
    if item.post_id is not None:
        return item.post_id
    for url in (item.guid, item.link):
        query = parse_qs(urlsplit(url).query)
        for key in ("p", "page_id", "attachment_id"):
            if query.get(key, [""])[0].isdigit():
                return int(query[key][0])
    return None


def _source_id(item: wxr.WpItem) -> str:
    """What names the item in its export, for later imports: its id, else its GUID."""
    post_id = item_id(item)
    return str(post_id) if post_id is not None else item.guid or item.link


def _gmt(value: str) -> datetime | None:
    """A date as WordPress exports it (``2010-01-01 12:00:00``), in UTC; None for none."""
    # fromisoformat is ten times cheaper than strptime, and takes more than this one form.
    if len(value) != len("2010-01-01 12:00:00") or value[10] != " " or value == NO_DATE:
        return None
    try:
        return datetime.fromisoformat(value).replace(tzinfo=UTC)
    except ValueError:
        return None


def _published(item: wxr.WpItem) -> datetime | None:
    """When the item was (or is to be) published, in UTC: ``post_date_gmt``, else its
    local ``post_date`` taken as UTC (an export that lacks the first); None for a draft
    never published."""
    if item.status in ("draft", "pending") and (
        not item.post_date_gmt or item.post_date_gmt == NO_DATE
    ):
        return None
    return _gmt(item.post_date_gmt) or _gmt(item.post_date)


def ancestors(tree: dict[int, tuple[int, str]], parent: int) -> list[str]:
    """The slugs of ``parent`` and its ancestors, outermost first (a loop ends it)."""
    found: list[str] = []
    seen: set[int] = set()
    while parent and parent in tree and parent not in seen:
        seen.add(parent)
        parent, slug = tree[parent]
        found.append(slug)
    return found[::-1]


class _Import:
    """The second pass."""

    def __init__(
        self,
        session: Session,
        survey: Survey,
        validate: LineValidator,
        report: Report,
        progress: Callable[[int], None] | None,
        prune: bool = False,
        post_pattern: str | None = None,
        keep_going: bool = False,
    ) -> None:
        self.session = session
        self.prune = prune
        self.post_pattern = post_pattern
        self.survey = survey
        self.report = report
        self.progress = progress
        self.objects = ObjectImport(session, validate, keep_going)
        self.authors: dict[str, int] = {}
        self.terms: dict[tuple[str, str], int] = {}
        self.term_ids: set[int] = set()
        self.taxonomies: set[str] = set()
        self.patterns: dict[str, str] = {}
        self.zone: tzinfo = UTC  # the site's, once the import has set it (``_prepare_zone``)
        # WordPress post id -> this site's, of the items that are others' parents.
        self.ids: dict[int, int] = {}
        self.used_ids = IdSet()
        self.largest_post_id = session.scalar(select(func.max(Post.id))) or 0
        self.largest_term_id = session.scalar(select(func.max(Term.id))) or 0
        self.source = survey.site.rstrip("/")
        # What earlier imports of this site made, by (kind, source id), when it still
        # exists here; the rows of those deleted since (their objects are made again).
        # Posts: those of the window of items at hand (``_items``).
        self.known: dict[tuple[str, str], Known] = {}
        self.orphans: set[tuple[str, str]] = set()
        self.window: set[tuple[str, str]] = set()
        self._load_known()
        # The authors and terms earlier imports made that this export has not named (yet),
        # and the posts it named: ``--prune``.
        self.unseen = set(self.known)
        self.seen_posts = IdSet()
        self.seen_other_posts: set[str] = set()
        self.new_sources: list[dict[str, Any]] = []
        # The (type, parent, slug) each imported item took.
        self.slugs = Fingerprints()
        # Items waiting for their parent, by the parent's id.
        self.waiting: dict[int, list[wxr.WpItem]] = {}
        self.held_terms: dict[tuple[str, str], list[wxr.WpTerm]] = {}

    def run(self, records: Iterable[wxr.Record]) -> None:
        self._prepare_zone()
        self._prepare_types()
        window: list[wxr.WpItem] = []
        for record in records:
            if isinstance(record, wxr.WpItem):
                window.append(record)
                if len(window) >= BATCH:
                    self._items(window)
                    window = []
                continue
            self._items(window)  # keep the export's order
            window = []
            if isinstance(record, wxr.WpAuthor):
                self._author(record.login, record.display_name, record.line)
            elif isinstance(record, wxr.WpTerm):
                self._channel_term(record)
        self._items(window)
        for held in self.held_terms.values():  # their parent is not in the export
            for term in held:
                self._create_term(term.taxonomy, term.slug, term.name, term.line, None, term)
        for items in self.waiting.values():  # their parent is not imported
            for item in items:
                self.report.adjusted["parent not imported: imported without it"] += 1
                self._post(item, parent=None)
        self.objects.finish()
        self._write_sources()
        if self.prune:
            self._prune()

    def _items(self, window: list[wxr.WpItem]) -> None:
        """Import the items of ``window``, having read at once which of them an earlier
        import made (``_load_known``): what is held in memory of those is one window's."""
        if not window:
            return
        for key in self.window:
            self.known.pop(key, None)
            self.orphans.discard(key)
        self.window = {("post", _source_id(item)) for item in window}
        self._load_known([source_id for _kind, source_id in self.window])
        for item in window:
            self._item(item)
            if self.progress is not None:
                self.progress(1)

    # The time zone, post types and taxonomies ----------------------------------------

    def _prepare_zone(self) -> None:
        """The time zone of the export's dates, which its dated links hold (WordPress
        writes a post's local date in them): the site's, if it gives every exported date;
        else the one that gives the most becomes the site's, when the site has no posts
        yet (``permalinks.infer_zone``)."""
        current = get_settings(self.session).timezone or "UTC"
        self.report.site_zone = current
        found, given = permalinks.infer_zone(self.survey.clocks, current)
        self.report.export_zone = found if given else None
        self.report.dates = sum(count for _instant, count in self.survey.clocks.values())
        self.report.dates_given = given
        if given and found != current and self.session.scalar(select(Post.id).limit(1)) is None:
            site.update_settings(self.session, {"timezone": found})
            self.report.zone_set = True
        self.zone = site_zone(found if self.report.zone_set else current)

    def _prepare_types(self) -> None:
        for name in sorted(self.survey.types):
            samples = [
                Sample(
                    post_id,
                    slug,
                    date,
                    ancestors(self.survey.tree, parent),
                    path,
                    slugify(creator, "") if creator else "",
                    self._first_category(slugs, self._wordpress_category_id),
                )
                for post_id, slug, date, parent, path, creator, slugs in self.survey.samples.get(
                    name, []
                )
            ]
            post_type = self.session.get(PostType, name)
            current = post_type.permalink_pattern if post_type is not None else None
            if name == "post" and self.post_pattern is not None:
                structure = permalinks.measure(name, samples, self.post_pattern, self.zone)
            else:
                structure = permalinks.infer(name, samples, current, self.zone)
            self.report.structures[name] = structure
            if post_type is None:
                if not NAME.match(name):
                    continue  # its items are reported, one by one
                data: dict[str, Any] = {
                    "name": name,
                    "label": name.replace("_", " ").replace("-", " ").title(),
                    "hierarchical": name in self.survey.hierarchical,
                }
                if structure.pattern:
                    data["permalink_pattern"] = structure.pattern
                post_type = self.objects.add(0, {"post_type": data})
                if post_type is None:  # left out (``--continue-on-error``): so are its items
                    continue
            elif structure.pattern and structure.pattern != post_type.permalink_pattern:
                types.update_post_type(
                    self.session, post_type, {"permalink_pattern": structure.pattern}
                )
            self.patterns[name] = post_type.permalink_pattern
        for name, hierarchical in sorted(self.survey.taxonomies.items()):
            if self.session.get(Taxonomy, name) is not None:
                self.taxonomies.add(name)
            elif NAME.match(name):
                label = name.replace("_", " ").replace("-", " ").title()
                data = {"name": name, "label": label, "hierarchical": hierarchical}
                if self.objects.add(0, {"taxonomy": data}) is not None:
                    self.taxonomies.add(name)

    # Authors and terms ----------------------------------------------------------------

    def _author(self, login: str, name: str, line: int) -> int | None:
        # WordPress compares logins without case (``dc:creator`` may differ from the
        # author list's), and the archive URL is the login made a slug.
        slug = slugify(login, f"author-{len(self.authors) + 1}")
        found = self.authors.get(slug)
        if found is not None:
            return found
        data = {"slug": slug, "name": name or login}
        digest = _digest(data)
        known = self.known.get(("author", slug))
        if known is None:
            found = self._add(line, "author", data)
            if found is None:
                return None
            self._remember("author", slug, found, digest)
        else:
            found = known.object_id
            if self._changed("author", slug, digest, line, {"author": data}):
                author = self.session.get_one(Author, found)
                self._update(line, "author", authors.update_author, author, {"name": data["name"]})
        self.authors[slug] = found
        return found

    def _channel_term(self, term: wxr.WpTerm) -> None:
        if term.taxonomy not in self.taxonomies:
            self.report.skipped[f"{term.taxonomy} term"] += 1
            return
        parent = None
        if term.parent_slug:
            parent = self.terms.get((term.taxonomy, normal_slug(unquote(term.parent_slug))))
            if parent is None:
                key = (term.taxonomy, normal_slug(unquote(term.parent_slug)))
                self.held_terms.setdefault(key, []).append(term)
                return
        self._create_term(term.taxonomy, term.slug, term.name, term.line, parent, term)

    def _create_term(
        self,
        taxonomy: str,
        slug: str,
        name: str,
        line: int,
        parent: int | None,
        term: wxr.WpTerm | None = None,
    ) -> int | None:
        slug = normal_slug(unquote(slug)) if slug else slugify(name, "term")
        seen = self.terms.get((taxonomy, slug))
        if seen is not None:
            return seen
        data: dict[str, Any] = {"taxonomy": taxonomy, "name": name or slug}
        if is_slug(slug):
            data["slug"] = slug
        if parent is not None:
            data["parent"] = parent
        if term is not None and term.description:
            data["description"] = term.description
        source_id = f"{taxonomy}/{slug}"
        digest = _digest(data)
        known = self.known.get(("term", source_id))
        if known is None:
            # Before WordPress 4.2 a category and a tag of one name shared their term id:
            # the second gets an id of its own.
            wanted = term.term_id if term is not None else None
            if wanted is not None and 0 < wanted < 2**31 and self._term_id_free(wanted):
                data["id"] = wanted
            added = self._add(line, "term", data)
            if added is None:
                return None
            term_id = added
            self._remember("term", source_id, term_id, digest)
        else:
            term_id = known.object_id
            if self._changed("term", source_id, digest, line, {"term": data}):
                self.objects.flush()  # its parent may be in a batch
                update: dict[str, Any] = {
                    k: data[k] for k in ("name", "parent", "description") if k in data
                }
                stored = self.session.get_one(Term, term_id)
                self._update(line, "term", terms.update_term, stored, update)
        self.terms[taxonomy, slug] = term_id
        self.term_ids.add(term_id)
        for child in self.held_terms.pop((taxonomy, slug), []):
            self._create_term(child.taxonomy, child.slug, child.name, child.line, term_id, child)
        return term_id

    def _term_id_free(self, term_id: int) -> bool:
        if term_id in self.term_ids:
            return False
        # Past the largest id the site had when the import began: free, without a query.
        return term_id > self.largest_term_id or self.session.get(Term, term_id) is None

    def _add(self, line: int, kind: str, data: dict[str, Any]) -> int | None:
        """Add an author, term or post to its batch; its id here: the one it asks for, else
        the one the database gives it, now (its batch is inserted); None when it is left
        out (``--continue-on-error``)."""
        if "id" in data:
            self.objects.add(line, {kind: data})
            return int(data["id"])
        ids: list[int] = []
        self.objects.add(line, {kind: data}, then=ids.append)
        self.objects.flush()
        return ids[0] if ids else None

    # Items ------------------------------------------------------------------------------

    def _item(self, item: wxr.WpItem) -> None:
        kind = item.post_type or "post"
        self.report.items[f"{kind}/{item.status or 'none'}"] += 1
        if kind == "attachment":
            self.report.skipped["attachment (an image of its post)"] += 1
            return
        if kind in INTERNAL_TYPES:
            self.report.skipped[f"{kind} (not content)"] += 1
            return
        if item.status not in STATUSES:
            self.report.skipped[f"status {item.status or 'none'}"] += 1
            return
        if kind not in self.patterns:
            self.report.skipped[f"post type {kind!r} (not a name this site takes)"] += 1
            return
        parent = None
        if item.post_parent:
            parent = self.ids.get(item.post_parent)
            if parent is None and item.post_parent in self.survey.ids:
                self.waiting.setdefault(item.post_parent, []).append(item)
                return
            if parent is None:
                self.report.adjusted["parent not in the export: imported without it"] += 1
        self._post(item, parent)

    def _post(self, item: wxr.WpItem, parent: int | None) -> None:
        kind = item.post_type or "post"
        post_id = item_id(item)
        published = _published(item)
        now = utcnow()
        modified = _gmt(item.post_modified_gmt) or _gmt(item.post_modified) or published or now
        data: dict[str, Any] = {
            "type": kind,
            "title": item.title,
            "status": item.status,
            "content": item.content,
            "published_at": published.isoformat() if published else None,
            "modified_at": min(modified, now).isoformat(),
            "parts": min(item.content.count(NEXT_PAGE) + 1, MAX_PARTS),
        }
        slug = self._slug(item, kind, item.post_parent)
        if slug:
            data["slug"] = slug
        if parent is not None:
            data["parent"] = parent
        if item.password:
            data["password"] = item.password
        author = self._author(item.creator, item.creator, item.line) if item.creator else None
        if author is not None:
            data["author"] = author
        data.update(self._meta(item, post_id))
        data["terms"] = sorted(set(self._item_terms(item)))
        path = self._exported_path(item, kind, post_id, slug, published)
        if path:
            data["path"] = path
        # What the export says of the post: the date it was modified as written there
        # (``modified_at`` falls back on the import's clock).
        digest = _digest({**data, "modified_at": item.post_modified_gmt or item.post_modified})
        source_id = _source_id(item)
        if ("post", source_id) not in self.window:  # a child that waited for its parent
            self._load_known([source_id])
        known = self.known.get(("post", source_id))
        if known is not None:
            self._see_post(source_id)
            if self._changed("post", source_id, digest, item.line, {"post": data}):
                self.objects.posts.flush()  # what it refers to may be in the batch
                stored = self.session.get_one(Post, known.object_id)
                update = {k: v for k, v in data.items() if k != "type"}
                self._update(item.line, "post", posts.update_post, stored, update)
            self._imported(post_id, known.object_id)
            return

        # Inserted with its batch, maybe once the window of items has moved on.
        orphan = ("post", source_id) in self.orphans

        def inserted(our_id: int) -> None:
            self._remember("post", source_id, our_id, digest, item.guid or None, orphan)

        if post_id is not None and self._post_id_free(post_id):
            data["id"] = post_id
            self.used_ids.add(post_id)
            self.objects.add(item.line, {"post": data}, then=inserted)
            self._imported(post_id, post_id)
        else:  # its WordPress id is another post's here: it gets one of its own, now
            ids: list[int] = []
            self.objects.add(item.line, {"post": data}, then=ids.append)
            self.objects.posts.flush()
            if not ids:  # left out (``--continue-on-error``)
                return
            # A later item whose WordPress id this is gets another (it is past the
            # largest id the site had when the import began: no query would see it).
            self.used_ids.add(ids[0])
            inserted(ids[0])
            self.report.adjusted["WordPress id taken here: another id given"] += 1
            self._imported(post_id, ids[0])

    def _imported(self, post_id: int | None, our_id: int) -> None:
        """The item ``post_id`` is post ``our_id`` here: the items waiting for it follow."""
        if post_id is None:
            return
        if post_id in self.survey.parents:
            self.ids[post_id] = our_id
        for child in self.waiting.pop(post_id, []):
            self._post(child, our_id)

    def _post_id_free(self, post_id: int) -> bool:
        if not 0 < post_id < 2**31 or post_id in self.used_ids:
            return False
        # Past the largest id the site had when the import began: free, without a query.
        return post_id > self.largest_post_id or self.session.get(Post, post_id) is None

    def _first_category(self, slugs: list[str], id_of: Callable[[str], int | None]) -> list[str]:
        """The lineage of the category of ``slugs`` with the lowest id (``id_of``): the
        post's ``{category}``, as WordPress and this site take it."""
        ranked = [(i, slug) for slug in slugs if (i := id_of(slug)) is not None]
        if not ranked:
            return []
        return lineage(self.survey.categories, min(ranked)[1])

    def _wordpress_category_id(self, slug: str) -> int | None:
        """The id the category has in the export (the one it gets here, when free)."""
        return self.survey.categories.get(slug, (None, ""))[0]

    def _category_id(self, slug: str) -> int | None:
        """The id the category has here, once imported."""
        return self.terms.get((CATEGORY, slug))

    # Where objects came from --------------------------------------------------------------

    def _prune(self) -> None:
        """Delete what earlier imports of this site made and this export no longer has,
        through the services as ``DELETE`` requests do: posts and terms leaves first (so
        no child moves up to meet a sibling of its slug), then the authors left with no
        post (one that still has posts here is kept, and counted)."""
        gone: dict[str, set[int]] = {"post": set(), "term": set(), "author": set()}
        for kind, source_id in self.unseen:
            gone[kind].add(self.known[kind, source_id].object_id)
        unseen_posts = [
            (source_id, object_id)
            for source_id, object_id in self.session.execute(
                select(ImportedObject.source_id, ImportedObject.object_id)
                .join(Post, Post.id == ImportedObject.object_id)
                .where(ImportedObject.source == self.source, ImportedObject.kind == "post")
            )
            if not self._seen_post(source_id)
        ]
        gone["post"] = {object_id for _source_id, object_id in unseen_posts}
        self._leaves_first(Post, set(gone["post"]), posts.delete_post)
        self._leaves_first(Term, set(gone["term"]), terms.delete_term)
        for author_id in sorted(gone["author"]):
            author = self.session.get_one(Author, author_id)
            if self.session.scalar(select(func.count()).where(Post.author_id == author_id)):
                self.report.adjusted["author not in the export but with posts here: kept"] += 1
                gone["author"].discard(author_id)
                continue
            authors.delete_author(self.session, author)
        for kind, ids in gone.items():
            if ids:
                self.report.pruned[kind] += len(ids)
        for kind, source_id in self.unseen:
            if self.known[kind, source_id].object_id in gone[kind]:
                self.session.execute(delete(ImportedObject).where(*self._row(kind, source_id)))
        for source_id, _object_id in unseen_posts:
            self.session.execute(delete(ImportedObject).where(*self._row("post", source_id)))

    def _see_post(self, source_id: str) -> None:
        if source_id.isdigit() and source_id.isascii():
            self.seen_posts.add(int(source_id))
        else:
            self.seen_other_posts.add(source_id)

    def _seen_post(self, source_id: str) -> bool:
        """Whether the export named the post an earlier import made of ``source_id``."""
        if source_id.isdigit() and source_id.isascii():
            return int(source_id) in self.seen_posts
        return source_id in self.seen_other_posts

    def _leaves_first(
        self, model: type[Post] | type[Term], ids: set[int], remove: Callable[[Session, Any], None]
    ) -> None:
        """``remove`` each of ``ids``, an object before its parent."""
        while ids:
            parents = set(
                self.session.scalars(select(model.parent_id).where(model.id.in_(sorted(ids))))
            )
            leaves = ids - parents or ids  # a loop of parents: any will do
            for object_id in sorted(leaves):
                remove(self.session, self.session.get_one(model, object_id))
            ids -= leaves

    def _load_known(self, posts: list[str] | None = None) -> None:
        """Read what earlier imports of this site made (``known``), and the rows of those
        deleted here since (``orphans``): the authors and terms, or the ``posts`` named."""
        table = cast(Table, ImportedObject.__table__)
        alive = func.coalesce(Post.id, Term.id, Author.id)
        query = (
            select(table.c.kind, table.c.source_id, table.c.object_id, table.c.digest, alive)
            .outerjoin(Post, and_(table.c.kind == "post", Post.id == table.c.object_id))
            .outerjoin(Term, and_(table.c.kind == "term", Term.id == table.c.object_id))
            .outerjoin(Author, and_(table.c.kind == "author", Author.id == table.c.object_id))
            .where(table.c.source == self.source)
        )
        if posts is None:
            queries = [query.where(table.c.kind != "post")]
        else:
            where_post = table.c.kind == "post"
            queries = [query.where(where_post, table.c.source_id.in_(b)) for b in chunks(posts)]
        for statement in queries:
            for kind, source_id, object_id, digest, exists in self.session.execute(statement):
                if exists is None:
                    self.orphans.add((kind, source_id))
                else:
                    self.known[kind, source_id] = Known(object_id, digest)

    def _remember(
        self,
        kind: str,
        source_id: str,
        object_id: int,
        digest: str,
        guid: str | None = None,
        orphan: bool | None = None,
    ) -> None:
        """A new object ``object_id`` made of ``source_id``: its row is written with the
        next batch (``_write_sources``), or at once in place of an orphan's (``orphan``:
        whether it is one, when ``orphans`` may have forgotten it)."""
        self.report.imported[kind] += 1
        row = {"object_id": object_id, "digest": digest, "guid": guid}
        if orphan is None:
            orphan = (kind, source_id) in self.orphans
        if orphan:
            self.session.execute(
                update(ImportedObject).where(*self._row(kind, source_id)).values(**row)
            )
            return
        self.new_sources.append(
            {"source": self.source, "kind": kind, "source_id": source_id, **row}
        )
        if len(self.new_sources) >= BATCH:
            self._write_sources()

    def _write_sources(self) -> None:
        if self.new_sources:
            self.session.execute(insert(cast(Table, ImportedObject.__table__)), self.new_sources)
            mark_written(self.session)
            self.new_sources = []

    def _row(self, kind: str, source_id: str) -> tuple[ColumnElement[bool], ...]:
        return (
            ImportedObject.source == self.source,
            ImportedObject.kind == kind,
            ImportedObject.source_id == source_id,
        )

    def _changed(
        self, kind: str, source_id: str, digest: str, line: int, item: dict[str, Any]
    ) -> bool:
        """Whether the export changed ``source_id`` since it was imported (its digest
        moved); if so, the new values are checked as an import object first, and the new
        digest stored."""
        self.unseen.discard((kind, source_id))  # the posts are ``seen_posts``
        if self.known[kind, source_id].digest == digest:
            self.report.unchanged[kind] += 1
            return False
        try:
            self.objects.check(line, item)
        except ServiceError as error:
            self.objects.failures.add(error)  # raises, unless the import goes on
            return False
        self.session.execute(
            update(ImportedObject).where(*self._row(kind, source_id)).values(digest=digest)
        )
        self.report.updated[kind] += 1
        return True

    def _update(
        self,
        line: int,
        kind: str,
        update: Callable[[Session, Any, dict[str, Any]], Any],
        stored: Any,
        data: dict[str, Any],
    ) -> None:
        with self.objects.failures.attempt() as attempt:
            try:
                update(self.session, stored, data)
            except ServiceError as exc:
                attempt.failed(exc.at_line(line, kind))

    def _slug(self, item: wxr.WpItem, kind: str, parent: int) -> str:
        """The item's slug: its ``post_name``, decoded. One an earlier item of its type
        and parent took (an export edited by hand: WordPress keeps slugs unique) gives
        way to the last segment of the item's link, the URL WordPress served it at, or
        to one made from its title."""
        slug = normal_slug(unquote(item.post_name)) if item.post_name else ""
        if not is_slug(slug):
            return ""
        if (kind, parent, slug) in self.slugs:
            self.report.adjusted[
                "slug taken by an earlier item: its link's or title's instead"
            ] += 1
            segment = (permalinks.link_path(item.link, self.survey.site) or "").strip("/")
            slug = normal_slug(segment.rsplit("/", 1)[-1])
            if (kind, parent, slug) in self.slugs or not is_slug(slug):
                return ""
        self.slugs.add((kind, parent, slug))
        return slug

    def _meta(self, item: wxr.WpItem, post_id: int | None) -> dict[str, Any]:
        found: dict[str, Any] = {}
        robots = item.meta.get(YOAST_NOINDEX, "")
        if robots in ("1", "2"):
            found["robots"] = "noindex" if robots == "1" else "index"
        canonical = clean_url(item.meta.get(YOAST_CANONICAL))
        if canonical:
            found["canonical"] = canonical
        elif item.meta.get(YOAST_CANONICAL):
            self.report.adjusted["Yoast canonical that is not a URL: left out"] += 1
        thumbnail = item.meta.get(THUMBNAIL, "")
        if thumbnail.isdigit() and int(thumbnail) in self.survey.attachments:
            found["featured_image"] = self.survey.attachments[int(thumbnail)]
        if post_id is not None and post_id in self.survey.images:
            found["images"] = list(dict.fromkeys(self.survey.images[post_id]))[:MAX_IMAGES]
        return found

    def _item_terms(self, item: wxr.WpItem) -> Iterator[int]:
        for term in item.terms:
            if term.taxonomy not in self.taxonomies:
                self.report.skipped[f"{term.taxonomy} term of a post"] += 1
                continue
            slug = normal_slug(unquote(term.slug)) if term.slug else slugify(term.name, "term")
            known = self.terms.get((term.taxonomy, slug))
            if known is None:
                known = self._create_term(term.taxonomy, slug, term.name, item.line, None)
            if known is not None:
                yield known

    def _exported_path(
        self,
        item: wxr.WpItem,
        kind: str,
        post_id: int | None,
        slug: str,
        published: datetime | None,
    ) -> str | None:
        """The path WordPress served the item at, when the type's pattern does not make
        it (None: the pattern does, or the item was never served)."""
        if item.status not in SERVED or post_id is None:
            return None
        path = permalinks.link_path(item.link, self.survey.site)
        if path is None:
            if urlsplit(item.link).query:
                self.report.not_kept[kind] += 1
            return None
        sample = Sample(
            post_id,
            slug or "",
            published,
            ancestors(self.survey.tree, item.post_parent),
            path,
            slugify(item.creator, "") if item.creator else "",
            self._first_category(_item_categories(item), self._category_id),
        )
        if slug and permalinks.path_of(self.patterns[kind], kind, sample, self.zone) == path:
            return None
        exported = urlsplit(item.link).path
        if not is_site_path(exported):  # ``//greek/…``: WordPress's, but no path here
            self.report.not_kept[kind] += 1
            return None
        self.report.exported_paths[kind] += 1
        return exported
