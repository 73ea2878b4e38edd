"""sitemap-server deployed as users deploy it (S-501, S-801).

Wheels of the core and both plugins are built from this checkout and installed into a
fresh virtual environment without any extra (no pytest, no WebTest). ``production.ini`` is
copied alone into an empty directory, and every command runs from yet another one: nothing
may depend on the repository's layout. The database is the test database's server
(PostgreSQL under ``make test``) with a database of its own.

Slow (a virtual environment and its packages from the registry): ``make test`` runs this
module once, on PostgreSQL.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import requests
from sqlalchemy.engine import make_url

from sitemap_server.testing import (
    PROJECT_ROOT,
    SITEMAP_NS,
    database_beside,
    free_port,
    parse_sitemap,
    running,
    server_environment,
)

pytestmark = [pytest.mark.slow, pytest.mark.long]

DISTRIBUTIONS = {
    "sitemap_server": PROJECT_ROOT,
    "sitemap_server_video": PROJECT_ROOT / "plugins" / "video",
    "sitemap_server_news": PROJECT_ROOT / "plugins" / "news",
}
TEST_PACKAGES = ("pytest", "webtest", "hypothesis", "schemathesis", "playwright")
NS = {"s": SITEMAP_NS}
LOCS = "s:url/s:loc"
SITEMAPS = "s:sitemap/s:loc"


def run(command: list[str | Path], **kwargs: Any) -> str:
    """``command`` to completion; its standard output (its output in the failure)."""
    finished = subprocess.run(
        [str(part) for part in command], capture_output=True, text=True, timeout=600, **kwargs
    )
    assert finished.returncode == 0, f"{command}:\n{finished.stdout}\n{finished.stderr}"
    return str(finished.stdout)


@pytest.fixture(scope="module")
def wheels(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """One wheel per distribution, built as a release would be (isolated builds)."""
    directory = tmp_path_factory.mktemp("wheels")
    pip_wheel = [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--wheel-dir"]
    run([*pip_wheel, directory, *DISTRIBUTIONS.values()])
    built = {path.name.split("-")[0]: path for path in directory.glob("*.whl")}
    assert set(built) == set(DISTRIBUTIONS)
    return built


@pytest.fixture(scope="module")
def venv(tmp_path_factory: pytest.TempPathFactory, wheels: dict[str, Path]) -> Path:
    """A fresh virtual environment with the three wheels and their dependencies, no extras:
    its ``bin`` directory."""
    directory = tmp_path_factory.mktemp("venv")
    run([sys.executable, "-m", "venv", directory])
    bin_dir = directory / "bin"
    run([bin_dir / "python", "-m", "pip", "install", "--quiet", *wheels.values()])
    return bin_dir


def package_files(root: Path, package: str) -> set[str]:
    """Every file of the package's source directory, as wheel paths (bytecode aside)."""
    source = root / package
    return {
        path.relative_to(root).as_posix()
        for path in source.rglob("*")
        if path.is_file() and "__pycache__" not in path.parts
    }


@pytest.mark.parametrize("package", DISTRIBUTIONS)
def test_each_wheel_holds_every_file_of_its_package(wheels, package):
    with zipfile.ZipFile(wheels[package]) as wheel:
        names = set(wheel.namelist())
    missing = package_files(DISTRIBUTIONS[package], package) - names
    assert not missing, f"not in the wheel: {sorted(missing)}"
    assert not [n for n in names if n.startswith(("tests/", "bench/", "plugins/"))]


def test_the_core_wheel_holds_what_it_reads_at_run_time(wheels):
    with zipfile.ZipFile(wheels["sitemap_server"]) as wheel:
        names = set(wheel.namelist())
    for expected in (
        "sitemap_server/migrations/env.py",
        "sitemap_server/migrations/script.py.mako",
        "sitemap_server/migrations/versions/0001_initial_schema.py",
        "sitemap_server/templates/urlset.pt",
        "sitemap_server/templates/url.pt",
        "sitemap_server/templates/sitemapindex.pt",
        "sitemap_server/static/main-sitemap.xsl",
        "sitemap_server/api/openapi.yaml",
        "sitemap_server/testing/schemas/sitemap-with-extensions.xsd",
        "sitemap_server/testing/schemas/sitemap-with-hreflang.xsd",
        "sitemap_server/testing/schemas/xhtml-link.xsd",
        "sitemap_server/testing/schemas/legacy-2009/siteindex.xsd",
        "sitemap_server/py.typed",
    ):
        assert expected in names
    # The test helpers are there for plugin authors, but no auto-loaded pytest plugin.
    entry_points = next(n for n in names if n.endswith(".dist-info/entry_points.txt"))
    with zipfile.ZipFile(wheels["sitemap_server"]) as wheel:
        assert "pytest11" not in wheel.read(entry_points).decode()


def test_the_fresh_environment_has_no_test_package(venv):
    for package in TEST_PACKAGES:
        finished = subprocess.run(
            [venv / "python", "-c", f"import {package}"], capture_output=True, timeout=60
        )
        assert finished.returncode != 0, f"{package} is installed"
    assert run([venv / "sitemap-server", "--version"]).strip() == "sitemap-server 0.1.0"


