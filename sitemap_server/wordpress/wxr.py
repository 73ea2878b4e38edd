"""Reading a WordPress export (WXR, versions 1.0 to 1.2), streaming.

A WXR file is RSS 2.0 with WordPress's own elements (``wp:``, ``content:``, ``excerpt:``,
``dc:``): the channel's authors and terms, then one ``<item>`` per post, page,
attachment, menu item … ``read`` yields them one at a time, as plain records, and frees
the elements it has read after each chunk it parses, so memory does not grow with the
file (a 2 GB export is read in the memory of its largest item). Only the root, the
channel and the records are reported by the parser; a record's own elements are read
from its tree, by tag, once it ends.

What is refused, before anything is imported: a document with a DTD (WordPress writes
none; an internal subset is how an entity bomb is built), one whose root is not an RSS
``<channel>`` of WordPress, and XML that is malformed or cut short, each with the line
where the parser stopped. Nothing is fetched: no DTD, no external entity, no network.
A ``.gz`` export is read through gzip, found by its first bytes rather than its name.
"""

from __future__ import annotations

import contextlib
import gzip
import io
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import IO, Any, cast

# WXR's own namespaces, per version: http:// or https://, export/1.0/ to 1.2/.
WP_NAMESPACES = tuple(
    f"{scheme}://wordpress.org/export/{version}/"
    for scheme in ("http", "https")
    for version in ("1.0", "1.1", "1.2")
)
CONTENT = "{http://purl.org/rss/1.0/modules/content/}encoded"
DC_CREATOR = "{http://purl.org/dc/elements/1.1/}creator"
GZIP_MAGIC = b"\x1f\x8b"
# WordPress writes this for "no date" (a draft never published).
NO_DATE = "0000-00-00 00:00:00"


class WxrError(ValueError):
    """The file is not a WordPress export this reader can take: what is wrong, and where."""

    def __init__(self, message: str, line: int | None = None) -> None:
        super().__init__(f"line {line}: {message}" if line else message)
        self.line = line


@dataclass
class Channel:
    """The site the export is of."""

    title: str = ""
    link: str = ""
    language: str = ""
    wxr_version: str = ""
    base_site_url: str = ""
    base_blog_url: str = ""


@dataclass
class WpAuthor:
    login: str
    display_name: str
    author_id: int | None = None
    line: int = 0


@dataclass
class WpTerm:
    """A term of the channel's lists (``wp:category``, ``wp:tag``, ``wp:term``)."""

    taxonomy: str
    slug: str
    name: str
    term_id: int | None = None
    parent_slug: str = ""
    description: str = ""
    line: int = 0


@dataclass
class ItemTerm:
    """A ``<category domain="…" nicename="…">name</category>`` of an item."""

    taxonomy: str
    slug: str
    name: str


@dataclass
class WpItem:
    """One ``<item>``: a post of any type (attachments and menu items included)."""

    line: int
    title: str = ""
    link: str = ""
    guid: str = ""
    creator: str = ""
    content: str = ""
    post_id: int | None = None
    post_date: str = ""  # the site's local time, as WordPress stores it
    post_date_gmt: str = ""
    post_modified: str = ""
    post_modified_gmt: str = ""
    post_name: str = ""
    status: str = ""
    post_parent: int = 0
    post_type: str = ""
    password: str = ""
    attachment_url: str = ""
    terms: list[ItemTerm] = field(default_factory=list)
    meta: dict[str, str] = field(default_factory=dict)


Record = Channel | WpAuthor | WpTerm | WpItem


def _wp(*names: str) -> dict[str, str]:
    """Each ``wp:`` name in each of WXR's namespaces, as lxml spells the tag
    (``{uri}name``), to the name: tags are compared whole, never split."""
    return {f"{{{uri}}}{name}": name for uri in WP_NAMESPACES for name in names}


