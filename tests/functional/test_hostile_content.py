"""Hostile content never breaks a document or a page (issue 14; S-208, S-403, S-404).

A corpus written by hand (what an attacker sent to the demo site) and generated text and
URLs (hypothesis, derandomized) go through the admin API as post titles, content
(``<img src|srcset>``, ``<video src|poster>``), featured images and extra images. The API
may refuse some (4xx: its own input checks); whatever it accepts must then render: every
document the index lists is fetched, parsed and validated against the XSDs, every URL in
it is an absolute http(s) URL in RFC 3986 form under 2,048 characters (images on the
site's host or an allowed one), and every page for people (``/sitemaps/``,
``/sitemaps/{name}.html``) answers 200, is well-formed and links to nothing but http(s)
URLs and paths on the site. ``Attack`` counts the cases tried (``record_property``: in a
JUnit report, nothing printed).
"""

from __future__ import annotations

import html
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sitemap_server.content.sanitize import clean_text, normal_url, url_problem
from sitemap_server.testing import SITE_URL, fetch_sitemap
from sitemap_server.testing.hostile import (
    HOSTILE_TEXT,
    HOSTILE_URLS,
    IMAGE_HOSTS,
    assert_web_url,
    check_everything,
    hostile_text,
    hostile_urls,
)

pytestmark = pytest.mark.long  # a minute on PostgreSQL: handed out first


class Attack:
    """Sends hostile posts through the admin API and checks every document and page."""

    def __init__(self, api: Any, testapp: Any) -> None:
        self.api, self.testapp = api, testapp
        self.tried = 0  # hostile inputs sent
        self.accepted = 0  # posts the API took

    def post(self, **fields: Any) -> int | None:
        """Create a published post with ``fields``; its id, or None if the API refused."""
        self.tried += 1
        body = {
            "type": "post",
            "title": "A post",
            "status": "publish",
            "published_at": "2024-03-01T12:00:00+00:00",
            **fields,
        }
        response = self.api.post_json("/api/posts", body, expect_errors=True)
        assert response.status_int < 500, response.text
        if response.status_int != 201:
            assert 400 <= response.status_int < 500
            return None
        self.accepted += 1
        return int(response.json["id"])

    def post_each_way(self, text: str, url: str) -> list[int]:
        """``text`` and ``url`` in every field that reaches a document; a field the API
        refuses is sent again alone, so that what it accepts of the rest still gets in."""
        escaped = html.escape(url, quote=True)
        content = (
            f'<p>{text}</p><img src="{escaped}" srcset="{escaped} 2x, {escaped} 640w">'
            f'<img src=\'{url}\'><video src="{escaped}" poster="{escaped}"></video>'
            f'<video poster="{escaped}"><source src="{SITE_URL}/v.mp4"></video>'
        )
        made = self.post(
            title=text, content=content, featured_image=url or None, images=[url] if url else []
        )
        if made is not None:
            return [made]
        alone = [
            self.post(title=text),
            self.post(content=content),
            self.post(featured_image=url or None),
            self.post(images=[url]),
        ]
        return [post_id for post_id in alone if post_id is not None]

    def delete(self, post_ids: list[int]) -> None:
        for post_id in post_ids:
            self.api.delete(f"/api/posts/{post_id}", status=204)

    def check_everything(self) -> None:
        check_everything(self.testapp)


@pytest.fixture
def attack(api, testapp, record_property):
    api.patch_json("/api/settings", {"allowed_image_hosts": IMAGE_HOSTS}, status=200)
    found = Attack(api, testapp)
    yield found
    record_property("cases", found.tried)
    record_property("accepted", found.accepted)


# The corpus -------------------------------------------------------------------------------


def test_the_attackers_corpus_breaks_no_document(attack):
    """Every hostile text with every hostile URL, each in every field, all at once: one
    site holding the lot must still serve valid documents and safe pages."""
    for text in HOSTILE_TEXT:
        for url in HOSTILE_URLS:
            attack.post_each_way(text, url)
    attack.check_everything()
    assert attack.tried >= len(HOSTILE_TEXT) * len(HOSTILE_URLS)
    assert attack.accepted > 0


