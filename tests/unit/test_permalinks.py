"""Permalinks, slugs and URL checks (S-103, S-104, S-105): the pure functions."""

import unicodedata
from datetime import UTC, datetime
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sitemap_server.content import permalinks, urls
from sitemap_server.content.slugs import is_slug, slugify, unique_slug
from sitemap_server.models.content import MAX_SLUG_LENGTH, MAX_URL_LENGTH

MAY_DAY = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)


def post_path(pattern, **overrides):
    values = {"post_id": 7, "slug": "hello", "post_type": "post", "date": MAY_DAY}
    return permalinks.post_path(pattern, **{**values, **overrides})


# Post paths -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("pattern", "path"),
    [
        ("/{year}/{month}/{slug}/", "/2024/05/hello/"),
        ("/{year}/{month}/{day}/{slug}/", "/2024/05/01/hello/"),
        ("/blog/{slug}/", "/blog/hello/"),
        ("/{type}/{slug}/", "/post/hello/"),
        ("/archives/{id}", "/archives/7"),
        ("/{id}-{slug}.html", "/7-hello.html"),
        ("/{path}/", "/hello/"),
        ("/{year}/{hour}{minute}{second}/{slug}/", "/2024/120000/hello/"),
        ("/{category}/{slug}/", "/uncategorized/hello/"),  # in no category
        ("/{author}/{slug}/", "/hello/"),  # no author: no empty segment
    ],
)
def test_post_path_fills_in_the_pattern(pattern, path):
    assert post_path(pattern) == path


def test_dates_are_local_to_the_zone_and_the_category_holds_its_parents():
    tokyo = ZoneInfo("Asia/Tokyo")
    late = datetime(2024, 12, 31, 20, 30, tzinfo=UTC)
    assert post_path("/{year}/{month}/{day}/{hour}/{slug}/", date=late, zone=tokyo) == (
        "/2025/01/01/05/hello/"
    )
    assert post_path("/{author}/{category}/{slug}/", author="ada", category=["news", "été"]) == (
        "/ada/news/%C3%A9t%C3%A9/hello/"
    )


def test_post_path_pads_year_month_and_day():
    date = datetime(987, 2, 3, tzinfo=UTC)

    assert post_path("/{year}/{month}/{day}/{slug}/", date=date) == "/0987/02/03/hello/"


def test_page_path_is_built_from_the_parents_slugs():
    path = post_path("/{path}/", slug="jane", ancestors=["about", "team"])

    assert path == "/about/team/jane/"


def test_ancestors_only_change_the_path_field():
    assert post_path("/{type}/{slug}/", ancestors=["about"]) == "/post/hello/"


def test_an_explicit_path_wins_over_the_pattern():
    path = post_path("/{year}/{month}/{slug}/", explicit_path="/landing/", ancestors=["x"])

    assert path == "/landing/"


def test_an_explicit_path_is_percent_encoded_once():
    assert post_path("/{slug}/", explicit_path="/café au lait/") == "/caf%C3%A9%20au%20lait/"
    # Already-encoded paths and the characters a path may hold are kept as they are.
    assert post_path("/{slug}/", explicit_path="/a%20b/c;d=e/") == "/a%20b/c;d=e/"


def test_an_empty_explicit_path_falls_back_to_the_pattern():
    assert post_path("/blog/{slug}/", explicit_path="") == "/blog/hello/"


# Absolute URLs --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("site_url", "url"),
    [
        ("http://sitemaps.test", "http://sitemaps.test/about/"),
        ("http://sitemaps.test/", "http://sitemaps.test/about/"),
        ("https://example.com/blog", "https://example.com/blog/about/"),
        ("https://example.com/blog/", "https://example.com/blog/about/"),
    ],
)
def test_absolute_keeps_the_site_path_prefix(site_url, url):
    assert permalinks.absolute(site_url, "/about/") == url


@pytest.mark.parametrize(
    ("permalink", "part", "url"),
    [
        ("http://s.test/2024/05/long-read/", 2, "http://s.test/2024/05/long-read/2/"),
        ("http://s.test/2024/05/long-read/", 10, "http://s.test/2024/05/long-read/10/"),
        ("http://s.test/archives/7", 3, "http://s.test/archives/7/3/"),
    ],
)
def test_part_urls(permalink, part, url):
    assert permalinks.part_url(permalink, part) == url


def test_author_path():
    assert permalinks.author_path("jane-doe") == "/author/jane-doe/"


@pytest.mark.parametrize(
    ("base", "slugs", "path"),
    [
        ("category", ["news"], "/category/news/"),
        ("category", ["news", "local"], "/category/news/local/"),
        ("/topics/tags/", ["python"], "/topics/tags/python/"),
        ("", ["news"], "/news/"),
    ],
)
def test_term_path(base, slugs, path):
    assert permalinks.term_path(base, slugs) == path


# Permalink patterns ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "pattern",
    ["/{slug}/", "/{path}/", "/p/{id}", "/{type}/{year}/{month}/{day}/{slug}/", "/{id}.html"],
)
def test_usable_patterns(pattern):
    assert permalinks.pattern_problem(pattern) is None


