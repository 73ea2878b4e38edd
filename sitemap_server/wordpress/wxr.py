"""Reading a WordPress export (WXR, versions 1.0 to 1.2), streaming.

A WXR file is RSS 2.0 with WordPress's own elements (``wp:``, ``content:``, ``excerpt:``,
``dc:``): the channel's authors and terms, then one ``<item>`` per post, page,
attachment, menu item … ``read`` yields them one at a time, as plain records, and frees
each element once it is read, so memory does not grow with the file (a 2 GB export is
read in the memory of its largest item).

What is refused, before anything is imported: a document with a DTD (WordPress writes
none; an internal subset is how an entity bomb is built), one whose root is not an RSS
``<channel>`` of WordPress, and XML that is malformed or cut short, each with the line
where the parser stopped. Nothing is fetched: no DTD, no external entity, no network.
A ``.gz`` export is read through gzip, found by its first bytes rather than its name.
"""

from __future__ import annotations

import gzip
import io
from collections.abc import Iterator
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
# An item's elements read as they are: RSS's (by tag), WordPress's (by local name), each
# to its ``WpItem`` field. Those not named here (excerpt, menu order, comments …) are not
# read: nothing here uses them.
ITEM_TEXT = {"title": "title", "link": "link", "guid": "guid", DC_CREATOR: "creator"}
WP_TEXT = {
    "post_date": "post_date",
    "post_date_gmt": "post_date_gmt",
    "post_modified": "post_modified",
    "post_modified_gmt": "post_modified_gmt",
    "post_name": "post_name",
    "status": "status",
    "post_type": "post_type",
    "post_password": "password",
    "attachment_url": "attachment_url",
}
# The fields of a term of each of the channel's lists: slug, name, parent, description.
FIELDS = {
    "category": ("category_nicename", "cat_name", "category_parent", "category_description"),
    "tag": ("tag_slug", "tag_name", "", "tag_description"),
    "term": ("term_slug", "term_name", "term_parent", "term_description"),
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

    events = etree.iterparse(
        open_export(stream),
        events=("start", "end"),
        load_dtd=False,
        no_network=True,
        resolve_entities=False,
        huge_tree=True,
        remove_comments=True,
        remove_pis=True,
    )
    channel = Channel()
    channel_sent = False
    depth = 0
    try:
        for event, element in events:
            if event == "start":
                depth += 1
                if depth == 1:
                    _check_root(element)
                elif depth == 2 and element.tag != "channel":
                    raise WxrError(
                        f"<{_local(element.tag)}> where <channel> was expected: "
                        "not a WordPress export",
                        element.sourceline,
                    )
                continue
            depth -= 1
            if depth != 2:  # only the children of <channel> are records
                continue
            tag = element.tag
            name = _local(tag)
            wp = _is_wp(tag)
            record: Record | None = None
            if tag == "item":
                record = _item(element)
            elif wp and name == "author":
                record = _author(element)
            elif wp and name in ("category", "tag", "term"):
                record = _term(element, name)
            elif not channel_sent:
                _channel_field(channel, element)
            if record is not None:
                if not channel_sent:
                    channel_sent = True
                    yield channel
                yield record
            element.clear()
            parent = element.getparent()
            while parent is not None and element.getprevious() is not None:
                del parent[0]
    except etree.XMLSyntaxError as error:
        raise WxrError(f"not well-formed XML: {error.msg}", error.lineno) from None
    if depth != 0:  # pragma: no cover - lxml reports a document cut short itself
        raise WxrError("the export ends before its last element is closed")
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


def _local(tag: Any) -> str:
    return str(tag).rsplit("}", 1)[-1]


def _is_wp(tag: Any) -> bool:
    return isinstance(tag, str) and tag.startswith("{") and tag[1 : tag.index("}")] in WP_NAMESPACES


def _wp_children(element: Any) -> dict[str, Any]:
    """The element's ``wp:`` children by local name (the first of each)."""
    found: dict[str, Any] = {}
    for child in element:
        if _is_wp(child.tag):
            found.setdefault(_local(child.tag), child)
    return found


def _text(element: Any) -> str:
    return (element.text or "").strip() if element is not None else ""


def _int(value: str, what: str, line: int) -> int | None:
    value = value.strip()
    if not value:
        return None
    try:
        return int(value)
    except ValueError:
        raise WxrError(f"{what} is {value!r}, not a number", line) from None


def _channel_field(channel: Channel, element: Any) -> None:
    name = _local(element.tag)
    if _is_wp(element.tag):
        if name == "wxr_version":
            channel.wxr_version = _text(element)
        elif name == "base_site_url":
            channel.base_site_url = _text(element)
        elif name == "base_blog_url":
            channel.base_blog_url = _text(element)
    elif element.tag in ("title", "link", "language"):
        setattr(channel, element.tag, _text(element))


def _author(element: Any) -> WpAuthor:
    wp = _wp_children(element)
    line = element.sourceline or 0
    login = _text(wp.get("author_login"))
    if not login:
        raise WxrError("an author without <wp:author_login>", line)
    return WpAuthor(
        login=login,
        display_name=_text(wp.get("author_display_name")) or login,
        author_id=_int(_text(wp.get("author_id")), "wp:author_id", line),
        line=line,
    )


def _term(element: Any, kind: str) -> WpTerm:
    wp = _wp_children(element)
    line = element.sourceline or 0
    if kind == "category":
        taxonomy, slug, name, parent = (
            "category",
            "category_nicename",
            "cat_name",
            "category_parent",
        )
        description = "category_description"
    elif kind == "tag":
        taxonomy, slug, name, parent = "post_tag", "tag_slug", "tag_name", ""
        description = "tag_description"
    else:
        taxonomy = _text(wp.get("term_taxonomy"))
        slug, name, parent, description = (
            "term_slug",
            "term_name",
            "term_parent",
            "term_description",
        )
    term = WpTerm(
        taxonomy=taxonomy,
        slug=_text(wp.get(slug)),
        name=_text(wp.get(name)),
        term_id=_int(_text(wp.get("term_id")), "wp:term_id", line),
        parent_slug=_text(wp.get(parent)) if parent else "",
        description=_text(wp.get(description)),
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
        if not isinstance(tag, str):
            continue
        if tag in ITEM_TEXT:
            setattr(item, ITEM_TEXT[tag], _text(child))
        elif tag == "category":
            item.terms.append(
                ItemTerm(
                    taxonomy=child.get("domain") or "category",
                    slug=(child.get("nicename") or "").strip(),
                    name=_text(child),
                )
            )
        elif tag == CONTENT:
            item.content = child.text or ""
        elif _is_wp(tag):
            _item_field(item, _local(tag), child, line)
    return item


def _item_field(item: WpItem, name: str, child: Any, line: int) -> None:
    if name in WP_TEXT:
        setattr(item, WP_TEXT[name], _text(child))
    elif name == "post_id":
        item.post_id = _int(_text(child), "wp:post_id", line)
    elif name == "post_parent":
        item.post_parent = _int(_text(child), "wp:post_parent", line) or 0
    elif name == "postmeta":
        meta = _wp_children(child)
        key = _text(meta.get("meta_key"))
        if key:
            item.meta.setdefault(key, _text(meta.get("meta_value")))
