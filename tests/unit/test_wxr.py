"""Reading a WordPress export (``wordpress.wxr``): streaming, it reads what a whole-tree
reading of the same file reads, whatever the file and wherever its chunks end; a file
that is no export is refused with its line, before it is read further."""

from __future__ import annotations

import io
from unittest import mock
from xml.sax.saxutils import escape, quoteattr

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from lxml import etree

from sitemap_server.wordpress import wxr

RSS = '<rss version="2.0" xmlns:wp="{wp}" xmlns:dc="http://purl.org/dc/elements/1.1/" '
RSS += 'xmlns:content="http://purl.org/rss/1.0/modules/content/" xmlns:x="https://example.org/x/">'


def read(data: bytes, chunk: int = wxr.CHUNK) -> list[wxr.Record]:
    with mock.patch.object(wxr, "CHUNK", chunk):
        return list(wxr.read(io.BytesIO(data)))


# The reference: the whole document as one tree, read by the same rules --------------------


def whole_tree(data: bytes) -> list[wxr.Record]:
    """The records of the export in ``data``, read from the whole tree: the channel's
    own fields until its first record, then the records, each field by its rule (an
    item's: the last of each; an author's, a term's and a post meta's: the first)."""
    root = etree.fromstring(data, etree.XMLParser(**wxr.PARSER_OPTIONS))
    channel = wxr.Channel()
    records: list[wxr.Record] = []
    for element in (child for top in root for child in top):
        name = etree.QName(element)
        wp = name.namespace in wxr.WP_NAMESPACES
        if element.tag == "item":
            records.append(item_of(element))
        elif wp and name.localname == "author":
            fields = first_wp_texts(element)
            records.append(
                wxr.WpAuthor(
                    login=fields["author_login"],
                    display_name=fields.get("author_display_name") or fields["author_login"],
                    author_id=number(fields.get("author_id", "")),
                    line=element.sourceline,
                )
            )
        elif wp and name.localname in wxr.TERMS:
            taxonomy, slug, term_name, parent, description = wxr.TERMS[name.localname]
            fields = first_wp_texts(element)
            records.append(
                wxr.WpTerm(
                    taxonomy=taxonomy or fields.get("term_taxonomy", ""),
                    slug=fields.get(slug, ""),
                    name=fields.get(term_name, ""),
                    term_id=number(fields.get("term_id", "")),
                    parent_slug=fields.get(parent, ""),
                    description=fields.get(description, ""),
                    line=element.sourceline,
                )
            )
        elif records:
            continue
        elif element.tag in ("title", "link", "language"):
            setattr(channel, element.tag, text(element))
        elif wp and name.localname in ("wxr_version", "base_site_url", "base_blog_url"):
            setattr(channel, name.localname, text(element))
    return [channel, *records]


def item_of(element) -> wxr.WpItem:
    item = wxr.WpItem(line=element.sourceline)
    for child in element:
        name = etree.QName(child)
        local = name.localname
        if name.namespace is None and local in ("title", "link", "guid"):
            setattr(item, local, text(child))
        elif name.namespace is None and local == "category":
            item.terms.append(
                wxr.ItemTerm(
                    child.get("domain") or "category",
                    (child.get("nicename") or "").strip(),
                    text(child),
                )
            )
        elif child.tag == wxr.DC_CREATOR:
            item.creator = text(child)
        elif child.tag == wxr.CONTENT:
            item.content = child.text or ""
        elif name.namespace not in wxr.WP_NAMESPACES:
            continue
        elif local == "post_id":
            item.post_id = number(text(child))
        elif local == "post_parent":
            item.post_parent = number(text(child)) or 0
        elif local == "postmeta":
            meta = first_wp_texts(child)
            if meta.get("meta_key"):
                item.meta.setdefault(meta["meta_key"], meta.get("meta_value", ""))
        elif local == "post_password":
            item.password = text(child)
        elif local in WP_ITEM_TEXT:
            setattr(item, local, text(child))
    return item


