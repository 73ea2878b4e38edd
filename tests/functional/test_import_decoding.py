"""Strict decoding of import lines (issue 14, S-704): POST /api/import and the command.

Every line is UTF-8 JSON, and its strings hold only characters XML 1.0 can carry. A line
that breaks either is a 400 naming the line (and the field), and nothing is imported.
"""

import codecs
import json
import string

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sitemap_server.testing import assert_problem

NDJSON = "application/x-ndjson"
GOOD = [
    {"author": {"id": 1, "slug": "ada", "name": "Ada"}},
    {"term": {"id": 1, "taxonomy": "category", "name": "News"}},
    {"post": {"type": "post", "title": "One", "author": 1, "terms": [1]}},
]
# Where a bad string goes in a line, and the field the error names.
PLACES = [
    ({"author": {"slug": "bob", "name": None}}, ("author", "name"), "author/name"),
    (
        {"term": {"taxonomy": "tag", "name": "x", "description": None}},
        ("term", "description"),
        "term/description",
    ),
    ({"post": {"type": "post", "title": None}}, ("post", "title"), "post/title"),
    (
        {"post": {"type": "post", "title": "x", "content": None}},
        ("post", "content"),
        "post/content",
    ),
    (
        {"post": {"type": "post", "title": "x", "images": ["/a.jpg", None]}},
        ("post", "images", 1),
        "post/images/1",
    ),
    ({"post_type": {"name": "book", "label": None}}, ("post_type", "label"), "post_type/label"),
]
BAD_CHARACTERS = st.one_of(
    st.sampled_from([chr(c) for c in range(0x20) if chr(c) not in "\t\n\r"] + ["\ufffe", "\uffff"]),
    st.integers(0xD800, 0xDFFF).map(chr),
)
BAD_TEXT = st.builds(
    "{}{}{}".format, st.text(string.ascii_letters, max_size=5), BAD_CHARACTERS, st.just("x")
)


def line(value, escaped=True):
    if escaped:
        return json.dumps(value).encode("ascii")
    return json.dumps(value, ensure_ascii=False).encode("utf-8", "surrogatepass")


def placed(template, where, text):
    value = json.loads(json.dumps(template))
    target = value
    for part in where[:-1]:
        target = target[part]
    target[where[-1]] = text
    return value


def post_import(api, body):
    return api.post("/api/import", body, content_type=NDJSON, expect_errors=True)


def assert_refused_at(response, number, field=None):
    problem = assert_problem(response, 400)
    assert [e["line"] for e in problem["errors"]] == [number] * len(problem["errors"])
    assert problem["detail"].startswith(f"line {number}")
    if field is not None:
        assert [e.get("field") for e in problem["errors"]] == [field], problem
    return problem


@settings(
    max_examples=150,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(data=st.data(), escaped=st.booleans(), blank_lines=st.integers(0, 2))
def test_a_bad_character_names_the_line_and_the_field(api, db_snapshot, data, escaped, blank_lines):
    template, where, field = data.draw(st.sampled_from(PLACES), label="place")
    text = data.draw(BAD_TEXT, label="text")
    before = db_snapshot()
    body = b"".join(line(good) + b"\n" for good in GOOD) + b"\n" * blank_lines
    body += line(placed(template, where, text), escaped) + b"\n" + line(GOOD[0]) + b"\n"
    problem = assert_refused_at(post_import(api, body), len(GOOD) + blank_lines + 1, field)
    assert "XML 1.0 cannot carry it" in problem["errors"][0]["message"]
    assert db_snapshot() == before


def test_a_bad_character_in_a_later_batch_rolls_everything_back(api, db_snapshot):
    before = db_snapshot()
    posts = [{"post": {"type": "post", "title": f"Post {n}"}} for n in range(1500)]
    bad = {"post": {"type": "post", "title": "Nul \u0000"}}
    body = b"".join(line(value) + b"\n" for value in [*posts, bad])
    assert_refused_at(post_import(api, body), 1501, "post/title")
    assert db_snapshot() == before


GOOD_TEXT = "\n".join(json.dumps(value) for value in GOOD) + "\n"


@pytest.mark.parametrize(
    ("body", "number", "words"),
    [
        (codecs.BOM_UTF8 + GOOD_TEXT.encode(), 1, "UTF-8 byte order mark"),
        (GOOD_TEXT.encode("utf-16"), 1, "UTF-16 byte order mark"),
        (GOOD_TEXT.encode("utf-16-le"), 1, "looks like UTF-16"),
        (GOOD_TEXT.encode("utf-32-be"), 1, "looks like UTF-32"),
        (
            GOOD_TEXT.encode() + b'{"author": {"slug": "b", "name": "\xe9"}}\n',
            4,
            "byte 0xe9 at offset 34",
        ),
        (
            GOOD_TEXT.encode() + b"\n" + b'{"author": {"slug": "b", "name": "b\xff"}}\n',
            5,
            "byte 0xff",
        ),
    ],
    ids=["utf-8-bom", "utf-16-bom", "utf-16-le", "utf-32-be", "latin-1", "invalid-byte"],
)
def test_a_line_that_is_not_utf8_is_400_naming_it(api, db_snapshot, body, number, words):
    before = db_snapshot()
    problem = assert_refused_at(post_import(api, body), number)
    assert words in problem["detail"]
    assert "UTF-8" in problem["errors"][0]["message"]
    assert db_snapshot() == before


def test_text_xml_can_carry_is_imported_as_it_is(api):
    name = "Tab\tLF\nCR\r \ufffd \ue000 \U0010ffff \U0001f600"
    for escaped in (True, False):
        slug = f"ada-{escaped}".lower()
        response = post_import(api, line({"author": {"slug": slug, "name": name}}, escaped) + b"\n")
        assert response.status_int == 200, response.text
    names = {a["slug"]: a["name"] for a in api.get("/api/authors").json["items"]}
    assert names == {"ada-true": name, "ada-false": name}


@pytest.mark.parametrize(
    ("content", "number", "words"),
    [
        (
            GOOD_TEXT.encode() + line({"author": {"slug": "b", "name": "B\ud800"}}, False),
            4,
            "author/name",
        ),
        (GOOD_TEXT.encode("utf-16"), 1, "UTF-16"),
    ],
    ids=["raw-surrogate", "utf-16"],
)
def test_the_command_names_the_line_and_changes_nothing(
    cli, tmp_path, db_snapshot, content, number, words
):
    path = tmp_path / "site.ndjson"
    path.write_bytes(content)
    before = db_snapshot()
    status, out, err = cli("import", "-q", path)
    assert (status, out) == (1, "")
    assert f"line {number}" in err
    assert words in err
    assert "nothing was changed" in err
    assert db_snapshot() == before
