"""A real Varnish in front of real servers, configured as ``deploy/varnish/`` says
(``tests/deploy/test_varnish.py``, ``bench/varnish_bench.py``).

Varnish is Debian's ``varnish`` with the xkey and var modules of ``varnish-modules``;
``scripts/ensure-varnish`` installs them (``make test`` runs it). The configuration is the
repository's own ``default.vcl`` with its two backends' ports replaced by the servers' and
``sitemaps.vcl`` included as it is.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import pytest
import requests

from .fixtures import PROJECT_ROOT
from .servers import free_port, running, server_environment, wait_until

VCL_DIRECTORY = PROJECT_ROOT / "deploy" / "varnish"
# The ports of default.vcl's backends, in order.
DEFAULT_PORTS = ("6543", "6544")
# Where Debian's Varnish keeps its own VCL (the built-in subroutines' includes).
SYSTEM_VCL = "/usr/share/varnish/vcl"


def varnishd() -> str:
    found = shutil.which("varnishd") or shutil.which("varnishd", path="/usr/sbin")
    if found is None:
        pytest.fail("Varnish is not installed: run scripts/ensure-varnish (make test does)")
    return found


def configuration(backend_ports: Sequence[int]) -> str:
    """``default.vcl`` with its backends on ``backend_ports`` of 127.0.0.1."""
    vcl = (VCL_DIRECTORY / "default.vcl").read_text()
    for default, port in zip(DEFAULT_PORTS, backend_ports, strict=True):
        line = f'.port = "{default}";'
        assert vcl.count(line) == 1, f"default.vcl has no backend on port {default}"
        vcl = vcl.replace(line, f'.port = "{port}";')
    return vcl


@contextmanager
def varnish(
    backend_ports: Sequence[int], log: Path, port: int | None = None, memory: str = "256m"
) -> Iterator[str]:
    """varnishd on ``port`` (a free one by default) of 127.0.0.1 in front of the servers on
    ``backend_ports``:
    its base URL once it answers ``/robots.txt`` with 200 through a healthy backend. Its
    output goes to ``log``; it is stopped and its directory removed afterwards."""
    # Not under pytest's temporary directories (mode 0700): as root, varnishd compiles
    # the configuration as its own unprivileged user, who must read it.
    directory = Path(tempfile.mkdtemp(prefix="sitemap-varnish."))
    directory.chmod(0o755)
    top = directory / "default.vcl"
    top.write_text(configuration(backend_ports))
    top.chmod(0o644)
    port = port or free_port()
    command = [
        varnishd(),
        "-F",
        "-a",
        f"127.0.0.1:{port}",
        "-f",
        str(top),
        "-p",
        f"vcl_path={directory}:{VCL_DIRECTORY}:{SYSTEM_VCL}",
        "-n",
        str(directory / "work"),
        "-s",
        f"malloc,{memory}",
    ]
    if os.geteuid() != 0:
        command += ["-j", "none"]  # the jail drops privileges only from root
    try:
        with running(command, directory, dict(os.environ), log, port) as base:
            # The backends' health is probed; until a probe has passed they count as sick.
            wait_until(
                lambda: requests.get(base + "/robots.txt", timeout=30).status_code == 200,
                "Varnish to reach its backends",
            )
            yield base
    finally:
        shutil.rmtree(directory, ignore_errors=True)


def deployment_environment(
    database_url: str, site_url: str
) -> tuple[list[int], int, dict[str, str]]:
    """What a test of the reference deployment starts: two free ports for ``pserve``,
    one for Varnish, and the environment every process runs with (the same settings
    everywhere: whoever applies a change stores its purge, to this Varnish)."""
    ports: list[int] = []
    while len(ports) < 3:  # two servers and the cache
        port = free_port()
        if port not in ports:
            ports.append(port)
    *origin_ports, cache_port = ports
    env = server_environment(
        SITEMAP_SERVER_DATABASE_URL=database_url,
        SITEMAP_SERVER_SITE_URL=site_url,
        SITEMAP_SERVER_PURGE_VARNISH=f"http://127.0.0.1:{cache_port}",
    )
    return origin_ports, cache_port, env
