"""Strict decoding at the edge of the admin API (issue 14, S-703).

A JSON body is UTF-8; once decoded, no string may hold a character XML 1.0 cannot carry
(NUL and the other C0 controls but tab/LF/CR, lone surrogates, U+FFFE/U+FFFF), however it
was written: a JSON escape or the raw bytes. Each is a 400 naming the field, and changes
nothing. A URL that is not UTF-8 is a 400 too, never a 500.
"""

import codecs
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sitemap_server.testing import assert_problem

# Characters XML 1.0 does not allow, every kind: C0 controls, surrogates, U+FFFE/U+FFFF.
BAD_CHARACTERS = st.one_of(
    st.sampled_from([chr(c) for c in range(0x20) if chr(c) not in "\t\n\r"] + ["\ufffe", "\uffff"]),
    st.integers(0xD800, 0xDFFF).map(chr),
)
# Text XML can carry, tab, LF, CR, U+FFFD and characters past the BMP included.
GOOD_TEXT = st.text(
    st.characters(exclude_categories=["Cs", "Cc"], exclude_characters="\ufffe\uffff")
    | st.sampled_from("\t\n\r"),
    max_size=12,
)
BAD_TEXT = st.builds("{}{}{}".format, GOOD_TEXT, BAD_CHARACTERS, GOOD_TEXT)

# (method, path, a valid body, the fields whose text is checked). Every string field of
# these operations, a list item and a nested path among them.
OPERATIONS = [
    ("POST", "/api/authors", {"slug": "ada", "name": "Ada"}, ["name"]),
    (
        "POST",
        "/api/terms",
        {"taxonomy": "category", "name": "News", "description": "d"},
        ["name", "description"],
    ),
    (
        "POST",
        "/api/posts",
        {
            "type": "post",
            "title": "Hello",
            "content": "<p>Hi</p>",
            "password": "pw",
            "images": ["/a.jpg", "/b.jpg"],
            "canonical": "https://example.org/a/",
            "path": "/a/",
        },
        ["title", "content", "password", "images/1", "canonical", "path"],
    ),
    ("PATCH", "/api/posts/1", {"title": "Hello", "content": "c"}, ["title", "content"]),
    (
        "POST",
        "/api/post-types",
        {"name": "book", "label": "Books", "permalink_pattern": "/b/{slug}/"},
        ["label", "permalink_pattern"],
    ),
    ("PATCH", "/api/settings", {"title": "Site", "timezone": "UTC"}, ["title", "timezone"]),
]


def set_field(body, field, value):
    """``body`` with ``field`` (a path such as ``images/1``) set to ``value``."""
    body = json.loads(json.dumps(body))
    *parents, last = field.split("/")
    target = body
    for part in parents:
        target = target[part]
    target[int(last) if isinstance(target, list) else last] = value
    return body


def encode(body, escaped):
    """The JSON bytes of ``body``: non-ASCII as \\uXXXX escapes, or as raw UTF-8 (with the
    three bytes of a surrogate written as they are, ED A0 80)."""
    if escaped:
        return json.dumps(body).encode("ascii")
    return json.dumps(body, ensure_ascii=False).encode("utf-8", "surrogatepass")


@pytest.fixture
def post_1(api):
    api.post_json("/api/posts", {"id": 1, "type": "post", "title": "One"}, status=201)


def send(api, method, path, raw, **kwargs):
    return api.request(
        path, method=method, body=raw, content_type="application/json", expect_errors=True, **kwargs
    )


