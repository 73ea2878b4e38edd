"""The reference deployment (``deploy/varnish/``), tested as it runs: a real Varnish with
the xkey module in front of two ``pserve production.ini`` processes on one database, and
``sitemap-server worker`` sending each applied change's purge to it (S-314).

- A document is served from the cache (``Age`` above 0, ``X-Cache: HIT``) until a write
  changes it; once the change is applied and its purge sent, the next request through the
  cache gets the new document; every document whose tags were not purged stays cached.
- No answer through the cache is older than the last applied change, while a crawler
  reads through it all the time (fetches in flight when a purge comes are not kept).
- Only the worker's hosts may purge; a purge names tags; the tags stay between the
  application and the cache; the admin API goes through uncached.

``make test`` runs this module once, on PostgreSQL; ``scripts/ensure-varnish`` has
installed Varnish. Nothing here waits a fixed time: it waits for the status endpoint, the
outbox, or the cache's own headers.
"""

from __future__ import annotations

import http.client
import re
import shutil
import subprocess
import tempfile
import threading
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import pytest
import requests
from sqlalchemy import create_engine, select
from sqlalchemy.engine import Engine, make_url

from sitemap_server.models import Notification
from sitemap_server.sitemaps.presence import worker_alive
from sitemap_server.testing import (
    PROJECT_ROOT,
    SITEMAP_NS,
    database_beside,
    http_server,
    parse_sitemap,
    production_command,
    pserve_production,
    running,
    wait_until,
    worker_process,
)
from sitemap_server.testing.varnish import (
    SYSTEM_VCL,
    VCL_DIRECTORY,
    deployment_environment,
    varnish,
    varnishd,
)

pytestmark = [pytest.mark.slow, pytest.mark.long]

SITE_URL = "http://varnish.test"
NS = {"s": SITEMAP_NS}
# Answers that are not sitemap documents but are cached and purged like them.
OTHER_DOCUMENTS = ["/robots.txt", "/sitemap.atom", "/sitemaps/"]


@dataclass
class Deployment:
    cache: str  # Varnish
    origins: list[str]  # the pserve processes
    token: str
    engine: Engine
    logs: Path
    session: requests.Session = field(default_factory=requests.Session)

    def get(self, path: str, base: str | None = None, **headers: str) -> requests.Response:
        return self.session.get(
            (base or self.cache) + path, headers=headers, timeout=60, allow_redirects=False
        )

    def origin(self, path: str) -> requests.Response:
        """What the application answers now (read from the database, not a process's
        watch, as Varnish asks on each fetch)."""
        return self.get(path, self.origins[0], **{"Cache-Control": "no-cache"})

    def api(self, method: str, path: str, **body: Any) -> requests.Response:
        response = self.session.request(
            method,
            self.cache + path,
            json=body or None,
            headers={"Authorization": f"Bearer {self.token}"},
            timeout=60,
        )
        assert response.status_code < 300, response.text
        return response

    def write(self, post_id: int, **changes: Any) -> int:
        """``PATCH /api/posts/ID`` through the cache: the number of the change it recorded."""
        return int(self.api("PATCH", f"/api/posts/{post_id}", **changes).headers["Sitemap-Change"])

    def applied_and_purged(self, change: int | None = None) -> None:
        """Until ``change`` (else every change) is applied to the sitemaps and no purge
        waits to be sent."""

        def done() -> bool:
            if change is None:
                if self.api("GET", "/api/sitemaps/status").json()["waiting"]:
                    return False
            elif not self.api("GET", f"/api/sitemaps/status?change={change}").json()["applied"]:
                return False
            with self.engine.connect() as conn:
                waiting = conn.scalar(
                    select(Notification.id).where(
                        Notification.channel == "varnish", Notification.status == "pending"
                    )
                )
            return waiting is None

        wait_until(done, f"change {change} to be applied and purged")

    def purged_tags(self, after_id: int) -> set[str]:
        with self.engine.connect() as conn:
            rows = conn.execute(
                select(Notification.payload).where(
                    Notification.channel == "varnish", Notification.id > after_id
                )
            ).scalars()
            return {tag for payload in rows for tag in payload["tags"]}

    def last_notification(self) -> int:
        with self.engine.connect() as conn:
            return int(conn.scalar(select(Notification.id).order_by(Notification.id.desc())) or 0)


