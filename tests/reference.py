"""The plain reference: the sitemaps a site should serve, written straight from the spec.

SPEC §3 (which URLs are listed) and §5 (their ``lastmod`` and images), and the pagination
of §4, computed the slow and obvious way: every row read into memory, every rule a line of
Python. It shares no code with the engine (``sitemap_server.content``, ``providers``,
``sitemaps``); it reads the content through the models, which only describe the tables.
The model-based test compares what the server serves with it after every step, so a rule
the engine gets wrong cannot also be wrong the same way in the check that catches it.

Where the spec is silent, the reference says what the product decided, each in one place:
- the home page is listed while the site has a listed post, dated by the newest one, in the
  page sitemap when the front page is a static page (with that page's images), else in the
  post sitemap; the static front page is not listed a second time under its own URL;
- the posts page is dated by the newest listed post (its own date while there is none);
- a type's archive (``archive_path``) is listed first in its sitemap, dated by the newest of
  its posts, unless the type is noindexed;
- a part n ≥ 2 has its post's date and no images;
- an author or a term counts the listed posts as their sitemaps date them (``lastmod``);
- a year or month in a permalink is the one of the publication time in the site's time
  zone (as WordPress's);
- a permalink's category is the post's category of the lowest id with its parents
  (``uncategorized`` when in none); a missing author leaves no empty segment.
- the site's excluded posts (``excluded_post_ids``) are left out like a post flagged
  "exclude from sitemap", so they date no author, term or home page;
- with ``author_sitemap`` off there is no author sitemap: not in the index, no document.

The video and news sitemaps (plugins) are not part of it: the rebuild check covers them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from html.parser import HTMLParser
from typing import Any
from urllib.parse import quote, urldefrag, urljoin, urlsplit
from zoneinfo import ZoneInfo

from sqlalchemy import select
from sqlalchemy.orm import Session

from sitemap_server.models import Author, Post, PostType, Taxonomy, Term, post_terms
from sitemap_server.models.site import ExcludedPost, SiteSettings
from sitemap_server.testing import SITEMAP_NS, parse_sitemap

IMAGE_NS = "http://www.google.com/schemas/sitemap-image/1.1"
XHTML_NS = "http://www.w3.org/1999/xhtml"
NS = {"s": SITEMAP_NS, "image": IMAGE_NS, "xhtml": XHTML_NS}
MAX_URL = 2048  # S-208: shorter than 2,048 characters
MAX_IMAGES = 1000  # S-403
# RFC 3986: what a path may carry unescaped (pchar and "/").
PATH_SAFE = "/:@!$&'()*+,;=-._~%"
# The plugins' sitemaps, left to the rebuild check.
PLUGIN_SITEMAPS = ("video-sitemap", "news-sitemap")


@dataclass(frozen=True)
class Url:
    """One ``<url>``: what a crawler reads of it."""

    loc: str
    lastmod: datetime | None
    images: tuple[str, ...] = ()
    # S-405: (hreflang, href) of each listed member of its translation group, then x-default.
    alternates: tuple[tuple[str, str], ...] = ()


@dataclass
class Sitemaps:
    """What a crawler finds: the index (sitemap URL → lastmod) and each listed document
    (its path on the application → its ``<url>`` entries, in order)."""

    index: dict[str, datetime | None]
    documents: dict[str, list[Url]]
    site_url: str = field(default="", compare=False)


def second(value: datetime | None) -> datetime | None:
    """W3C dates carry whole seconds."""
    return None if value is None else value.replace(microsecond=0)


# What the spec says ---------------------------------------------------------------------


def expected(session: Session, configured_site_url: str, now: datetime) -> Sitemaps:
    """The sitemaps SPEC §3, §4 and §5 give the content in ``session`` at ``now``."""
    site = session.get_one(SiteSettings, 1)
    site_url = (site.site_url or configured_site_url).rstrip("/")
    if site.private:  # S-205: every sitemap empty, the index too
        return Sitemaps(index={}, documents={}, site_url=site_url)
    types = {t.name: t for t in session.scalars(select(PostType))}
    taxonomies = {t.name: t for t in session.scalars(select(Taxonomy))}
    posts = {p.id: p for p in session.scalars(select(Post))}
    authors = {a.id: a for a in session.scalars(select(Author))}
    terms = {t.id: t for t in session.scalars(select(Term))}
    links = session.execute(select(post_terms.c.post_id, post_terms.c.term_id)).all()
    excluded = set(session.scalars(select(ExcludedPost.post_id)))  # Yoast's "exclude posts"

    def permalink(post: Post) -> str:  # S-103
        if post.path:
            return site_url + quote(post.path, safe=PATH_SAFE)
        post_type = types[post.type]
        slugs = [quote(post.slug, safe="")]  # Unicode slugs: percent-encoded UTF-8
        parent = post.parent_id if post_type.hierarchical else None
        while parent is not None:
            slugs.insert(0, quote(posts[parent].slug, safe=""))
            parent = posts[parent].parent_id
        date = post.published_at or post.modified_at
        local = date.astimezone(ZoneInfo(site.timezone or "UTC"))
        categories = sorted(
            term_id
            for post_id, term_id in links
            if post_id == post.id and terms[term_id].taxonomy == "category"
        )
        lineage: list[str] = []
        term_id = categories[0] if categories else None
        while term_id is not None:
            lineage.insert(0, quote(terms[term_id].slug, safe=""))
            term_id = terms[term_id].parent_id
        author = authors[post.author_id].slug if post.author_id else ""
        path = post_type.permalink_pattern
        for name, value in {
            "slug": slugs[-1],
            "path": "/".join(slugs),
            "id": str(post.id),
            "type": post.type,
            "year": f"{local.year:04d}",
            "month": f"{local.month:02d}",
            "day": f"{local.day:02d}",
            "hour": f"{local.hour:02d}",
            "minute": f"{local.minute:02d}",
            "second": f"{local.second:02d}",
            "author": quote(author, safe=""),
            "category": "/".join(lineage) or "uncategorized",
        }.items():
            path = path.replace("{" + name + "}", value)
        while "//" in path:
            path = path.replace("//", "/")
        return site_url + path

    def listed_post(post: Post) -> bool:  # S-201, S-208
        post_type = types[post.type]
        robots = post.robots
        if robots == "default":
            robots = "noindex" if post_type.noindex else "index"
        url = permalink(post)
        return (
            post.status in ("publish", "future")
            and not post.password
            and post_type.public
            and robots != "noindex"
            and (not post.canonical or post.canonical == url)
            and not post.exclude_from_sitemap
            and post.id not in excluded
            and post.published_at is not None
            and post.published_at <= now
            and good_loc(url)
        )

    def images(  # S-403: of a post, or of a term (its description as the HTML)
        page_url: str, html: str, featured: str | None = None, extras: list[str] | None = None
    ) -> tuple[str, ...]:
        hosts = {urlsplit(site_url).hostname, *site.allowed_image_hosts}
        found: list[str] = []
        for raw in [featured or "", *images_in(html), *(extras or [])]:
            url = urldefrag(urljoin(page_url, raw.strip())).url if raw.strip() else ""
            parts = urlsplit(url)
            on_host = parts.scheme in ("http", "https") and parts.hostname in hosts
            if on_host and len(url) < MAX_URL and url not in found:
                found.append(url)
        return tuple(found[:MAX_IMAGES])

    static_front = site.front_page == "page" and site.front_page_id is not None
    # Each type's sitemap: (key, part) → Url; key 0 is the home page or the type's archive.
    by_type: dict[str, dict[tuple[int, int], Url]] = {
        name: {} for name, t in types.items() if t.public
    }
    for post in posts.values():
        if post.type not in by_type or not listed_post(post):
            continue
        if static_front and post.id == site.front_page_id:
            continue  # S-206: listed once, as the home page
        url = permalink(post)
        lastmod = max(post.published_at, post.modified_at)
        by_type[post.type][(post.id, 1)] = Url(
            url, lastmod, images(url, post.content, post.featured_image, post.images)
        )
        for part in range(2, post.parts + 1):  # S-103, S-207
            part_url = url if url.endswith("/") else url + "/"
            by_type[post.type][(post.id, part)] = Url(f"{part_url}{part}/", lastmod)

    x_default = site.x_default_language or site.language

    def with_alternates(
        entries: dict[tuple[int, int], Url], members: dict[int, tuple[str | None, str | None]]
    ) -> None:
        """S-405: each listed member of a group (``members``: id -> (group, language)) gets
        the URL of every listed member by language, then x-default; none alone."""
        groups: dict[str, dict[str, str]] = {}
        for (key, part), url in entries.items():
            group, language = members.get(key, (None, None))
            if part == 1 and group and language:
                groups.setdefault(group, {})[language] = url.loc
        for (key, part), url in list(entries.items()):
            group, _ = members.get(key, (None, None))
            found = groups.get(group or "", {})
            if part != 1 or len(found) < 2:
                continue
            links = [(language, found[language]) for language in sorted(found)]
            if x_default in found:
                links.append(("x-default", found[x_default]))
            entries[key, part] = Url(url.loc, url.lastmod, url.images, tuple(links))

    post_groups = {p.id: (p.translation_group, p.language) for p in posts.values()}
    for entries in by_type.values():
        with_alternates(entries, post_groups)

    def newest(type_name: str) -> datetime | None:
        dates = [u.lastmod for (key, _), u in by_type.get(type_name, {}).items() if key]
        return max(dates, default=None)

    newest_post = newest("post")
    if site.posts_page_id is not None and (site.posts_page_id, 1) in by_type.get("page", {}):
        own = by_type["page"][(site.posts_page_id, 1)]
        by_type["page"][(site.posts_page_id, 1)] = Url(
            own.loc, newest_post or own.lastmod, own.images, own.alternates
        )
    home_type = "page" if static_front else "post"
    if home_type in by_type and newest_post is not None:  # S-206, S-402
        front = posts.get(site.front_page_id) if static_front else None
        home = site_url + "/"
        home_images = (
            images(home, front.content, front.featured_image, front.images)
            if front is not None
            else ()
        )
        by_type[home_type][(0, 1)] = Url(home, newest_post, home_images)
    for name in by_type:
        archive, archive_date = types[name].archive_path, newest(name)
        if name != home_type and archive and not types[name].noindex and archive_date:
            by_type[name][(0, 1)] = Url(site_url + archive, archive_date)

    # Authors and terms count the posts listed above (S-202, S-203, S-402).
    listed_dates = {
        key: url.lastmod
        for entries in by_type.values()
        for (key, part), url in entries.items()
        if key and part == 1
    }
    by_author: dict[str, dict[tuple[int, int], Url]] = {}
    if site.author_sitemap:  # the settings can turn the author sitemap off as a whole
        by_author["author"] = {}
        for author in authors.values():
            dates = [
                date
                for post_id, date in listed_dates.items()
                if posts[post_id].author_id == author.id
            ]
            if dates and not author.noindex:
                url = f"{site_url}/author/{quote(author.slug, safe='')}/"
                by_author["author"][(author.id, 1)] = Url(url, max(dates))

    by_taxonomy: dict[str, dict[tuple[int, int], Url]] = {
        name: {} for name, t in taxonomies.items() if t.public and not t.noindex
    }
    posts_of_term: dict[int, set[int]] = {}
    for post_id, term_id in links:
        posts_of_term.setdefault(term_id, set()).add(post_id)
    for term in terms.values():
        if term.taxonomy not in by_taxonomy or term.noindex:
            continue
        taxonomy = taxonomies[term.taxonomy]
        family = [term.id]  # the term and, in a hierarchical taxonomy, its descendants
        while taxonomy.hierarchical:
            more = [t.id for t in terms.values() if t.parent_id in family and t.id not in family]
            if not more:
                break
            family += more
        dates = [
            listed_dates[post_id]
            for member in family
            for post_id in posts_of_term.get(member, ())
            if post_id in listed_dates
        ]
        slugs = [quote(term.slug, safe="")]
        parent = term.parent_id if taxonomy.hierarchical else None
        while parent is not None:
            slugs.insert(0, quote(terms[parent].slug, safe=""))
            parent = terms[parent].parent_id
        base = taxonomy.archive_base.strip("/")
        url = f"{site_url}{'/' + base if base else ''}/{'/'.join(slugs)}/"
        if dates and (not term.canonical or term.canonical == url) and good_loc(url):
            by_taxonomy[term.taxonomy][(term.id, 1)] = Url(
                url, max(dates), images(url, term.description)
            )

    term_groups = {t.id: (t.translation_group, t.language) for t in terms.values()}
    for entries in by_taxonomy.values():
        with_alternates(entries, term_groups)

    # S-303, S-304, S-301: pages of "entries per page", in key order; the index dates each.
    result = Sitemaps(index={}, documents={}, site_url=site_url)
    for name, entries in [*by_type.items(), *by_author.items(), *by_taxonomy.items()]:
        ordered = [entries[position] for position in sorted(entries)]
        size = site.entries_per_page
        for number, start in enumerate(range(0, len(ordered), size), start=1):
            page = [
                Url(u.loc, second(u.lastmod), u.images, u.alternates)
                for u in ordered[start : start + size]
            ]
            path = f"/{name}-sitemap{number if number > 1 else ''}.xml"
            result.documents[path] = page
            result.index[site_url + path] = max(
                (u.lastmod for u in page if u.lastmod), default=None
            )
    return result


def good_loc(url: str) -> bool:
    """S-208: shorter than 2,048 characters, no fragment."""
    return len(url) < MAX_URL and "#" not in url


class _Images(HTMLParser):
    """``<img src>``, the widest candidate of its ``srcset``, and the widest of the
    ``srcset`` of each ``<source>`` whose element is a ``<picture>`` (S-403); a ``<source>``
    of a ``<video>`` or an ``<audio>`` is no image."""

    def __init__(self) -> None:
        super().__init__()
        self.found: list[str] = []
        self.parents: list[str] = []  # the open picture, video and audio elements

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attributes = dict(attrs)
        if tag in ("picture", "video", "audio"):
            self.parents.append(tag)
        in_picture = bool(self.parents) and self.parents[-1] == "picture"
        if tag == "img" and attributes.get("src"):
            self.found.append(attributes["src"] or "")
        if tag != "img" and not (tag == "source" and in_picture):
            return
        candidates = []
        for candidate in (attributes.get("srcset") or "").split(","):
            if not candidate.strip():
                continue
            url, *descriptor = candidate.split()
            width = float(descriptor[0][:-1]) if descriptor else 1.0
            candidates.append((width, -len(candidates), url))
        if candidates:
            self.found.append(max(candidates)[2])

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.handle_starttag(tag, attrs)  # "<picture/>" is open: HTML ignores the "/"

    def handle_endtag(self, tag: str) -> None:
        while tag in self.parents:
            if self.parents.pop() == tag:
                break


def images_in(html: str) -> list[str]:
    parser = _Images()
    parser.feed(html)
    parser.close()
    return parser.found


# What the server serves -----------------------------------------------------------------


def served(app: Any, site_url: str) -> Sitemaps:
    """The index and every document it lists, as a crawler reads them (through ``app``,
    which answers at the site's paths without its prefix)."""
    index = parse_sitemap(app.get("/sitemap_index.xml", status=200).body)
    found = Sitemaps(index={}, documents={}, site_url=site_url)
    for sitemap in index.iterfind("s:sitemap", NS):
        loc = sitemap.findtext("s:loc", namespaces=NS)
        if any(name in loc for name in PLUGIN_SITEMAPS):
            continue
        found.index[loc] = parse_date(sitemap.findtext("s:lastmod", namespaces=NS))
        assert loc.startswith(site_url + "/"), loc
        path = loc[len(site_url) :]
        document = parse_sitemap(app.get(path, status=200).body)
        found.documents[path] = [
            Url(
                url.findtext("s:loc", namespaces=NS),
                parse_date(url.findtext("s:lastmod", namespaces=NS)),
                tuple(image.text for image in url.iterfind("image:image/image:loc", NS)),
                tuple(
                    (link.get("hreflang"), link.get("href"))
                    for link in url.iterfind("xhtml:link", NS)
                ),
            )
            for url in document.iterfind("s:url", NS)
        ]
    return found


def parse_date(text: str | None) -> datetime | None:
    return None if text is None else datetime.fromisoformat(text)


def differences(expected: Sitemaps, served: Sitemaps) -> list[str]:
    """Each way the served sitemaps differ from the expected ones, in words; and each
    URL served twice (S-107: one URL, one object, whatever the content)."""
    found = []
    listed_in: dict[str, list[str]] = {}
    for path, urls in served.documents.items():
        for url in urls:
            listed_in.setdefault(url.loc, []).append(path)
    for loc, paths in sorted(listed_in.items()):
        if len(paths) > 1:
            found.append(f"{loc} is served {len(paths)} times: {', '.join(paths)}")
    for loc in sorted(expected.index.keys() | served.index.keys()):
        want, got = expected.index.get(loc, "absent"), served.index.get(loc, "absent")
        if want != got:
            found.append(f"index: {loc}: expected {want}, served {got}")
    for path in sorted(expected.documents.keys() & served.documents.keys()):
        want_urls, got_urls = expected.documents[path], served.documents[path]
        if want_urls != got_urls:
            wanted = {u.loc for u in want_urls}
            got = {u.loc for u in got_urls}
            for loc in sorted(wanted - got):
                found.append(f"{path}: {loc} expected, not served")
            for loc in sorted(got - wanted):
                found.append(f"{path}: {loc} served, not expected")
            for want_url, got_url in zip(want_urls, got_urls, strict=False):
                if want_url != got_url and want_url.loc in got and got_url.loc in wanted:
                    found.append(f"{path}: expected {want_url}, served {got_url}")
    return found
