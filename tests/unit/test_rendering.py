"""An entry's fragment written without a template call is the one its template renders.

The maintainer writes the core's ``<url>`` element in Python (``rendering.url_element``)
instead of calling Chameleon with ``templates/url.pt`` for every entry: a crawler must not
tell the difference, character for character, whatever the entry holds.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

from hypothesis import given, settings
from hypothesis import strategies as st

from sitemap_server.models.site import site_zone
from sitemap_server.sitemaps.entries import Entry
from sitemap_server.sitemaps.rendering import (
    SITE_MARK,
    URL_TEMPLATE,
    EntryRenderer,
    RenderedEntry,
    template,
    url_element,
    written_without_template,
)
from sitemap_server.testing.hostile import HOSTILE_URLS

SITE = "https://example.org"
ZONES = [
    UTC,
    site_zone("Europe/Berlin"),
    site_zone("Pacific/Kiritimati"),
    timezone(-timedelta(hours=3, minutes=30)),
]


class CoreProvider:
    template = URL_TEMPLATE


def chameleon(entry: Entry, zone) -> str:
    """What the template itself renders of ``entry``."""
    renderer = EntryRenderer(CoreProvider(), SITE, zone)
    text: str = template(URL_TEMPLATE)(
        entry=RenderedEntry(SITE_MARK, entry, zone), provider=CoreProvider(), local=renderer.local
    )
    return text


def test_the_core_template_is_the_one_written_without_a_template_call():
    """Fails when ``url.pt`` changes: ``url_element`` must follow it, and then
    ``URL_TEMPLATE_SHA256`` name its new source."""
    assert written_without_template(URL_TEMPLATE)
    assert not written_without_template("sitemap_server_video:templates/video-url.pt")


def test_the_renderer_of_a_core_entry_writes_what_the_template_renders():
    entry = Entry(
        key=1,
        path="/a&b/<c>/",
        lastmod=datetime(2024, 5, 1, 10, tzinfo=UTC),
        images=[f"{SITE}/x.jpg?a=1&b=2"],
        alternates=[["en", "/a/"], ["x-default", "/b/?q=\"'"]],
    )
    text, size = EntryRenderer(CoreProvider(), SITE, UTC).render(entry)
    assert text == chameleon(entry, UTC)
    assert size == len(text.replace(SITE_MARK, SITE).encode())


texts = st.one_of(
    st.text(max_size=30),
    st.sampled_from([*HOSTILE_URLS, "&amp;", "<![CDATA[", "]]>", '"', "'", "\x01", "\ud800"]),
)
# Hypothesis takes naive bounds, and makes aware datetimes in ``timezones``.
dates = st.one_of(
    st.none(),
    st.datetimes(
        min_value=datetime(1, 1, 2),  # noqa: DTZ001
        max_value=datetime(9999, 12, 30),  # noqa: DTZ001
        timezones=st.just(UTC),
    ),
)


@settings(max_examples=300, deadline=None)
@given(
    path=texts,
    lastmod=dates,
    images=st.lists(texts, max_size=3),
    alternates=st.one_of(st.none(), st.lists(st.lists(texts, min_size=2, max_size=2), max_size=3)),
    zone=st.sampled_from(ZONES),
)
def test_any_entry_is_written_as_the_template_renders_it(path, lastmod, images, alternates, zone):
    entry = Entry(key=1, path=path, lastmod=lastmod, images=images, alternates=alternates)
    assert url_element(entry, zone) == chameleon(entry, zone)