# The children of <channel> that are records, by tag, to their kind.
RECORDS = {"item": "item", **_wp("author", "category", "tag", "term")}
# The parser reports these, and nothing else: the structure the records are checked
# against, and the records (what they hold is read from their element once it ends).
REPORTED = ("rss", "channel", *RECORDS)
# The channel's own elements, read until its first record.
CHANNEL_TEXT = {
    "title": "title",
    "link": "link",
    "language": "language",
    **_wp("wxr_version", "base_site_url", "base_blog_url"),
}
# An item's elements read as they are, each to its ``WpItem`` field. Those not named
# here or in ITEM_OTHER (excerpt, menu order, comments …) are not read: nothing here
# uses them.
ITEM_TEXT = {
    "title": "title",
    "link": "link",
    "guid": "guid",
    DC_CREATOR: "creator",
    **{
        tag: "password" if name == "post_password" else name
        for tag, name in _wp(
            "post_date",
            "post_date_gmt",
            "post_modified",
            "post_modified_gmt",
            "post_name",
            "status",
            "post_type",
            "post_password",
            "attachment_url",
        ).items()
    },
}
ITEM_OTHER = {
    "category": "category",
    CONTENT: "content",
    **_wp("post_id", "post_parent", "postmeta"),
}
# The ``wp:`` children of an author, a term and a post's meta that are read, by tag.
WP_FIELDS = _wp(
    "author_login",
    "author_display_name",
    "author_id",
    "term_id",
    "term_taxonomy",
    "category_nicename",
    "cat_name",
    "category_parent",
    "category_description",
    "tag_slug",
    "tag_name",
    "tag_description",
    "term_slug",
    "term_name",
    "term_parent",
    "term_description",
    "meta_key",
    "meta_value",
)
# Each of the channel's lists of terms: its taxonomy (``wp:term`` names its own), and
# the fields of its slug, name, parent and description.
TERMS = {
    "category": (
        "category",
        "category_nicename",
        "cat_name",
        "category_parent",
        "category_description",
    ),
    "tag": ("post_tag", "tag_slug", "tag_name", "", "tag_description"),
    "term": ("", "term_slug", "term_name", "term_parent", "term_description"),
}
# What the parser is given at a time. A chunk's records are yielded, and its finished
# elements freed, once it is parsed: the tree never holds more than a chunk's worth of
# finished elements beside the one being read. lxml's own iterparse reads this much.
CHUNK = 32 * 1024
PARSER_OPTIONS: dict[str, Any] = {
    "load_dtd": False,
    "no_network": True,
    "resolve_entities": False,
    # A post's content may hold more than libxml2's default 10 MB text node; its
    # entity amplification limit holds with or without this.
    "huge_tree": True,
    "remove_comments": True,
    "remove_pis": True,
}


def open_export(stream: IO[bytes]) -> IO[bytes]:
    """``stream``, or what it holds if it is gzip-compressed (found by its first bytes).
    A stream that can seek is read as it is (and left open for another reading)."""
    if stream.seekable():
        start = stream.tell()
        head = stream.read(2)
        stream.seek(start)
        source: Any = stream
    else:
        source = io.BufferedReader(stream)
        head = source.peek(2)[:2]
    if head == GZIP_MAGIC:
        return cast(IO[bytes], gzip.GzipFile(fileobj=source, mode="rb"))
    return cast(IO[bytes], source)


def read(stream: IO[bytes]) -> Iterator[Record]:
    """The records of the export in ``stream``, in the file's order: the ``Channel``
    first (once its own fields are read), then authors, terms and items.

    :raises WxrError: not a WordPress export, or malformed XML (with its line).
    """
    from lxml import etree

    source = open_export(stream)
    # Sees the first start tag, the root's, before the parser that builds the tree is
    # given anything: a file that is no export is refused before it is read further.
    probe: Any = etree.XMLPullParser(events=("start",), **PARSER_OPTIONS)
    # Reports only the elements in REPORTED: what is between them is built into the tree
    # without a Python object made for each element, and read from there.
    parser = etree.XMLPullParser(events=("start", "end"), tag=REPORTED, **PARSER_OPTIONS)
    channel = Channel()
    channel_sent = False
    root: Any = None  # the <rss>
    current: Any = None  # the <channel> whose children are the records
    data = b"-"
    while data:
        data = source.read(CHUNK)
        failure: Any = None
        if probe is not None and data:
            # Malformed: the parser below is given the same, and says where.
            with contextlib.suppress(etree.XMLSyntaxError):
                probe.feed(data)
            for _event, element in probe.read_events():
                _check_root(element)
                probe = None
                break
        try:
            if data:
                parser.feed(data)
            else:
                parser.close()
        except etree.XMLSyntaxError as error:
            failure = error
        # What came before a malformed part is read as it would be in a whole file: its
        # records, and its refusal if it is no export, come before the syntax error.
        for event, element in parser.read_events():
            if event == "start":
                tag = element.tag
                if tag == "rss" and element.getparent() is None:
                    root = element
                elif tag == "channel" and root is not None and element.getparent() is root:
                    _check_children_of_root(root, current, until=element)
                    current = element
                continue
            parent = element.getparent()
            if parent is not current or current is None:
                if element is current:  # the channel ends: its elements are all read
                    if not channel_sent:
                        _channel_fields(channel, current)
                    del current[:]
                continue
            kind = RECORDS.get(element.tag)
            if kind is None:  # a <channel> or an <rss> in the channel: not a record
                continue
            record: Record
            if kind == "item":
                record = _item(element)
            elif kind == "author":
                record = _author(element)
            else:
                record = _term(element, kind)
            if not channel_sent:
                _channel_fields(channel, reversed(list(element.itersiblings(preceding=True))))
                channel_sent = True
                yield channel
            yield record
        if root is not None:
            _check_children_of_root(root, current)
        if current is not None:
            # Every element of the channel but the last is finished (all of it, the last
            # may be one the parser is still building): its records are yielded above.
            finished = len(current) - 1
            if finished > 0:
                if not channel_sent:
                    _channel_fields(channel, current[:finished])
                del current[:finished]
        if failure is not None:
            raise WxrError(f"not well-formed XML: {failure.msg}", failure.lineno) from None
    if not channel_sent:
        yield channel


