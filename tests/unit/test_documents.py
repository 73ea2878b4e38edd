"""The read path's URL grammar (``sitemap_server/documents.py``): each form of it (the
paths the application writes, the routes Pyramid matches, the patterns ``explain`` and
the content URL rule read) agrees with the others, for any sitemap name and page."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st
from pyramid.config import Configurator
from pyramid.interfaces import IRoutesMapper

from sitemap_server import documents
from sitemap_server.documents import (
    INDEX_FORMS,
    INDEX_PATH,
    MAX_INDEXES,
    MAX_PAGES,
    PAGE_FORMS,
    PAGE_PATH,
    READ_PATH,
    css_path,
    html_url,
    index_name,
    index_path,
    sitemap_name,
    sitemap_path,
)

NAMES = st.from_regex(re.compile(r"[a-z0-9_]{1,30}"), fullmatch=True)
PAGES = st.integers(min_value=1, max_value=MAX_PAGES)
PARTS = st.integers(min_value=1, max_value=MAX_INDEXES)


def routes() -> IRoutesMapper:
    """The routes of the read path's documents, as Pyramid matches them."""
    config = Configurator()
    config.add_route("index", documents.INDEX_ROUTE)
    config.add_route("page", documents.PAGE_ROUTE)
    config.add_route("html", documents.HTML_ROOT + documents.DOCUMENT_ROUTE + ".html")
    config.add_route("css", documents.HTML_ROOT + documents.DOCUMENT_ROUTE + ".css")
    config.commit()
    return config.registry.getUtility(IRoutesMapper)


MAPPER = routes()


def matched(path: str) -> tuple[str, dict[str, str]] | None:
    for route in MAPPER.get_routes():
        found = route.match(path)
        if found is not None:
            return route.name, found
    return None


@given(NAMES, PAGES)
def test_a_page_path_is_routed_explained_and_reserved(name, page):
    path = sitemap_path(name, page)
    number = "" if page == 1 else str(page)
    assert matched(path) == ("page", {"name": name, "number": number, "form": "xml"})
    found = PAGE_PATH.match(path)
    assert found is not None and found.groups() == (name, number)
    assert INDEX_PATH.match(path) is None
    assert READ_PATH.match(path)
    document = sitemap_name(name, page)
    assert matched(css_path(document)) == ("css", {"document": document})
    html = html_url("", document)
    assert matched(html) == ("html", {"document": document})
    assert READ_PATH.match(html) and READ_PATH.match(css_path(document))
    for form in PAGE_FORMS:
        other = sitemap_path(name, page, form)
        assert matched(other) == ("page", {"name": name, "number": number, "form": form})
        assert READ_PATH.match(other)


@given(PARTS)
def test_an_index_path_is_routed_explained_and_reserved(part):
    path = index_path(part)
    number = "" if part == 1 else str(part)
    assert matched(path) == ("index", {"number": number, "form": "xml"})
    found = INDEX_PATH.match(path)
    assert found is not None and found.group(1) == number
    assert PAGE_PATH.match(path) is None
    assert READ_PATH.match(path)
    assert matched(css_path(index_name(part))) == ("css", {"document": index_name(part)})
    for form in INDEX_FORMS:
        other = index_path(part, form)
        assert matched(other) == ("index", {"number": number, "form": form})
        assert READ_PATH.match(other)
    assert matched(index_path(part, "txt")) is None  # no index of text files