WP_ITEM_TEXT = (
    "post_date",
    "post_date_gmt",
    "post_modified",
    "post_modified_gmt",
    "post_name",
    "status",
    "post_type",
    "attachment_url",
)


def first_wp_texts(element) -> dict[str, str]:
    found: dict[str, str] = {}
    for child in element:
        name = etree.QName(child)
        if name.namespace in wxr.WP_NAMESPACES:
            found.setdefault(name.localname, text(child))
    return found


def text(element) -> str:
    return (element.text or "").strip()


def number(value: str) -> int | None:
    return int(value) if value.strip() else None


# Random exports -------------------------------------------------------------------------

# What XML 1.0 can hold (no surrogates, no control characters but tab and line feed:
# a carriage return would be read as a line feed, by both readings alike).
chars = st.characters(exclude_categories=("Cs", "Cc", "Cn")) | st.sampled_from("\t\n")
texts = st.text(chars, max_size=30)


@st.composite
def written(draw, value: str) -> str:
    """``value`` as XML text: escaped, or in CDATA, with whitespace around or not."""
    cdata = "]]>" not in value and draw(st.booleans())
    body = f"<![CDATA[{value}]]>" if cdata else escape(value)
    return draw(st.sampled_from(["", " ", "\n  "])) + body


def element(name: str, content) -> st.SearchStrategy[str]:
    return content.map(lambda body: f"<{name}>{body}</{name}>")


def wp_fields(*names: str, required: tuple[str, ...] = ()) -> st.SearchStrategy[str]:
    """Some of the ``wp:`` elements ``names`` (all of ``required``), in any order, some
    twice, with unknown ones among them."""
    some = st.lists(st.sampled_from(names), max_size=len(names) + 2)
    words = st.text("abcdefghij-_", min_size=1, max_size=12)

    @st.composite
    def build(draw) -> str:
        chosen = list(required) + draw(some)
        draw(st.randoms()).shuffle(chosen)
        parts = []
        for name in chosen:
            if name in ("author_id", "term_id", "post_id", "post_parent"):
                value = draw(st.integers(0, 10**6).map(str) | st.just(""))
            elif name in required:
                value = draw(words)
            else:
                value = draw(texts)
            parts.append(f"<wp:{name}>{draw(written(value))}</wp:{name}>")
        if draw(st.booleans()):
            parts.insert(draw(st.integers(0, len(parts))), "<wp:unknown>x</wp:unknown>")
        return "".join(parts)

    return build()


channel_fields = st.sampled_from(
    ["title", "link", "language", "description", "wp:wxr_version", "wp:base_site_url"]
).flatmap(lambda name: element(name, texts.flatmap(written)))
authors = element(
    "wp:author",
    wp_fields("author_display_name", "author_id", required=("author_login",)),
)
terms = st.one_of(
    element(
        "wp:category",
        wp_fields(
            "term_id", "cat_name", "category_parent", "category_description",
            required=("category_nicename",),
        ),
    ),
    element("wp:tag", wp_fields("term_id", "tag_name", "tag_description", required=("tag_slug",))),
    element(
        "wp:term",
        wp_fields(
            "term_id", "term_name", "term_parent", "term_description",
            required=("term_taxonomy", "term_slug"),
        ),
    ),
)  # fmt: skip
item_categories = st.builds(
    lambda domain, nicename, body: f"<category{domain}{nicename}>{body}</category>",
    st.sampled_from(["", ' domain="post_tag"', ' domain="genre"']),
    st.one_of(st.just(""), texts.map(lambda value: f" nicename={quoteattr(value)}")),
    texts.flatmap(written),
)
postmeta = element("wp:postmeta", wp_fields("meta_value", required=("meta_key",)))
item_children = st.one_of(
    st.sampled_from(["title", "link", "guid", "dc:creator", "description", "x:other"]).flatmap(
        lambda name: element(name, texts.flatmap(written))
    ),
    # Long enough, now and then, for an item to span the parser's chunks.
    element("content:encoded", st.text(chars, max_size=3000).flatmap(written)),
    wp_fields(
        "post_id", "post_date", "post_date_gmt", "post_modified", "post_modified_gmt",
        "post_name", "status", "post_parent", "post_type", "post_password", "attachment_url",
        "menu_order",
    ),
    item_categories,
    postmeta,
)  # fmt: skip
items = element("item", st.lists(item_children, max_size=8).map("\n".join))
unknown = st.sampled_from(["<generator>WordPress</generator>", "<x:thing><item/></x:thing>"])


