"""Bearer tokens (S-702): every documented operation refuses a request without a valid one."""

import base64
import json
import re

import pytest
from sqlalchemy import select
from sqlalchemy.orm import Session

from sitemap_server.models import ApiToken
from sitemap_server.services.tokens import create_token, revoke_token
from sitemap_server.testing import PROBLEM_JSON

# A valid body for each operation, so that a request let through by mistake would change
# something (and the snapshot would show it).
BODIES = {
    "createPost": {"type": "post", "title": "Intruder"},
    "updatePost": {"title": "Intruder"},
    "createPostType": {"name": "intruder", "label": "Intruder"},
    "updatePostType": {"label": "Intruder"},
    "createTaxonomy": {"name": "intruder", "label": "Intruder"},
    "updateTaxonomy": {"label": "Intruder"},
    "createAuthor": {"slug": "intruder", "name": "Intruder"},
    "updateAuthor": {"name": "Intruder"},
    "createTerm": {"taxonomy": "category", "name": "Intruder"},
    "updateTerm": {"name": "Intruder"},
    "updateSettings": {"title": "Intruder"},
}
# Operations that need a query string: the home page, which every site has.
QUERIES = {"explain": "?url=/"}
IMPORT_BODY = b'{"author": {"slug": "intruder", "name": "Intruder"}}\n'


@pytest.fixture
def existing(api):
    """Objects for every path parameter of the document: path template -> value."""
    api.post_json("/api/post-types", {"name": "book", "label": "Books"}, status=201)
    api.post_json("/api/taxonomies", {"name": "genre", "label": "Genres"}, status=201)
    author = api.post_json("/api/authors", {"slug": "ada", "name": "Ada"}, status=201).json
    term = api.post_json("/api/terms", {"taxonomy": "genre", "name": "Poetry"}, status=201).json
    post = api.post_json(
        "/api/posts",
        {"type": "book", "title": "Odes", "author": author["id"], "terms": [term["id"]]},
        status=201,
    ).json
    return {
        "/api/posts/{id}": post["id"],
        "/api/authors/{id}": author["id"],
        "/api/terms/{id}": term["id"],
        "/api/post-types/{name}": "book",
        "/api/taxonomies/{name}": "genre",
    }


def documented_operations(testapp, existing):
    """(method, concrete path, request keyword arguments, whether the path names an
    existing object) for every operation served."""
    document = testapp.get("/api/openapi.json").json
    operations = []
    for template, item in document["paths"].items():
        path, known = template, True
        if "{" in template:
            # An installed plugin's paths need tokens too: below an object the core
            # knows (/api/posts/{id}/videos) they take its id; others get the post's id,
            # refused before anything is looked up.
            owner = max((t for t in existing if template.startswith(t)), key=len, default=None)
            known = owner is not None
            value = existing[owner] if owner else existing["/api/posts/{id}"]
            path = re.sub(r"\{\w+\}", str(value), template)
        for method, operation in item.items():
            if method == "parameters":
                continue
            kwargs = {}
            content = operation.get("requestBody", {}).get("content", {})
            if "application/json" in content:
                body = BODIES.get(operation["operationId"], {})
                kwargs = {"body": json.dumps(body).encode(), "content_type": "application/json"}
            elif "application/x-ndjson" in content:
                kwargs = {"body": IMPORT_BODY, "content_type": "application/x-ndjson"}
            query = QUERIES.get(operation["operationId"], "")
            operations.append((method.upper(), path + query, kwargs, known))
    assert len(operations) >= 25  # the document really was read
    return operations


def basic(user, password):
    return "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()


@pytest.fixture
def revoked_token(clean_database, api):
    session = Session(clean_database)
    try:
        token = create_token(session, "former-employee")
        session.commit()
        # It worked before it was revoked.
        api.get("/api/posts", headers={"Authorization": f"Bearer {token}"}, status=200)
        revoke_token(session, "former-employee")
        session.commit()
    finally:
        session.close()
    return token


@pytest.fixture
def credentials(request, api_token, revoked_token):
    """The Authorization header of each kind of bad credentials (None: no header)."""
    return {
        "none": None,
        "wrong": "Bearer sms_" + "x" * 43,
        "empty": "Bearer ",
        "revoked": f"Bearer {revoked_token}",
        "basic": basic("tests", api_token),
        "token-as-basic": "Basic " + api_token,
        "unknown-scheme": f"Token {api_token}",
    }[request.param]


@pytest.mark.parametrize(
    "credentials",
    ["none", "wrong", "empty", "revoked", "basic", "token-as-basic", "unknown-scheme"],
    indirect=True,
)
def test_every_operation_needs_a_valid_bearer_token(testapp, existing, credentials, db_snapshot):
    before = db_snapshot()
    headers = {} if credentials is None else {"Authorization": credentials}
    wrong = []
    for method, path, kwargs, _known in documented_operations(testapp, existing):
        response = testapp.request(
            path, method=method, headers=headers, expect_errors=True, **kwargs
        )
        problem = response.json if response.content_type == PROBLEM_JSON else None
        if (
            response.status_int != 401
            or not response.headers.get("WWW-Authenticate", "").startswith("Bearer")
            or problem is None
            or problem["status"] != 401
        ):
            wrong.append(f"{method} {path}: {response.status} {response.headers}")
    assert wrong == []
    assert db_snapshot() == before


def test_the_same_requests_succeed_with_the_token(api, existing):
    """The control for the test above: the paths exist and the bodies are accepted."""
    for method, path, kwargs, known in documented_operations(api, existing):
        # Paths that name no existing object (a plugin's /api/videos/{id}) have their own
        # tests.
        if method == "GET" and known:
            api.request(path, method=method, status=200, **kwargs)
    api.request(
        "/api/import",
        method="POST",
        body=IMPORT_BODY,
        status=200,
        content_type="application/x-ndjson",
    )


def test_no_token_and_wrong_token_are_told_apart(testapp):
    missing = testapp.get("/api/posts", status=401)
    assert missing.headers["WWW-Authenticate"] == "Bearer"
    assert "Bearer" in missing.json["detail"]

    wrong = testapp.get("/api/posts", headers={"Authorization": "Bearer nope"}, status=401)
    assert wrong.headers["WWW-Authenticate"] == 'Bearer error="invalid_token"'
    assert wrong.content_type == PROBLEM_JSON


def test_bearer_scheme_is_case_insensitive(testapp, api_token):
    testapp.get("/api/posts", headers={"Authorization": f"bearer {api_token}"}, status=200)


def test_an_oversized_token_is_refused_quickly(testapp):
    response = testapp.get(
        "/api/posts", headers={"Authorization": "Bearer " + "x" * 100_000}, status=401
    )
    assert response.content_type == PROBLEM_JSON


def test_openapi_document_needs_no_token(testapp):
    response = testapp.get("/api/openapi.json", status=200)
    assert response.content_type == "application/json"
    document = response.json
    assert document["openapi"].startswith("3.")
    assert "/api/posts" in document["paths"]
    assert document["components"]["securitySchemes"]["bearer"]["scheme"] == "bearer"
    assert document["security"] == [{"bearer": []}]


def test_docs_page_needs_no_token(testapp):
    response = testapp.get("/api/docs", status=200)
    assert response.content_type == "text/html"
    assert "/api/openapi.json" in response.text


def test_tokens_are_stored_hashed(api_token, dbsession, db_snapshot):
    row = dbsession.scalars(select(ApiToken)).one()
    assert row.name == "tests"
    assert row.token_hash != api_token
    secret = api_token.removeprefix("sms_")
    everything = repr(db_snapshot())
    assert api_token not in everything
    assert secret not in everything