@contextmanager
def own_database(database_url: str, directory: Path) -> Iterator[str]:
    url = make_url(database_url)
    if url.get_backend_name() == "postgresql":
        with database_beside(database_url, f"{url.database}_varnish") as own:
            yield own
    else:
        yield f"sqlite:///{directory / 'varnish.sqlite'}"


@pytest.fixture(scope="module")
def deployment(database_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    logs = tmp_path_factory.mktemp("varnish-deployment")
    with own_database(database_url, logs) as url, ExitStack() as stack:
        # Every process has the same settings: any of them may apply changes, and whoever
        # applies one stores its purge; the worker sends them.
        ports, cache_port, env = deployment_environment(url, SITE_URL)
        production_command(env, "migrate")
        production_command(env, "seed-demo", "--posts", "60")
        token = production_command(env, "token", "create", "varnish").strip()
        origins = [
            stack.enter_context(
                running(pserve_production(port), PROJECT_ROOT, env, logs / f"pserve{n}.log", port)
            )
            for n, port in enumerate(ports)
        ]
        cache = stack.enter_context(varnish(ports, logs / "varnishd.log", cache_port))
        engine = create_engine(url)
        stack.callback(engine.dispose)
        stack.enter_context(worker_process("production.ini", env, logs / "worker.log"))
        wait_until(lambda: worker_alive(engine), "the worker to start")
        found = Deployment(cache, origins, token, engine, logs)
        stack.callback(found.session.close)
        # The worker's first pass purges everything once (a new site URL): let it go by.
        wait_until(lambda: found.last_notification() > 0, "the worker's first purge")
        found.applied_and_purged()
        yield found
        for log in logs.glob("*.log"):
            assert "Traceback" not in log.read_text(), log.name


def document_paths(deployment: Deployment) -> list[str]:
    """Every document the site serves, in the forms crawlers and people read."""
    index = parse_sitemap(deployment.origin("/sitemap_index.xml").content)
    names = [
        loc.removeprefix(SITE_URL + "/").removesuffix(".xml")
        for loc in index.xpath("s:sitemap/s:loc/text()", namespaces=NS)
    ]
    assert len(names) >= 5, names
    paths = ["/sitemap_index.xml", "/sitemaps/sitemap_index.html", *OTHER_DOCUMENTS]
    for name in names:
        paths += [f"/{name}.xml", f"/{name}.xml.gz", f"/sitemaps/{name}.html"]
        if not name.startswith(("news", "video")):  # the plugins' have no text form
            paths.append(f"/{name}.txt")
    return paths


def tags_of(response: requests.Response) -> set[str]:
    return set(response.headers.get("Surrogate-Key", "").split())


def first_post(deployment: Deployment) -> dict[str, Any]:
    """A post the post sitemap lists (not one scheduled, or kept out)."""
    listed = deployment.origin("/post-sitemap.txt").text.split()
    posts = deployment.api("GET", "/api/posts?type=post&status=publish&per_page=100").json()
    return next(
        post for post in posts["items"] if any(f"/{post['slug']}/" in url for url in listed)
    )


def test_documents_stay_cached_until_a_write_changes_them(deployment):
    paths = document_paths(deployment)
    for path in paths:
        assert deployment.get(path).status_code in (200, 301), path
    first = {path: deployment.get(path) for path in paths}
    assert {path: r.headers["X-Cache"] for path, r in first.items()} == dict.fromkeys(paths, "HIT")
    # Served from the cache for a while: its Age grows past 0.
    wait_until(
        lambda: int(deployment.get("/sitemap_index.xml").headers["Age"]) > 0,
        "a cached answer to age",
    )
    before = {path: deployment.origin(path) for path in paths}
    since = deployment.last_notification()

    post = first_post(deployment)
    change = deployment.write(post["id"], title="A title the cache must not keep")
    deployment.applied_and_purged(change)

    purged = deployment.purged_tags(since)
    assert purged, "the write purged nothing"
    after = {path: deployment.origin(path) for path in paths}
    stayed = []
    for path in paths:
        through = deployment.get(path)
        assert through.status_code == after[path].status_code, path
        # Never older than the applied change.
        assert through.content == after[path].content, path
        # The application's tags stay between it and the cache.
        assert "Surrogate-Key" not in through.headers and "xkey" not in through.headers
        if before[path].content != after[path].content:
            assert tags_of(after[path]) & purged, f"{path} changed but was not purged"
            assert through.headers["X-Cache"] == "MISS", path
        elif not tags_of(after[path]) & purged:
            # Untouched: still the copy cached before the write.
            assert through.headers["X-Cache"] == "HIT", path
            assert int(through.headers["Age"]) > 0, path
            stayed.append(path)
    changed = [path for path in paths if before[path].content != after[path].content]
    assert "/post-sitemap.xml" in changed
    assert stayed, "the write purged every document"


@dataclass
class Crawler:
    """Reads a few documents through the cache, over and over, until stopped: fetches are
    in flight whenever a purge comes."""

    deployment: Deployment
    paths: list[str]
    statuses: list[int] = field(default_factory=list)
    running: bool = True

    def crawl(self) -> None:
        with requests.Session() as session:
            while self.running:
                for path in self.paths:
                    response = session.get(self.deployment.cache + path, timeout=60)
                    self.statuses.append(response.status_code)


def test_no_answer_through_the_cache_is_older_than_the_last_applied_change(deployment):
    post = first_post(deployment)
    crawler = Crawler(deployment, ["/post-sitemap.xml", "/sitemap_index.xml", "/sitemap.atom"])
    threads = [threading.Thread(target=crawler.crawl, daemon=True) for _ in range(4)]
    for thread in threads:
        thread.start()
    try:
        for number in range(12):
            slug = f"through-the-cache-{number}"
            change = deployment.write(post["id"], slug=slug)
            deployment.applied_and_purged(change)
            body = deployment.get("/post-sitemap.xml").text
            assert f"/{slug}/" in body, f"write {number} is not served through the cache"
            assert f"/through-the-cache-{number - 1}/" not in body
    finally:
        crawler.running = False
        for thread in threads:
            thread.join(timeout=60)
    assert crawler.statuses and set(crawler.statuses) == {200}


def purge(base: str, headers: dict[str, str], source: str = "127.0.0.1") -> tuple[int, str]:
    """A PURGE sent from ``source`` (another loopback address is another host to the ACL)."""
    host, port = re.match(r"http://([\d.]+):(\d+)", base).groups()  # type: ignore[union-attr]
    connection = http.client.HTTPConnection(host, int(port), timeout=60, source_address=(source, 0))
    try:
        connection.request("PURGE", "/", headers=headers)
        answer = connection.getresponse()
        return answer.status, answer.read().decode()
    finally:
        connection.close()


def test_only_the_workers_hosts_purge_and_only_by_tag(deployment):
    deployment.get("/robots.txt")
    assert deployment.get("/robots.txt").headers["X-Cache"] == "HIT"
    status, _ = purge(deployment.cache, {"xkey-purge": "sitemaps"}, source="127.0.0.2")
    assert status == 403
    status, body = purge(deployment.cache, {})
    assert status == 400 and "xkey-purge" in body
    assert deployment.get("/robots.txt").headers["X-Cache"] == "HIT"
    status, body = purge(deployment.cache, {"xkey-purge": "doc:robots.txt"})
    assert status == 200 and "Purged 1 objects" in body
    assert deployment.get("/robots.txt").headers["X-Cache"] == "MISS"


def test_the_admin_api_goes_through_uncached(deployment):
    for _ in range(2):
        response = deployment.api("GET", "/api/posts?per_page=1")
        assert response.headers["X-Cache"] == "MISS"
    # Without credentials, the API says so: a cached answer would say it to everyone.
    refused = deployment.get("/api/posts?per_page=1")
    assert refused.status_code == 401 and refused.headers["X-Cache"] == "MISS"


def test_cookies_and_credentials_do_not_split_the_cache(deployment):
    deployment.get("/author-sitemap.xml")
    again = deployment.get("/author-sitemap.xml", Cookie="session=1", Authorization="Basic eDp5")
    assert again.status_code == 200 and again.headers["X-Cache"] == "HIT"


def test_the_configuration_compiles_as_shipped():
    """deploy/varnish/default.vcl as it is (varnishd -C), sitemaps.vcl included from
    vcl_path, with the modules Debian's varnish-modules installs."""

    workdir = Path(tempfile.mkdtemp(prefix="sitemap-vcc."))
    workdir.chmod(0o755)  # as root, varnishd compiles as its own user
    try:
        compiled = subprocess.run(
            [
                varnishd(),
                "-C",
                "-f",
                str(VCL_DIRECTORY / "default.vcl"),
                "-p",
                f"vcl_path={VCL_DIRECTORY}:{SYSTEM_VCL}",
                "-n",
                str(workdir / "work"),
            ],
            capture_output=True,
            text=True,
            timeout=120,
        )
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    assert compiled.returncode == 0, compiled.stderr[-2000:]


class HeldOrigin:
    """A stand-in origin for the configuration alone: it answers ``/doc`` with the next
    version of a tagged document, holding each answer until told (``release``)."""

    def __init__(self) -> None:
        self.version = 0
        self.arrived = threading.Event()
        self.release = threading.Event()

    def handler(self) -> type[BaseHTTPRequestHandler]:
        origin = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                body = b"ok\n"
                if self.path == "/doc":
                    origin.version += 1
                    body = f"version {origin.version}\n".encode()
                    origin.arrived.set()
                    assert origin.release.wait(120), "the test never released the answer"
                self.send_response(200)
                self.send_header("Content-Type", "text/plain")
                self.send_header("Content-Length", str(len(body)))
                self.send_header("Cache-Control", "public, max-age=0, s-maxage=0")
                self.send_header("Surrogate-Key", "sitemaps doc:doc")
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: Any) -> None:
                pass

        return Handler


def test_a_fetch_under_way_when_its_purge_comes_is_not_kept(tmp_path):
    """The fetch may have read the database before the change its purge is for: its
    client gets it, the cache does not keep it (sitemaps.vcl, vcl_backend_response)."""
    origin = HeldOrigin()
    origin.release.set()  # the health probes and the readiness check go through
    with http_server(origin.handler()) as base:
        port = int(base.rsplit(":", 1)[1])
        with varnish([port, port], tmp_path / "varnishd.log") as cache:
            origin.release.clear()
            answers: list[requests.Response] = []
            fetch = threading.Thread(target=lambda: answers.append(requests.get(cache + "/doc")))
            fetch.start()
            assert origin.arrived.wait(120), "the fetch never reached the origin"
            status, _ = purge(cache, {"xkey-purge": "doc:doc"})
            assert status == 200
            origin.release.set()
            fetch.join(timeout=120)
            assert answers[0].text == "version 1\n"
            again = requests.get(cache + "/doc")
            assert (again.text, again.headers["X-Cache"]) == ("version 2\n", "MISS")
            # A fetch with no purge during it is kept.
            kept = requests.get(cache + "/doc")
            assert (kept.text, kept.headers["X-Cache"]) == ("version 2\n", "HIT")
