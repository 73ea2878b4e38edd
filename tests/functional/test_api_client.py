"""A client generated from the served ``/api/openapi.json`` by openapi-python-client, the
usual Python generator, as an integrator would make one: every schema and every JSON
operation is generated, and the client creates, reads, updates and deletes a post
against a real ``pserve production.ini``."""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import requests

from sitemap_server.testing import serve_production

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
