"""Image extraction (S-403): which URLs an HTML fragment offers as images, and what a page
lists of them. The pure functions; what a crawler reads is in the functional tests."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sitemap_server.content.images import (
    MAX_IMAGES_PER_URL,
    ImageSources,
    content_images,
    post_images,
)
from sitemap_server.sitemaps.entries import Entry
from sitemap_server.sitemaps.xml import EntryRules
from sitemap_server.testing.hostile import HOSTILE_URLS, assert_web_url

SITE = "https://example.org"
PAGE = f"{SITE}/category/news/"
CDN = "cdn.example.net"


def page_images(html: str, allowed_hosts: list[str] | None = None) -> list[str]:
    return post_images(None, html, [], SITE, PAGE, allowed_hosts or [])


# What counts as an image -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("html", "found"),
    [
        ('<img src="/a.jpg">', ["/a.jpg"]),
        ('<IMG SRC="/a.jpg">', ["/a.jpg"]),
        ('<Img src="/a.jpg"/>', ["/a.jpg"]),
        ('<img src="/a.jpg" srcset="/a-1.jpg 640w, /a-2.jpg 1280w">', ["/a.jpg", "/a-2.jpg"]),
        ('<picture><source srcset="/p.webp"><img src="/p.jpg"></picture>', ["/p.webp", "/p.jpg"]),
        (
            '<picture><source media="(min-width: 800px)" srcset="/wide.jpg 1x, /wide@2x.jpg 2x">'
            '<source srcset="/narrow.jpg"><img src="/fallback.jpg"></picture>',
            ["/wide@2x.jpg", "/narrow.jpg", "/fallback.jpg"],
        ),
        # A <source> in a picture offers srcset only: its src is not read by browsers.
        ('<picture><source src="/ignored.jpg"><img src="/p.jpg"></picture>', ["/p.jpg"]),
        # A <source> of a video or an audio is a media file, not an image.
        ('<video><source src="/v.mp4" srcset="/v.jpg" type="video/mp4"></video>', []),
        ('<audio><source src="/a.mp3"></audio>', []),
        ('<picture><video><source srcset="/in-video.jpg"></video></picture>', []),
        ('<picture><video></video><source srcset="/after.jpg"></picture>', ["/after.jpg"]),
        # Outside a picture, a <source> offers nothing.
        ('<source srcset="/alone.jpg"><div><source srcset="/in-div.jpg"></div>', []),
        ('<picture></picture><source srcset="/after-picture.jpg">', []),
        # "/>" closes nothing in HTML.
        ('<picture/><source srcset="/open.jpg">', ["/open.jpg"]),
        ("<p>no images</p>", []),
        ("<script>'<img src=\"/in-script.jpg\">'</script>", []),
    ],
)
def test_content_images_are_img_and_picture_sources(html, found):
    assert content_images(html) == found


@pytest.mark.parametrize(
    ("srcset", "largest"),
    [
        ("/s.jpg 300w, /l.jpg 1200w, /m.jpg 800w", "/l.jpg"),
        ("/a.jpg, /b.jpg 2x, /c.jpg 1.5x", "/b.jpg"),
        ("/first.jpg 2x, /second.jpg 2x", "/first.jpg"),
        ("/only.jpg", "/only.jpg"),
        # Commas inside a URL belong to it (image CDNs put transformations there).
        ("/w_300,h_200/a.jpg 300w, /w_900,h_600/a.jpg 900w", "/w_900,h_600/a.jpg"),
        # A candidate a browser would ignore is not the largest: bad descriptors.
        ("/ok.jpg 1x, /junk.jpg 9q, /two.jpg 2x 3x, /zero.jpg 0w", "/ok.jpg"),
        ("/ok.jpg 2x, junk junk junk, /sup.jpg ²w", "/ok.jpg"),
        ("/ok.jpg 640w 480h", "/ok.jpg"),
        (",,, /a.jpg 2x,, ,", "/a.jpg"),
        ("/a.jpg (weird, descriptor) 2x, /b.jpg 1x", "/b.jpg"),
        ("   ,  ", None),
    ],
)
def test_srcset_gives_its_largest_valid_candidate(srcset, largest):
    html = f'<picture><source srcset="{srcset}"></picture>'
    assert content_images(html) == ([largest] if largest else [])
    assert content_images(f'<img srcset="{srcset}">') == ([largest] if largest else [])


# What a page lists ----------------------------------------------------------------------------


def test_a_picture_lists_each_distinct_format_once_absolute_and_in_order():
    html = (
        '<picture><source type="image/avif" srcset="banner.avif">'
        '<source type="image/webp" srcset="/category/news/banner.webp 1x, banner@2x.webp 2x">'
        '<img src="/category/news/banner.avif" alt=""></picture>'
        f'<picture><source srcset="https://{CDN}/b.jpg"><img src="https://elsewhere.test/b.jpg">'
        "</picture>"
    )
    assert page_images(html, [CDN]) == [
        f"{PAGE}banner.avif",
        f"{PAGE}banner@2x.webp",
        f"https://{CDN}/b.jpg",
    ]


def test_unusable_sources_are_left_out_alone(caplog):
    html = (
        '<picture><source srcset="javascript:alert(1)"><source srcset="http://[::1/x.png 2x">'
        '<source srcset="data:image/png;base64,AAAA"><img src="/ok.png"></picture>'
    )
    assert page_images(html) == [f"{SITE}/ok.png"]
    assert "javascript" in caplog.text


def test_at_most_a_thousand_images_per_page():
    html = "".join(
        f'<picture><source srcset="/{n}.webp"><img src="/{n}.jpg"></picture>'
        for n in range(MAX_IMAGES_PER_URL)
    )
    images = page_images(html)
    assert len(images) == MAX_IMAGES_PER_URL
    assert images[:3] == [f"{SITE}/0.webp", f"{SITE}/0.jpg", f"{SITE}/1.webp"]


# Any HTML --------------------------------------------------------------------------------------

TAGS = st.sampled_from(["picture", "video", "audio", "source", "img", "div", "PICTURE", "Source"])
ATTRIBUTES = st.sampled_from(["src", "srcset", "SRCSET", "media", "type"])
VALUES = st.one_of(st.sampled_from(HOSTILE_URLS), st.text(max_size=40))


@st.composite
def markup(draw: st.DrawFn) -> str:
    """Tags that carry images, in any nesting and order, with hostile values."""
    pieces = []
    for _ in range(draw(st.integers(0, 8))):
        tag = draw(TAGS)
        if draw(st.booleans()):
            pieces.append(f"</{tag}>")
            continue
        attributes = draw(st.lists(st.tuples(ATTRIBUTES, VALUES), max_size=3))
        quoted = "".join(
            f' {name}="{value.replace(chr(34), "&quot;")}"' for name, value in attributes
        )
        pieces.append(f"<{tag}{quoted}{draw(st.sampled_from(['>', '/>', '']))}")
        pieces.append(draw(st.text(max_size=10)))
    return "".join(pieces)


@settings(max_examples=1500, derandomize=True, deadline=None, database=None)
@given(html=st.one_of(markup(), st.text()), allowed=st.sampled_from([[], [CDN], ["cdn.test"]]))
def test_any_html_gives_only_absolute_web_urls_on_allowed_hosts(html, allowed):
    images = page_images(html, allowed)
    assert len(images) == len(set(images)) <= MAX_IMAGES_PER_URL
    for url in images:
        assert assert_web_url(url) in {"example.org", *allowed}
        assert "#" not in url


# Which server an image is on ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "listed"),
    [
        ("http://127.0.0.1:6543/a.jpg", True),
        ("http://127.0.0.1:9999/a.jpg", False),  # another port: another server
        ("http://127.0.0.1/a.jpg", False),
        ("https://127.0.0.1:6543/a.jpg", False),  # another scheme
        ("http://cdn.test:8443/a.jpg", True),  # an allowed host, on any port
        ("https://cdn.test/a.jpg", True),
    ],
)
def test_the_site_is_its_origin_and_an_allowed_host_any_port_of_it(url, listed):
    site = "http://127.0.0.1:6543"
    assert post_images(url, "", [], site, f"{site}/a/", ["cdn.test"]) == ([url] if listed else [])
    # Every stored entry, a plugin's too, is held to the same rule.
    kept, problems = EntryRules.of(site, ["cdn.test"]).apply(Entry(1, "/a/", None, images=[url]))
    assert kept is not None
    assert kept.images == ([url] if listed else [])
    assert bool(problems) is not listed


def test_the_default_port_is_the_same_origin():
    site = "http://example.org"
    found = post_images(None, "", ["http://example.org:80/a.jpg"], site, f"{site}/", [])
    assert found == ["http://example.org:80/a.jpg"]
    assert ImageSources.of("HTTPS://Example.ORG/blog", []).allow("https://example.org:443/a")
