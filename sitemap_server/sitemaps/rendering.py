"""What a sitemap document is made of: each entry rendered once, when it changes.

The maintainer renders an entry's ``<url>`` element through its provider's template when
it stores the entry (``EntryRenderer``), and stores the text beside the row
(``sitemap_entries.xml``); a page is then its frame (``urlset.pt``: the declaration, the
stylesheet, the root element with the namespaces) around its stored fragments, in key
order (``document``). The index is made the same way: the maintainer renders a page's
``<sitemap>`` element (``sitemap.pt``) when it cuts the page or moves its date
(``sitemap_pages.xml``), and the index is its frame (``sitemapindex.pt``) around them.
A request renders nothing per entry, and holds no document whole: the fragments go from
the database to the compressor a thousand at a time.

A fragment holds everything about its entry but the site URL, which it marks with
``SITE_MARK`` (a character XML 1.0 cannot carry, so no content holds it): the page puts
the site URL in, so a site served under a new URL (the ini file's) never serves the old
one. What else a fragment depends on re-renders it through the change log: the site's
time zone (a site-wide change of every entry), the provider's template and the index
entry's, and the settings from outside the database that documents depend on (the site
URL in effect, which images on the site's host carry; the page size; plugins' document
settings: ``Site.output_settings``). ``render_key`` names the last two: a provider
whose stored fragments were made with others is rebuilt whole (``maintenance.refresh``,
before a page of it is served, ``reader.Reader``), so a start with another ini file or
environment serves what they imply with no command run.

A provider's template renders one entry; it receives ``entry`` (``loc``, ``lastmod``,
``images``, ``extra``), ``provider`` and ``local`` (a W3C date-time of ``extra`` in the
site's time zone).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Iterator
from datetime import UTC, tzinfo
from functools import cache
from importlib.resources import files
from itertools import islice
from types import SimpleNamespace
from typing import Any

from chameleon import PageTemplateFile

from ..content.sanitize import clean_text
from ..documents import sitemap_path
from .entries import Entry
from .xml import local_w3c, w3c, xml_text

# Stands for the site URL in a stored fragment (XML 1.0 cannot carry U+0001).
SITE_MARK = "\x01"
# The frame of every page of entries, and where a frame's body goes.
FRAME = "sitemap_server:templates/urlset.pt"
BODY_MARK = "\x02"
# The index's frame, and its entry for one page.
INDEX_FRAME = "sitemap_server:templates/sitemapindex.pt"
INDEX_ENTRY = "sitemap_server:templates/sitemap.pt"
# Fragments joined into one piece of a page (about 180 KB).
PIECE_ENTRIES = 1000
# Changes when what the core puts in a fragment changes (not its templates: those are
# read for ``render_key``), so fragments stored by an older version are rendered again.
FRAGMENT_FORMAT = "1"
TEMPLATES: dict[str, PageTemplateFile] = {}
# The core's entry template (``Provider.template``'s default), and the source of it that
# ``url_element`` writes the same text as without a template call: a Chameleon call cost
# a rebuild about 60 µs an entry, a third of all it did. Any other source of it (edited,
# and ``url_element`` not yet) is rendered by Chameleon, as every other template is.
URL_TEMPLATE = "sitemap_server:templates/url.pt"
URL_TEMPLATE_SHA256 = "488605ec5fb6403c99d9ff7a18e86a58cecb6cc100f1dfe318c2030ef28720f2"


def template(spec: str) -> PageTemplateFile:
    """The Chameleon template of an asset spec (``package:path``), compiled once."""
    if spec not in TEMPLATES:
        package, _, path = spec.partition(":")
        TEMPLATES[spec] = PageTemplateFile(str(files(package).joinpath(path)))
    return TEMPLATES[spec]


def _source(spec: str) -> bytes:
    package, _, path = spec.partition(":")
    return files(package).joinpath(path).read_bytes()


@cache
def written_without_template(spec: str) -> bool:
    """Whether ``url_element`` renders what the template ``spec`` does."""
    return spec == URL_TEMPLATE and hashlib.sha256(_source(spec)).hexdigest() == URL_TEMPLATE_SHA256


@cache
def render_key(spec: str, settings: str = "") -> str:
    """Names the template ``spec`` and the index entry's as they are now, and the output
    settings (``settings_key``): a provider's fragments and pages made with them carry
    this key (``sitemap_versions.rendered_with``); another one rebuilds it whole."""
    parts = (FRAGMENT_FORMAT.encode(), _source(INDEX_ENTRY), _source(spec), settings.encode())
    return hashlib.sha1(b"\0".join(parts)).hexdigest()[:16]


def settings_key(output: dict[str, Any]) -> str:
    """A short name of ``Site.output_settings`` (what ``render_key`` takes)."""
    text = json.dumps(output, sort_keys=True, separators=(",", ":"))
    return hashlib.sha1(text.encode()).hexdigest()[:16]


# What a private site's documents say, in every view of them (the XSL's, the page for
# people, the CSS's): why they list nothing, and how the owner changes it.
PRIVATE_NOTE = (
    'This site is private: its "private" setting is on (WordPress calls it "Discourage '
    'search engines from indexing this site"), so its sitemaps list no URL, robots.txt '
    "asks every crawler to stay away, and no search engine is told of a change. Its owner "
    "publishes the sitemaps by turning the setting off (PATCH /api/settings with "
    '{"private": false}).'
)


def instruction_text(value: str) -> str:
    """``value`` as the text of a processing instruction: on one line, with the characters
    XML cannot carry removed and no ``?>`` (which would end it). No entity is read in an
    instruction, so nothing else is escaped: ``&`` is ``&``."""
    return " ".join(clean_text(value).replace("?>", "? >").split())


def head(*, xsl: str | None, css: str, html: str, title: str, private: bool) -> str:
    """What leads a document, before its root element, for browsers and people:

    - the instruction naming its XSL (``xsl``; None when ``sitemap_server.xsl_instruction``
      is off), then its CSS (``css``: a browser without XSLT lays the XML out with it);
    - ``<?html-view URL?>``: its page for people, which the stylesheets link to;
    - ``<?site-title …?>``: the site's title (its host when it has none), which the views
      show;
    - ``<?site-private …?>`` when the site is private: why it lists nothing
      (``PRIVATE_NOTE``), which every view shows;
    - a comment naming the page for people, for whoever reads the source.

    Crawlers and schemas ignore instructions and comments: the document is the same
    sitemap either way."""
    lines = []
    if xsl is not None:
        lines.append(f'<?xml-stylesheet type="text/xsl" href="{xml_text(xsl)}"?>')
    lines.append(f'<?xml-stylesheet type="text/css" href="{xml_text(css)}"?>')
    lines.append(f"<?html-view {instruction_text(html)}?>")
    lines.append(f"<?site-title {instruction_text(title)}?>")
    if private:
        lines.append(f"<?site-private {instruction_text(PRIVATE_NOTE)}?>")
    lines.append(f"<!--{people_note(html)}-->")
    return "\n".join(lines)


def people_note(url: str) -> str:
    """The comment that leads every document: where a person reads it, for whoever reads
    its source (a browser's source view, a tree view without stylesheets; a browser
    without XSLT shows the document's CSS instead, ``html.css_view``). A comment holds
    no ``--``: a URL's is written ``-%2D``, which a browser reads back the same (hosts
    and paths are percent-decoded)."""
    return f" A sitemap, for search engines. People read it at {url.replace('--', '-%2D')} "


def index_fragment(name: str, page: int, lastmod: Any, zone: tzinfo) -> str:
    """The index's ``<sitemap>`` element for a page, the site URL marked."""
    entry = SimpleNamespace(
        loc=SITE_MARK + xml_text(sitemap_path(name, page)), lastmod=w3c(lastmod, zone)
    )
    text: str = template(INDEX_ENTRY)(sitemap=entry)
    return text