@pytest.mark.parametrize(
    ("pattern", "problem"),
    [
        ("{slug}/", "must start with /"),
        ("blog/{slug}/", "must start with /"),
        ("/{slug}/{name}/", "unknown field {name}"),
        ("/{year}/{month}/", "must contain {slug}, {path} or {id}"),
        ("/blog/", "must contain {slug}, {path} or {id}"),
        ("/{slug}/?page=1", "query string or fragment"),
        ("/{slug}/#top", "query string or fragment"),
    ],
)
def test_unusable_patterns(pattern, problem):
    assert problem in permalinks.pattern_problem(pattern)


# Slugs ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("title", "slug"),
    [
        ("Hello World", "hello-world"),
        ("Héllo Wörld", "hello-world"),
        ("Crème brûlée à la carte", "creme-brulee-a-la-carte"),
        ("  Hello,   World!  ", "hello-world"),
        ("10 Tips & Tricks (2024)", "10-tips-tricks-2024"),
        ("snake_case_title", "snake-case-title"),
        ("ﬁne ligature", "fine-ligature"),
        # WordPress's sanitize_title (issue 30): tags and entities out, other scripts kept.
        ("Tricky <b>bold</b>", "tricky-bold"),
        ("Fish &amp; Chips", "fish-chips"),
        ("Über uns", "uber-uns"),
        ("Straße", "strasse"),
        ("日本語のページ", "日本語のページ"),
        ("Привет, мир", "привет-мир"),
        ("Ελληνικά", "ελληνικά"),
        ("हिन्दी भाषा", "हिन्दी-भाषा"),
    ],
)
def test_slugify(title, slug):
    assert slugify(title, fallback="post") == slug


@pytest.mark.parametrize("title", ["", "   ", "!!!", "<b></b>", "—", "🙂"])
def test_slugify_falls_back_when_nothing_is_left(title):
    assert slugify(title, fallback="page") == "page"


def test_a_long_slug_leaves_room_for_a_number():
    slug = slugify("word " * 100, fallback="post")

    assert len(slug) <= MAX_SLUG_LENGTH - 10
    assert not slug.endswith("-")
    assert slug.startswith("word-word-")


@given(st.text(max_size=300))
def test_slugify_always_gives_a_usable_slug(title):
    slug = slugify(title, fallback="post")

    assert 1 <= len(slug) <= MAX_SLUG_LENGTH - 10
    assert is_slug(slug)
    assert unicodedata.is_normalized("NFC", slug)
    assert "--" not in slug
    assert not slug.endswith("-")


def test_unique_slug_keeps_a_free_slug():
    assert unique_slug("hello", lambda s: False) == "hello"


def test_unique_slug_counts_from_two():
    taken = {"hello", "hello-2", "hello-3"}

    assert unique_slug("hello", taken.__contains__) == "hello-4"


def test_unique_slug_takes_the_first_gap():
    taken = {"hello", "hello-3"}

    assert unique_slug("hello", taken.__contains__) == "hello-2"


# URL checks -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "url",
    [
        "http://example.com",
        "https://example.com/a/b?c=d#e",
        "https://user@example.com:8443/x",
        "http://127.0.0.1/",
        "http://example.com/" + "a" * (MAX_URL_LENGTH - len("http://example.com/")),
    ],
)
def test_good_http_urls(url):
    assert urls.http_url_problem(url) is None
    assert urls.is_http_url(url)


@pytest.mark.parametrize(
    ("url", "problem"),
    [
        ("ftp://example.com/file", "must be an absolute URL starting with http"),
        ("/relative/path", "must be an absolute URL starting with http"),
        ("example.com/page", "must be an absolute URL starting with http"),
        ("javascript:alert(1)", "must be an absolute URL starting with http"),
        ("http://", "has no host name"),
        ("http:///path", "has no host name"),
        ("http://example.com:99999/", "is not a valid URL"),
        ("http://[::1/", "is not a valid URL"),
        ("http://example.com/a b", "contains spaces"),
        ("http://example.com/\n", "contains spaces"),
        ('http://example.com/"quoted"', "contains spaces"),
        ("http://example.com/" + "a" * 2029, "is longer than 2047 characters"),
    ],
)
def test_bad_http_urls(url, problem):
    assert problem in urls.http_url_problem(url)
    assert not urls.is_http_url(url)


@pytest.mark.parametrize(
    ("value", "ok"),
    [
        ("https://cdn.example.com/a.jpg", True),
        ("/uploads/a.jpg", True),
        ("/" + "a" * (MAX_URL_LENGTH - 1), True),
        ("/" + "a" * MAX_URL_LENGTH, False),
        ("//cdn.example.com/a.jpg", False),
        ("uploads/a.jpg", False),
        ("/uploads/a b.jpg", False),
        ("data:image/png;base64,AAAA", False),
        ("ftp://example.com/a.jpg", False),
    ],
)
def test_image_urls(value, ok):
    assert urls.is_image_url(value) is ok


@pytest.mark.parametrize(
    ("value", "ok"),
    [
        ("/", True),
        ("/about/team/", True),
        ("/café/", True),
        ("about/", False),
        ("//example.com/", False),
        ("/about/?x=1", False),
        ("/about/#top", False),
        ("/a b/", False),
        ("http://example.com/about/", False),
        ("/" + "a" * MAX_URL_LENGTH, False),
    ],
)
def test_site_paths(value, ok):
    assert urls.is_site_path(value) is ok


@pytest.mark.parametrize("check", [urls.is_http_url, urls.is_image_url, urls.is_site_path])
def test_checks_leave_non_strings_to_the_type_check(check):
    # The schema reports a wrong type once, as a type error, not also as a bad format.
    assert check(5) is True
    assert check(None) is True