def test_a_bad_image_leaves_out_the_image_not_the_post(attack, caplog):
    good = f"{SITE_URL}/good.png"
    post_id = attack.post(
        content=f'<img src="http://127.0.0.1:6611:80/x.png"><img src="{good}">'
        '<img src="javascript:alert(1)">',
    )
    assert post_id is not None
    [url] = [
        u for u in fetch_sitemap(attack.testapp, "/post-sitemap.xml") if "/a-post" in u[0].text
    ]
    images = [loc.text for loc in url.iter("{*}loc") if loc.getparent().tag.endswith("}image")]
    assert images == [good]
    assert any("6611:80" in record.getMessage() for record in caplog.records)


def test_image_urls_are_percent_encoded_not_dropped(attack):
    post_id = attack.post(
        content=f'<img src="{SITE_URL}/a b/\u200f&quot;x&quot;.png">'
        f'<img src="http://bücher.test/ü.png">',
    )
    assert post_id is not None
    root = fetch_sitemap(attack.testapp, "/post-sitemap.xml")
    images = [loc.text for loc in root.iter("{*}loc") if loc.getparent().tag.endswith("}image")]
    assert images == [
        f"{SITE_URL}/a%20b/%E2%80%8F%22x%22.png",
        "http://xn--bcher-kva.test/%C3%BC.png",
    ]


def test_an_image_on_another_port_of_the_sites_host_is_another_hosts(api, testapp):
    """The site is its origin: a server on another port of its host is not the site."""
    site = "http://127.0.0.1:6543"
    api.patch_json("/api/settings", {"site_url": site}, status=200)
    elsewhere = [
        "http://127.0.0.1:9999/a.jpg",
        "https://127.0.0.1:6543/b.jpg",
        "http://127.0.0.1/c.jpg",
    ]
    api.post_json(
        "/api/posts",
        {
            "type": "post",
            "title": "Ports",
            "status": "publish",
            "content": "".join(f'<img src="{url}">' for url in [*elsewhere, f"{site}/d.jpg"]),
            "featured_image": "http://127.0.0.1:9999/featured.jpg",
            "images": ["http://127.0.0.1:9999/extra.jpg", "/e.jpg", f"{site}/f.jpg"],
        },
        status=201,
    )
    root = fetch_sitemap(testapp, "/post-sitemap.xml")
    images = [loc.text for loc in root.iter("{*}loc") if loc.getparent().tag.endswith("}image")]
    assert images == [f"{site}/d.jpg", f"{site}/e.jpg", f"{site}/f.jpg"]


def test_an_allowed_image_host_is_allowed_on_any_port(api, testapp):
    api.patch_json("/api/settings", {"allowed_image_hosts": ["cdn.test"]}, status=200)
    api.post_json(
        "/api/posts",
        {
            "type": "post",
            "title": "CDN",
            "status": "publish",
            "images": ["https://cdn.test:8443/a.jpg", "http://cdn.test/b.jpg"],
        },
        status=201,
    )
    root = fetch_sitemap(testapp, "/post-sitemap.xml")
    images = [loc.text for loc in root.iter("{*}loc") if loc.getparent().tag.endswith("}image")]
    assert images == ["https://cdn.test:8443/a.jpg", "http://cdn.test/b.jpg"]


@settings(
    max_examples=60,
    derandomize=True,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(text=hostile_text, url=hostile_urls)
def test_generated_text_and_urls_break_no_document(attack, text, url):
    """Each example is a post of its own, checked and deleted (examples stay apart)."""
    made = attack.post_each_way(text, url)
    attack.check_everything()
    attack.delete(made)


@settings(max_examples=1500, derandomize=True, deadline=None, database=None)
@given(value=st.one_of(hostile_urls, st.text()), base=st.sampled_from([None, f"{SITE_URL}/a/b/"]))
def test_the_sanitizer_writes_only_valid_urls_and_only_once(value, base):
    """Property of ``normal_url`` itself, on many more cases than the API can take: what
    it returns is a valid web URL and is returned unchanged when given again."""
    try:
        url = normal_url(value, base)
    except ValueError:
        return
    assert_web_url(url)
    assert normal_url(url) == url
    assert url_problem(url) is None


@settings(max_examples=1500, derandomize=True, deadline=None, database=None)
@given(value=st.text(alphabet=st.characters(exclude_categories=())))  # lone surrogates too
def test_clean_text_leaves_only_what_xml_carries(value):
    from lxml import etree

    cleaned = clean_text(value)
    element = etree.Element("t")
    element.text = cleaned  # lxml refuses what XML 1.0 cannot carry
    assert etree.fromstring(etree.tostring(element)).text in (cleaned, None)