class RenderedEntry:
    """One entry as templates use it: ``loc`` (``SITE_MARK`` and its escaped path, or the
    absolute URL), ``lastmod``, ``images`` (escaped, absolute), ``alternates`` (its
    translations: each with ``hreflang`` and ``href``, escaped, absolute) and the
    provider's ``extra``."""

    __slots__ = ("alternates", "extra", "images", "lastmod", "loc")

    def __init__(self, site: str, entry: Any, zone: tzinfo = UTC) -> None:
        self.loc = site + xml_text(entry.path)
        self.lastmod = w3c(entry.lastmod, zone)
        self.images = [xml_text(i) for i in entry.images or ()]
        self.alternates = [
            SimpleNamespace(hreflang=xml_text(hreflang), href=site + xml_text(path))
            for hreflang, path in entry.alternates or ()
        ]
        self.extra = entry.extra


class EntryRenderer:
    """Renders the entries of one provider for storing: ``render(entry)`` is its
    fragment and the bytes it takes in a page served from ``site_url``."""

    def __init__(self, provider: Any, site_url: str, zone: tzinfo) -> None:
        self.provider = provider
        self.zone = zone
        self.template = template(provider.template)
        self.plain = written_without_template(provider.template)
        # The site URL's bytes in a page, less the mark's one.
        self.site_bytes = len(xml_text(site_url).encode()) - 1

    def local(self, value: str | None) -> str | None:
        return local_w3c(value, self.zone)

    def render(self, entry: Entry) -> tuple[str, int]:
        text: str
        if self.plain:
            text = url_element(entry, self.zone)
        else:
            text = self.template(
                entry=RenderedEntry(SITE_MARK, entry, self.zone),
                provider=self.provider,
                local=self.local,
            )
        return text, len(text.encode()) + self.site_bytes * text.count(SITE_MARK)


def url_element(entry: Entry, zone: tzinfo) -> str:
    """The ``<url>`` element the core's template (``URL_TEMPLATE``) renders of ``entry``,
    the site URL marked: the same text, written here (``tests/unit/test_rendering.py``
    compares them)."""
    text = f"<url>\n<loc>{SITE_MARK}{xml_text(entry.path)}</loc>"
    lastmod = w3c(entry.lastmod, zone)
    if lastmod:  # digits, "-", ":", "T" and "+": the template escapes nothing in it
        text += f"<lastmod>{lastmod}</lastmod>"
    for hreflang, path in entry.alternates or ():
        text += (
            f'<xhtml:link rel="alternate" hreflang="{xml_text(hreflang)}"'
            f' href="{SITE_MARK}{xml_text(path)}"/>'
        )
    for image in entry.images or ():
        text += f"<image:image><image:loc>{xml_text(image)}</image:loc></image:image>"
    return text + "</url>\n"


def document(
    frame: str, fragments: Iterable[str], site_url: str, lead: str, **values: Any
) -> Iterator[str]:
    """A document in pieces: ``frame`` (a template; ``values``, its ``head``: ``lead``,
    and its ``body``) around ``fragments`` (stored, in order), the site URL in."""
    start, tail = template(frame)(body=BODY_MARK, head=lead, **values).split(BODY_MARK)
    site = xml_text(site_url)
    yield start
    fragments = iter(fragments)
    while piece := "".join(islice(fragments, PIECE_ENTRIES)):
        yield piece.replace(SITE_MARK, site)
    yield tail
