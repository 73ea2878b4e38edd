"""Property-based fuzzing of every documented operation (schemathesis).

Whatever schemathesis sends, valid or not, the API answers below 500, every error is
problem details, and a rejected request leaves the database as it was. A request the
document says is valid is never refused for its shape: it succeeds, or names something
missing, taken or gone (404, 409, 410, 422), never 400 (the document says exactly what the server
accepts). Responses are also checked against the document by the app itself
(``validate_responses`` is on in tests).
"""

from __future__ import annotations

import json
import os
import zoneinfo
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from schemathesis import GenerationMode
from sqlalchemy import select

from sitemap_server.api.schema import FORMATS, build_spec
from sitemap_server.models import metadata
from sitemap_server.plugins import get_plugin_manager
from sitemap_server.testing import installed_plugins_loaded

if os.environ.get("PYTEST_XDIST_WORKER"):
    # Under pytest-xdist schemathesis's test passes without sending a single request (a
    # 500 on every call went unnoticed): this file runs in a plain pytest process.
    pytest.fail("run tests/functional/test_api_fuzz.py without -n (pytest-xdist)", pytrace=False)

# POST /api/import documents its body as one string; to reach the importer's rules the
# generator is told what the string really holds: a list of ImportLine objects (one JSON
# document a line), or anything at all.
# The document the application serves: the installed plugins' operations are fuzzed too.
# (Read before any site exists: no plugin's contribution depends on one.)
PLUGINS = get_plugin_manager(load_entrypoints=installed_plugins_loaded())
FUZZED_SPEC = build_spec(PLUGINS.hook.sitemap_openapi(site=None))
FUZZED_SPEC["paths"]["/api/import"]["post"]["requestBody"]["content"]["application/x-ndjson"][
    "schema"
] = {
    "anyOf": [
        {"type": "array", "maxItems": 10, "items": {"$ref": "#/components/schemas/ImportLine"}},
        {"type": "string"},
    ]
}


@schemathesis.serializer("application/x-ndjson")
def _ndjson(_context: Any, value: Any) -> bytes:
    if isinstance(value, list):
        return "\n".join(json.dumps(line) for line in value).encode()
    if isinstance(value, str):
        return value.encode()
    return json.dumps(value).encode()


schema = schemathesis.openapi.from_dict(FUZZED_SPEC)
# Bounded (about 1,000 requests): per operation, the coverage phase's valid boundary values
# (longest strings, largest ids, every enum value...) and ten random requests, valid or not.
schema.config.generation.update(
    modes=[GenerationMode.POSITIVE, GenerationMode.NEGATIVE],
    max_examples=10,
    with_security_parameters=False,  # the bearer token is always sent, never fuzzed
)
# Wrong types and formats field by field are many cases and one code path (the request
# validation); the random negative requests reach it often enough.
schema.config.phases.coverage.generation.update(modes=[GenerationMode.POSITIVE])

# A request the document allows is refused only for what the document cannot know: an
# object that does not exist (404), a name or slug taken (409), a change feed's cursor the
# feed never gave or no longer continues from (410), a reference to nothing or a rule
# between fields (422). A 400 means the document promised too much.
schema.config.checks.update(included_check_names=["not_a_server_error", "positive_data_acceptance"])
schema.config.checks.positive_data_acceptance.expected_statuses = [
    "2xx",
    "404",
    "409",
    "410",
    "422",
]