def _check_root(element: Any) -> None:
    doctype = element.getroottree().docinfo.doctype
    if doctype:
        raise WxrError(
            "the document has a DTD (<!DOCTYPE>); a WordPress export has none, and "
            "entities are not expanded",
            1,
        )
    if element.tag != "rss":
        raise WxrError(
            f"the root element is <{_local(element.tag)}>, not <rss>: not a WordPress export",
            element.sourceline,
        )


def _check_children_of_root(root: Any, after: Any, until: Any = None) -> None:
    """Every element of ``root`` after ``after`` (from the first if it is None), up to
    ``until``, is a ``<channel>``: refused at the first that is not."""
    children = root.iterchildren() if after is None else after.itersiblings()
    for child in children:
        if child is until:
            return
        if child.tag != "channel":
            raise WxrError(
                f"<{_local(child.tag)}> where <channel> was expected: not a WordPress export",
                child.sourceline,
            )


def _local(tag: Any) -> str:
    return str(tag).rsplit("}", 1)[-1]


def _text(element: Any) -> str:
    return (element.text or "").strip()


def _int(value: str, what: str, line: int) -> int | None:
    value = value.strip()
    if not value:
        return None
    try:
        return int(value)
    except ValueError:
        raise WxrError(f"{what} is {value!r}, not a number", line) from None


def _channel_fields(channel: Channel, elements: Iterable[Any]) -> None:
    """The channel's own fields among ``elements`` (its elements before its first
    record), in order: the last of each is kept."""
    for element in elements:
        name = CHANNEL_TEXT.get(element.tag)
        if name is not None:
            setattr(channel, name, _text(element))


def _wp_fields(element: Any) -> dict[str, str]:
    """The text of the element's ``wp:`` children named in WP_FIELDS (the first of each)."""
    found: dict[str, str] = {}
    for child in element:
        name = WP_FIELDS.get(child.tag)
        if name is not None and name not in found:
            found[name] = (child.text or "").strip()
    return found


def _author(element: Any) -> WpAuthor:
    wp = _wp_fields(element)
    line = element.sourceline or 0
    login = wp.get("author_login", "")
    if not login:
        raise WxrError("an author without <wp:author_login>", line)
    return WpAuthor(
        login=login,
        display_name=wp.get("author_display_name") or login,
        author_id=_int(wp.get("author_id", ""), "wp:author_id", line),
        line=line,
    )


def _term(element: Any, kind: str) -> WpTerm:
    wp = _wp_fields(element)
    line = element.sourceline or 0
    taxonomy, slug, name, parent, description = TERMS[kind]
    term = WpTerm(
        taxonomy=taxonomy or wp.get("term_taxonomy", ""),
        slug=wp.get(slug, ""),
        name=wp.get(name, ""),
        term_id=_int(wp.get("term_id", ""), "wp:term_id", line),
        parent_slug=wp.get(parent, "") if parent else "",
        description=wp.get(description, ""),
        line=line,
    )
    if not term.taxonomy or not term.slug:
        raise WxrError(f"a <wp:{kind}> without its taxonomy or slug", line)
    return term


def _item(element: Any) -> WpItem:
    line = element.sourceline or 0
    item = WpItem(line=line)
    for child in element:
        tag = child.tag
        name = ITEM_TEXT.get(tag)
        if name is not None:
            setattr(item, name, (child.text or "").strip())
            continue
        other = ITEM_OTHER.get(tag)
        if other is None:
            continue
        if other == "category":
            item.terms.append(
                ItemTerm(
                    taxonomy=child.get("domain") or "category",
                    slug=(child.get("nicename") or "").strip(),
                    name=(child.text or "").strip(),
                )
            )
        elif other == "content":
            item.content = child.text or ""
        elif other == "postmeta":
            meta = _wp_fields(child)
            key = meta.get("meta_key")
            if key:
                item.meta.setdefault(key, meta.get("meta_value", ""))
        elif other == "post_id":
            item.post_id = _int(child.text or "", "wp:post_id", line)
        else:
            item.post_parent = _int(child.text or "", "wp:post_parent", line) or 0
    return item