@st.composite
def exports(draw) -> bytes:
    """A WXR document: channel fields, authors, terms and items, in any order (WordPress
    writes them in that order, the reader does not rely on it), in one of WXR's
    namespaces."""
    children = draw(
        st.lists(st.one_of(channel_fields, authors, terms, items, unknown), max_size=12)
    )
    head = RSS.format(wp=draw(st.sampled_from(wxr.WP_NAMESPACES)))
    separator = draw(st.sampled_from(["", "\n"]))
    body = separator.join(children)
    return f'<?xml version="1.0" encoding="UTF-8"?>\n{head}<channel>{body}</channel></rss>'.encode()


chunks = st.sampled_from([1, 7, 100, 4096, wxr.CHUNK])
SETTINGS = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(exports(), chunks)
def test_a_streamed_export_reads_as_its_whole_tree(data, chunk):
    assert read(data, chunk) == whole_tree(data)


@SETTINGS
@given(exports(), st.floats(0, 1, exclude_max=True), chunks)
def test_an_export_cut_short_is_refused_after_the_records_before_the_cut(data, where, chunk):
    cut = data[: int(len(data) * where)]
    records: list[wxr.Record] = []
    with (
        # Not well-formed, mostly; a start tag cut inside its name is an element of that
        # name to libxml2, refused as such (``<cha> where <channel> was expected``).
        pytest.raises(wxr.WxrError) as refused,
        mock.patch.object(wxr, "CHUNK", chunk),
    ):
        records.extend(wxr.read(io.BytesIO(cut)))
    assert records == whole_tree(data)[: len(records)]
    assert 0 <= refused.value.line <= cut.count(b"\n") + 1


# Files that are no export ---------------------------------------------------------------

WP = 'xmlns:wp="http://wordpress.org/export/1.1/"'


@pytest.mark.parametrize(
    ("content", "message", "line"),
    [
        (b"<?xml version='1.0'?>\n<urlset>\n<url/></urlset>", "the root element is <urlset>", 2),
        (b"<rss>\n<channel/>\n<item/></rss>", "<item> where <channel> was expected", 3),
        (b"<rss>\n<image/>\n<channel><item/></channel></rss>", "<image> where <channel>", 2),
        (b"<rss><channel>\n<item>\n</channel></rss>", "Opening and ending tag mismatch", 3),
        (f"<rss {WP}><channel>\n<item><wp:post_id>7a".encode(), "not well-formed XML", 2),
        (
            f"<rss {WP}><channel>\n\n<item><wp:post_id>7a</wp:post_id></item>".encode(),
            "wp:post_id is '7a', not a number",
            3,
        ),
        (
            f"<rss {WP}><channel>\n<wp:author><wp:author_id>1</wp:author_id></wp:author>".encode(),
            "an author without <wp:author_login>",
            2,
        ),
    ],
    ids=["a sitemap", "item beside the channel", "before", "malformed", "cut", "id", "login"],
)
def test_what_is_no_export_is_refused_with_its_line(content, message, line):
    with pytest.raises(wxr.WxrError, match=message) as refused:
        read(content)
    assert refused.value.line == line


@pytest.mark.parametrize(
    "head",
    [b'<!DOCTYPE rss [<!ENTITY a "aaaa">]>\n<rss><channel>', b"<urlset>"],
    ids=["a DTD", "another root"],
)
def test_a_file_that_is_no_export_is_refused_at_its_first_chunk(head):
    stream = io.BytesIO(head + b"<item><title>&amp;</title></item>" * 100_000)
    with pytest.raises(wxr.WxrError, match=r"has a DTD|not <rss>"):
        list(wxr.read(stream))
    assert stream.tell() == wxr.CHUNK