# The document's own formats (schema.py's FORMATS), generated in the shape they describe
# and kept only when the server's check takes them: the server's definition is the one.
_LABEL = st.from_regex(r"\A[a-z0-9](?:[a-z0-9-]{0,8}[a-z0-9])?\Z")
_HOST = st.lists(_LABEL, min_size=1, max_size=3).map(".".join)
_SEGMENT = st.text(
    st.characters(
        exclude_categories=["Cs", "Cc"],
        exclude_characters=' <>"{}|\\^`?#/\ufffe\uffff',
    ),
    min_size=1,
    max_size=8,
)
_PATH = st.lists(_SEGMENT, max_size=3).map(lambda parts: "/" + "/".join(parts))
_URL = st.builds("{}://{}{}".format, st.sampled_from(["http", "https"]), _HOST, _PATH)
FORMAT_VALUES = {
    "http-url": _URL,
    "site-url": _URL,
    "image-url": _URL | _PATH,
    "site-path": _PATH,
    "hostname": _HOST,
    "timezone": st.sampled_from(sorted(zoneinfo.available_timezones())),
    # Lower-case letters of any script (and scripts without case), digits, "-" and "_".
    "slug": st.text(
        st.characters(categories=["Ll", "Lo", "Nd"]) | st.sampled_from("ab9-_"),
        min_size=1,
        max_size=12,
    ),
}
for _name, _values in FORMAT_VALUES.items():
    schemathesis.openapi.format(_name, _values.filter(FORMATS[_name][0]))

# GET /api/explain takes exactly one of its four parameters, which OpenAPI cannot say of
# query parameters (its description does): a request with more or fewer is refused with a
# 400 that says so, however valid each parameter is.
EXPLAIN_SUBJECTS = ("url", "post", "term", "author")


def breaks_the_explain_rule(case: Any) -> bool:
    if case.operation.path != "/api/explain":
        return False
    return sum(name in (case.query or {}) for name in EXPLAIN_SUBJECTS) != 1


# Objects with small ids and known names, which generated paths and references often hit.
SEED = [
    ("/api/post-types", {"name": "book", "label": "Books", "hierarchical": True}),
    ("/api/taxonomies", {"name": "genre", "label": "Genres"}),
    ("/api/authors", {"id": 1, "slug": "ada", "name": "Ada"}),
    ("/api/terms", {"id": 1, "taxonomy": "category", "name": "News"}),
    ("/api/terms", {"id": 2, "taxonomy": "genre", "name": "Poetry"}),
    ("/api/posts", {"id": 1, "type": "book", "title": "Parent", "author": 1, "status": "publish"}),
    ("/api/posts", {"id": 2, "type": "book", "title": "Child", "parent": 1, "terms": [2]}),
    ("/api/posts", {"id": 3, "type": "post", "title": "Hello", "terms": [1], "status": "publish"}),
]


@pytest.fixture
def seeded_api(api: Any) -> Any:
    for path, body in SEED:
        api.post_json(path, body, status=201)
    return api


def rows(engine: Any) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of every table (cheaper than reflecting the schema for each request)."""
    with engine.connect() as conn:
        return {
            table.name: sorted(map(tuple, conn.execute(select(table))), key=repr)
            for table in metadata.sorted_tables
        }


def test_fuzzed_document_is_the_served_one(testapp: Any) -> None:
    assert testapp.get("/api/openapi.json").json == build_spec(
        PLUGINS.hook.sitemap_openapi(site=None)
    )


@schema.parametrize()
@settings(
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    deadline=None,
    database=None,
)
def test_no_server_error_and_every_error_is_a_problem(
    case: Any, wsgi_app: Any, seeded_api: Any, api_token: str, clean_database: Any
) -> None:
    before = rows(clean_database)
    response = case.call(app=wsgi_app, headers={"Authorization": f"Bearer {api_token}"})
    if breaks_the_explain_rule(case):
        assert response.status_code == 400, response.text
        if not case.meta.generation.mode.is_negative and set(case.query) <= set(EXPLAIN_SUBJECTS):
            assert "exactly one of url, post, term or author" in response.text
    else:
        case.validate_response(response)  # no 5xx; valid data is not refused for its shape
    if response.status_code >= 400:
        assert response.headers["content-type"][0].startswith("application/problem+json")
        problem = json.loads(response.content)
        assert problem["status"] == response.status_code
        assert problem["title"]
        assert rows(clean_database) == before, "a rejected request changed the database"
