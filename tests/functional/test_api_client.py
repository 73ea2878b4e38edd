"""The admin API's clients as integrators make them, against a real ``pserve
production.ini``: one generated from the served ``/api/openapi.json`` by
openapi-python-client, the usual Python generator (every schema and every JSON operation
is generated; it creates, reads, updates and deletes a post), and the change feed's
client that docs/api.md prints, run as printed."""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
import requests

from sitemap_server.testing import (
    PROJECT_ROOT,
    SITEMAP_NS,
    parse_sitemap,
    serve_production,
    wait_until,
)

pytestmark = pytest.mark.slow

SITE_URL = "https://www.example.test"
BIN = Path(sys.executable).parent
PACKAGE = "sitemap_client"
# What the generator cannot make, and says so: the import's bodies are NDJSON or a
# WordPress export, no JSON it knows how to model.
NOT_GENERATED = {"POST /api/import"}


@pytest.fixture
def server(database_url: str, clean_database: Any, tmp_path: Path) -> Iterator[str]:
    with serve_production(
        database_url, SITE_URL, tmp_path / "pserve.log", ready_path="/api/openapi.json"
    ) as base:
        yield base


@pytest.fixture
def generated(server: str, tmp_path: Path) -> Iterator[tuple[Any, str]]:
    """The client package generated from the served document, imported, and what the
    generator said."""
    spec = tmp_path / "openapi.json"
    spec.write_bytes(requests.get(f"{server}/api/openapi.json", timeout=10).content)
    generate = ["generate", "--path", spec, "--meta", "none", "--output-path", tmp_path / PACKAGE]
    finished = subprocess.run(
        [BIN / "openapi-python-client", *generate],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"},
    )
    assert finished.returncode == 0, finished.stderr
    sys.path.insert(0, str(tmp_path))
    try:
        yield importlib.import_module(PACKAGE), finished.stdout + finished.stderr
    finally:
        sys.path.remove(str(tmp_path))
        for name in [n for n in sys.modules if n == PACKAGE or n.startswith(PACKAGE + ".")]:
            del sys.modules[name]


def skipped_endpoints(said: str) -> set[str]:
    """The operations the generator left out: ``WARNING parsing POST /api/import within
    import_. Endpoint will not be generated.``"""
    return {
        " ".join(line.split()[2:4])
        for line in said.splitlines()
        if line.startswith("WARNING parsing") and "will not be generated" in line
    }


def test_a_generated_client_creates_updates_and_deletes_a_post(generated, server, api):
    client_package, said = generated
    assert "Unable to process schema" not in said, said
    assert "response will be omitted" not in said, said
    assert skipped_endpoints(said) == NOT_GENERATED, said
    models = importlib.import_module(f"{PACKAGE}.models")
    posts = importlib.import_module(f"{PACKAGE}.api.posts")
    for name in ("create_post", "get_post", "update_post", "delete_post"):
        importlib.import_module(f"{PACKAGE}.api.posts.{name}")
    with client_package.AuthenticatedClient(base_url=server, token=api.authorization[1]) as client:
        use_posts(client, models, posts)
    assert api.get("/api/posts").json["total"] == 0


def use_posts(client: Any, models: Any, posts: Any) -> None:
    """Create, read, update (once refused) and delete a post through the client."""
    published = datetime(2024, 5, 1, 12, tzinfo=UTC)

    created = posts.create_post.sync(
        client=client,
        body=models.PostCreate(
            type_="post",
            title="Made by a generated client",
            slug="generated",
            status=models.PostStatus.PUBLISH,
            published_at=published,
        ),
    )
    assert isinstance(created, models.Post), created
    assert created.permalink == f"{SITE_URL}/2024/05/generated/"
    assert created.published_at == published

    updated = posts.update_post.sync(
        created.id, client=client, body=models.PostUpdate(title="Renamed", slug="renamed")
    )
    assert isinstance(updated, models.Post), updated
    assert (updated.title, updated.permalink) == ("Renamed", f"{SITE_URL}/2024/05/renamed/")
    assert posts.get_post.sync(created.id, client=client).title == "Renamed"

    refused = posts.update_post.sync(
        created.id, client=client, body=models.PostUpdate(slug="Not a slug!")
    )
    assert isinstance(refused, models.Problem) and refused.status == 400, refused
    assert [error.field for error in refused.errors] == ["slug"]

    deleted = posts.delete_post.sync_detailed(created.id, client=client)
    assert deleted.status_code == 204
    gone = posts.get_post.sync(created.id, client=client)
    assert isinstance(gone, models.Problem) and gone.status == 404


def docs_example(heading: str) -> str:
    """The Python example of a section of docs/api.md, as it is printed there."""
    text = (PROJECT_ROOT / "docs" / "api.md").read_text()
    section = text.split(f"\n## {heading}\n", 1)[1].split("\n## ", 1)[0]
    return section.split("```python\n", 1)[1].split("```", 1)[0]


def served_urls(base: str) -> set[str]:
    """Every URL the sitemaps served at ``base`` list, as a crawler reads them."""
    ns = {"s": SITEMAP_NS}
    index = parse_sitemap(requests.get(f"{base}/sitemap_index.xml", timeout=10).content)
    found: set[str] = set()
    for loc in index.iterfind("s:sitemap/s:loc", ns):
        path = loc.text.removeprefix(SITE_URL)
        document = parse_sitemap(requests.get(base + path, timeout=10).content)
        found.update(url.text for url in document.iterfind("s:url/s:loc", ns))
    return found


def test_the_change_feed_client_of_the_docs_holds_what_the_sitemaps_list(server, api):
    """docs/api.md's client, run as printed, against ``pserve production.ini``, which
    applies the writes itself (as a sitemap request does, once they have waited
    ``max_staleness``): its sitemaps and its feed are read until they show them."""
    namespace: dict[str, Any] = {}
    exec(compile(docs_example("Change feed"), "docs/api.md", "exec"), namespace)
    follow = namespace["follow"]
    token = api.authorization[1]
    posts = [
        api.post_json(
            "/api/posts", {"type": "post", "title": f"Post {n}", "status": "publish"}
        ).json
        for n in range(3)
    ]
    # The served site's URLs (its site URL is the server's environment's).
    urls = [SITE_URL + urlsplit(p["permalink"]).path for p in posts]
    state = {"cursor": "0", "urls": set()}

    def holds(want: set[str], gone: frozenset[str] = frozenset()) -> bool:
        follow(server, token, state)
        listed = served_urls(server)
        return want <= listed and not gone & listed and state["urls"] == listed

    wait_until(lambda: holds(set(urls)), "the feed and the sitemaps to list the posts")

    api.delete(f"/api/posts/{posts[0]['id']}", status=204)
    wait_until(lambda: holds(set(urls[1:]), frozenset({urls[0]})), "both to drop the deleted post")
    assert urls[0] not in state["urls"]