@settings(
    max_examples=300,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(data=st.data(), escaped=st.booleans())
def test_a_character_xml_cannot_carry_is_400_naming_the_field(
    api, post_1, db_snapshot, data, escaped
):
    method, path, body, fields = data.draw(st.sampled_from(OPERATIONS), label="operation")
    field = data.draw(st.sampled_from(fields), label="field")
    text = data.draw(BAD_TEXT, label="text")
    before = db_snapshot()
    response = send(api, method, path, encode(set_field(body, field, text), escaped))
    problem = assert_problem(response, 400)
    assert [e.get("field") for e in problem["errors"]] == [field], problem
    assert "XML 1.0 cannot carry it" in problem["errors"][0]["message"]
    assert db_snapshot() == before


@settings(
    max_examples=100,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(name=BAD_TEXT, escaped=st.booleans())
def test_a_bad_character_in_a_key_names_it(api, db_snapshot, name, escaped):
    before = db_snapshot()
    body = {"taxonomy": "category", "name": "News", "parent": None, name: 1}
    response = send(api, "POST", "/api/terms", encode(body, escaped))
    problem = assert_problem(response, 400)
    [error] = problem["errors"]
    assert error["message"].startswith("its name must not contain")
    assert db_snapshot() == before


def test_the_message_says_which_character(api, db_snapshot):
    before = db_snapshot()
    cases = [
        ("\x00", "the NUL character (U+0000)"),
        ("\x1b", "the control character U+001B"),
        ("\ud800", "a lone surrogate (U+D800)"),
        ("\udfff", "a lone surrogate (U+DFFF)"),
        ("\ufffe", "the noncharacter U+FFFE"),
        ("\uffff", "the noncharacter U+FFFF"),
    ]
    for character, words in cases:
        for escaped in (True, False):
            raw = encode({"slug": "ada", "name": f"A{character}da"}, escaped)
            response = send(api, "POST", "/api/authors", raw)
            [error] = assert_problem(response, 400, "name")["errors"]
            assert words in error["message"], (character, escaped, error)
    assert db_snapshot() == before


def test_text_xml_can_carry_is_taken_as_it_is(api):
    name = "Tab\tLF\nCR\r U+FFFD \ufffd U+E000 \ue000 U+10FFFF \U0010ffff \U0001f600"
    for escaped in (True, False):
        raw = encode({"slug": f"ada-{escaped}".lower(), "name": name}, escaped)
        response = send(api, "POST", "/api/authors", raw)
        assert response.status_int == 201, response.text
        assert api.get(response.location).json["name"] == name


AUTHOR = {"slug": "ada", "name": "Ada"}
TEXT = json.dumps(AUTHOR)


@pytest.mark.parametrize(
    ("raw", "words"),
    [
        (codecs.BOM_UTF8 + TEXT.encode(), "UTF-8 byte order mark"),
        (TEXT.encode("utf-16"), "UTF-16 byte order mark"),
        (codecs.BOM_UTF16_BE + TEXT.encode("utf-16-be"), "UTF-16 byte order mark"),
        (TEXT.encode("utf-16-le"), "looks like UTF-16"),
        (TEXT.encode("utf-16-be"), "looks like UTF-16"),
        (TEXT.encode("utf-32"), "UTF-32 byte order mark"),
        (TEXT.encode("utf-32-le"), "looks like UTF-32"),
        (TEXT.encode("utf-32-be"), "looks like UTF-32"),
        (b'{"slug": "ada", "name": "\xe9"}', "byte 0xe9 at offset 25"),
        (b'{"slug": "ada", "name": "A\xff"}', "byte 0xff at offset 26"),
        (b'{"slug": "ada", "name": "\xc0\xaf"}', "byte 0xc0 at offset 25"),
        (b'{"slug": "ada", "name": "\xf4\x90\x80\x80"}', "byte 0xf4 at offset 25"),
    ],
    ids=[
        "utf-8-bom",
        "utf-16-bom-le",
        "utf-16-bom-be",
        "utf-16-le",
        "utf-16-be",
        "utf-32-bom",
        "utf-32-le",
        "utf-32-be",
        "latin-1",
        "invalid-byte",
        "overlong",
        "past-u10ffff",
    ],
)
def test_a_body_that_is_not_utf8_is_400_saying_so(api, db_snapshot, raw, words):
    before = db_snapshot()
    problem = assert_problem(send(api, "POST", "/api/authors", raw), 400)
    assert problem["detail"].startswith("the body ")
    assert words in problem["detail"]
    assert "UTF-8" in problem["detail"]
    assert db_snapshot() == before


def test_a_charset_other_than_utf8_is_415(api, db_snapshot):
    before = db_snapshot()
    for charset in ("utf-16", "latin-1"):
        response = api.post(
            "/api/authors",
            TEXT.encode(charset),
            content_type=f"application/json; charset={charset}",
            status=415,
        )
        assert "UTF-8" in assert_problem(response, 415)["detail"]
    assert db_snapshot() == before
    response = api.post(
        "/api/authors", TEXT.encode(), content_type="application/json; charset=UTF-8"
    )
    assert response.status_int == 201


@pytest.mark.parametrize(
    ("url", "field"),
    [
        ("/api/posts?type=a%00b", "type"),
        ("/api/posts?modified_since=%01", "modified_since"),
        ("/api/explain?url=/a%EF%BF%BE/", "url"),
        ("/api/post-types/a%00b", "name"),
        ("/api/taxonomies/%1B", "name"),
    ],
)
def test_a_bad_character_in_a_parameter_is_400_naming_it(api, url, field):
    assert_problem(api.get(url, expect_errors=True), 400, field)


@pytest.mark.parametrize(
    ("url", "part"),
    [
        ("/api/posts?type=%FF", "query string"),
        ("/api/posts?%ED%A0%80=1", "query string"),
        ("/api/explain?url=/%ED%A0%80/", "query string"),
        ("/api/post-types/%FF", "path"),
        ("/api/posts/%ED%A0%80", "path"),
    ],
)
def test_a_url_that_is_not_utf8_is_400(api, db_snapshot, url, part):
    before = db_snapshot()
    for method in ("GET", "PATCH", "DELETE"):
        response = api.request(url, method=method, expect_errors=True)
        assert f"the {part} is not UTF-8" in assert_problem(response, 400)["detail"]
    assert db_snapshot() == before


def test_a_sitemap_path_that_is_not_utf8_is_400_not_500(testapp):
    response = testapp.get("/%FF-sitemap.xml", status=400)
    assert "not UTF-8" in response.text
