"""``/api/openapi.json`` as integrators and their tools read it: every operation says what
it does, and every schema means what its YAML meant (issue 33).

OpenAPI 3.1 schemas take any keyword, so a validator accepts a typo or a description a
YAML comma split into two keys (``url: {type: string, description: The ping URL, or the
IndexNow endpoint.}`` made a keyword ``or the IndexNow endpoint.``); only a walk over
every schema against the keywords that mean something finds them.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")
# JSON Schema 2020-12's keywords and OpenAPI 3.1's own (``discriminator``, ``xml``,
# ``externalDocs``, ``example``); ``x-`` extensions are allowed too.
KEYWORDS = {
    *("$schema", "$id", "$ref", "$defs", "$comment", "$anchor", "$dynamicRef", "$dynamicAnchor"),
    *("type", "enum", "const", "format", "title", "description", "default", "examples"),
    *("deprecated", "readOnly", "writeOnly", "properties", "patternProperties"),
    *("additionalProperties", "required", "minProperties", "maxProperties", "propertyNames"),
    *("items", "prefixItems", "minItems", "maxItems", "uniqueItems", "contains"),
    *("minContains", "maxContains", "minLength", "maxLength", "pattern", "minimum"),
    *("maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf", "allOf", "anyOf"),
    *("oneOf", "not", "if", "then", "else", "dependentRequired", "dependentSchemas"),
    *("unevaluatedProperties", "unevaluatedItems", "contentMediaType", "contentEncoding"),
    *("contentSchema", "discriminator", "xml", "externalDocs", "example"),
}
# Where a schema holds schemas: one, a list of them, or a map of names to them.
ONE = ("items", "not", "if", "then", "else", "contains", "propertyNames", "contentSchema")
ONE += ("additionalProperties", "unevaluatedProperties", "unevaluatedItems")
LISTS = ("allOf", "anyOf", "oneOf", "prefixItems")
MAPS = ("properties", "patternProperties", "$defs", "dependentSchemas")


@pytest.fixture
def document(testapp: Any) -> dict[str, Any]:
    return dict(testapp.get("/api/openapi.json", status=200).json)


def operations(document: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    for path, item in document["paths"].items():
        for method in METHODS:
            if method in item:
                yield f"{method.upper()} {path}", item[method]


def schemas(node: Any, where: str) -> Iterator[tuple[str, dict[str, Any]]]:
    """Every schema in ``node`` (a document or a part of one), with where it is: those
    under a ``schema`` key or in ``components.schemas``, and each one's subschemas."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "schema" and isinstance(value, dict):
                yield from subschemas(value, f"{where}/schema")
            elif key == "schemas" and where == "/components":
                for name, schema in value.items():
                    yield from subschemas(schema, f"{where}/schemas/{name}")
            else:
                yield from schemas(value, f"{where}/{key}")
    elif isinstance(node, list):
        for number, value in enumerate(node):
            yield from schemas(value, f"{where}/{number}")


def subschemas(schema: Any, where: str) -> Iterator[tuple[str, dict[str, Any]]]:
    if not isinstance(schema, dict):
        return  # true or false
    yield where, schema
    for key in ONE:
        if key in schema:
            yield from subschemas(schema[key], f"{where}/{key}")
    for key in LISTS:
        for number, value in enumerate(schema.get(key, ())):
            yield from subschemas(value, f"{where}/{key}/{number}")
    for key in MAPS:
        for name, value in schema.get(key, {}).items():
            yield from subschemas(value, f"{where}/{key}/{name}")


def test_every_schema_uses_only_keywords_that_mean_something(document):
    found = list(schemas(document, ""))
    assert len(found) > 300  # the walk reaches the document's schemas
    unknown = [
        f"{where}: {key!r}"
        for where, schema in found
        for key in schema
        if key not in KEYWORDS and not key.startswith("x-")
    ]
    assert unknown == []


def test_every_operation_has_a_summary_and_a_description(document):
    found = dict(operations(document))
    assert len(found) >= 30
    lacking = [
        f"{name}: {', '.join(k for k in ('summary', 'description') if not op.get(k))}"
        for name, op in found.items()
        if not (op.get("summary") and op.get("description"))
    ]
    assert lacking == []
    summaries = [op["summary"] for op in found.values()]
    assert len(set(summaries)) == len(summaries)  # each says which one it is


def test_every_operation_has_an_id_a_generator_can_name_a_function_by(document):
    ids = [op.get("operationId") for _, op in operations(document)]
    assert all(ids) and len(set(ids)) == len(ids)
