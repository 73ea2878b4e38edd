"""Import-line validation: the fast check and the detailed messages agree."""

import jsonschema
import pytest

from sitemap_server.api.schema import build_spec, import_line_validator, inline_refs

validate = import_line_validator(build_spec())


def test_a_valid_line_has_no_problems():
    line = {"post": {"type": "post", "title": "Hi", "published_at": "2024-01-01T00:00:00Z"}}
    assert validate(line) == []


@pytest.mark.parametrize(
    ("line", "field", "message"),
    [
        ({"post": {"type": "post"}}, "post/title", "is required"),
        (
            {"post": {"type": "post", "title": "x", "colour": "red"}},
            "post/colour",
            "is not a known field",
        ),
        ({"post": {"type": "post", "title": 5}}, "post/title", "must be a string"),
        (
            {"post": {"type": "post", "title": "x", "status": "live"}},
            "post/status",
            "must be one of",
        ),
        (
            {"post": {"type": "post", "title": "x", "canonical": "ftp://a.test/"}},
            "post/canonical",
            "http:// or https://",
        ),
        (
            {"post": {"type": "post", "title": "x", "canonical": "https://a.test/" + "a" * 2100}},
            "post/canonical",
            "longer than 2047",
        ),
        (
            {"post": {"type": "post", "title": "x", "published_at": "2024-01-01T00:00:00"}},
            "post/published_at",
            "UTC offset",
        ),
        ({"post": {"type": "post", "title": "x", "terms": [1, "2"]}}, "post/terms/1", "integer"),
        ({"author": {"slug": "Bad Slug", "name": "x"}}, "author/slug", "lower-case letters"),
        ({"gadget": {}}, "gadget", "is not a known field"),
    ],
)
def test_problems_name_the_field(line, field, message):
    problems = validate(line)
    assert problems, "the line should have been refused"
    assert any(p.field == field and message in p.message for p in problems), problems


def test_a_line_must_create_exactly_one_thing():
    problems = validate(
        {"author": {"slug": "a", "name": "A"}, "term": {"taxonomy": "category", "name": "x"}}
    )
    assert [p.message for p in problems] == ["must have exactly one key"]


def test_inlined_references_keep_what_their_siblings_add_and_what_they_would_overwrite():
    spec = {"components": {"schemas": {"Short": {"type": "string", "maxLength": 5}}}}
    ref = "#/components/schemas/Short"
    added = inline_refs(spec, {"$ref": ref, "minLength": 2, "description": "two to five"})
    assert added == {"type": "string", "maxLength": 5, "minLength": 2, "description": "two to five"}
    clashing = inline_refs(spec, {"$ref": ref, "maxLength": 10})
    validator = jsonschema.Draft202012Validator(clashing)
    assert not validator.is_valid("abcdefg")  # the referenced 5 still holds
    assert validator.is_valid("abcde")