@dataclass
class Deployment:
    """The installed commands, with an ini file and an environment of their own."""

    bin: Path
    ini: Path
    cwd: Path
    port: int
    env: dict[str, str]

    def command(self, *args: str) -> str:
        command = [self.bin / "sitemap-server", "--config", self.ini, *args]
        return run(command, cwd=self.cwd, env=self.env)

    @contextmanager
    def serving(self, log: Path) -> Iterator[BaseUrlSession]:
        """``pserve production.ini`` running: a session whose paths are relative to it."""
        command = [str(self.bin / "pserve"), str(self.ini), f"listen=127.0.0.1:{self.port}"]
        with (
            running(command, self.cwd, self.env, log, self.port) as base,
            BaseUrlSession(base) as session,
        ):
            yield session


class BaseUrlSession(requests.Session):
    def __init__(self, base: str) -> None:
        super().__init__()
        self.base = base

    def request(self, method: str, url: str | bytes, *args: Any, **kwargs: Any) -> Any:
        kwargs.setdefault("timeout", 30)
        return super().request(method, self.base + str(url), *args, **kwargs)


@pytest.fixture(scope="module")
def database(database_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A database of the deployment's own: on the test database's PostgreSQL server, or a
    new SQLite file."""
    if make_url(database_url).get_backend_name() != "postgresql":
        yield f"sqlite:///{tmp_path_factory.mktemp('deploy-db') / 'sitemap.sqlite'}"
        return
    with database_beside(database_url, "sitemap_deploy") as url:
        yield url


@pytest.fixture(scope="module")
def deployment(venv, database, tmp_path_factory) -> Deployment:
    """production.ini alone in a directory, the commands run from another; migrated, with
    the demo site and a token."""
    ini = tmp_path_factory.mktemp("etc") / "production.ini"
    shutil.copy(PROJECT_ROOT / "production.ini", ini)
    port = free_port()
    env = server_environment(
        SITEMAP_SERVER_DATABASE_URL=database, SITEMAP_SERVER_SITE_URL=f"http://127.0.0.1:{port}"
    )
    found = Deployment(venv, ini, tmp_path_factory.mktemp("elsewhere"), port, env)
    assert "database is at" in found.command("migrate")
    found.command("seed-demo", "--posts", "120")
    return found


def fetch(server: BaseUrlSession, path: str) -> Any:
    """The parsed, schema-valid sitemap at ``path``."""
    response = server.get(path)
    assert response.status_code == 200, (path, response.status_code)
    assert response.headers["Content-Type"] == "text/xml; charset=UTF-8"
    return parse_sitemap(response.content)


def test_the_installed_wheels_migrate_and_serve_every_sitemap(deployment, tmp_path):
    token = deployment.command("token", "create", "deploy").strip()
    with deployment.serving(tmp_path / "pserve.log") as server:
        index = fetch(server, "/sitemap_index.xml")
        sitemaps = [loc.text.removeprefix(server.base) for loc in index.iterfind(SITEMAPS, NS)]
        for name in ("post", "page", "video", "news"):
            assert f"/{name}-sitemap.xml" in sitemaps
        for path in sitemaps:
            urls = fetch(server, path).findall("s:url", NS)
            assert urls, f"{path} lists nothing"
            html = server.get(f"/sitemaps/{path.strip('/').removesuffix('.xml')}.html")
            assert html.status_code == 200
            assert html.headers["Content-Type"].startswith("text/html")

        signed_in = {"Authorization": f"Bearer {token}"}
        pages = server.get("/api/posts", params={"type": "page"}, headers=signed_in)
        assert pages.status_code == 200
        assert pages.json()["total"] > 0
        created = server.post(
            "/api/posts",
            json={"type": "post", "title": "Deployed", "status": "publish"},
            headers=signed_in,
        )
        assert created.status_code == 201, created.text
        posts = [path for path in sitemaps if path.startswith("/post-sitemap")]

        def listed() -> list[str]:
            return [loc.text for path in posts for loc in fetch(server, path).iterfind(LOCS, NS)]

        # No worker runs here: the first request after the change has waited
        # max_staleness (1 s) applies it.
        deadline = time.monotonic() + 5
        while created.json()["permalink"] not in listed() and time.monotonic() < deadline:
            time.sleep(0.2)
        assert created.json()["permalink"] in listed()
        assert server.get("/api/posts").status_code == 401


def test_uninstalling_a_plugin_leaves_the_core_serving(deployment, tmp_path):
    """S-501: the news plugin's wheel uninstalled, its sitemap is gone and nothing else."""

    def installed_plugins() -> dict[str, str]:
        listed = json.loads(deployment.command("plugins", "--json"))["plugins"]
        return {p["name"]: p["distribution"] for p in listed if p["kind"] == "installed"}

    assert installed_plugins() == {"news": "sitemap-server-news", "video": "sitemap-server-video"}
    run([deployment.bin / "python", "-m", "pip", "uninstall", "--yes", "sitemap-server-news"])
    assert installed_plugins() == {"video": "sitemap-server-video"}
    assert "database is at" in deployment.command("migrate")  # no revision it cannot find
    with deployment.serving(tmp_path / "pserve.log") as server:
        assert server.get("/news-sitemap.xml").status_code == 404
        index = fetch(server, "/sitemap_index.xml")
        sitemaps = [loc.text for loc in index.iterfind(SITEMAPS, NS)]
        assert not [url for url in sitemaps if url.endswith("/news-sitemap.xml")]
        assert [url for url in sitemaps if url.endswith("/video-sitemap.xml")]
        assert fetch(server, "/post-sitemap.xml").findall("s:url", NS)
