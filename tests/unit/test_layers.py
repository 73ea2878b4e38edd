"""The core's layers import downwards only.

``models`` (tables and the read helpers: settings, site URL, the write lock) and
``content`` (what a URL is, what is listed) are the bottom; the sitemap engine
(``sitemaps``, ``providers``) and the notifications (``notify``) build on them; the
admin API's services (``services``) and views (``api``) sit on top. An engine module
that reached up into ``services`` or ``api`` would tie the engine to one way of writing.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "sitemap_server"
# Each lower package, and what it must never import.
BELOW = {
    "models": ("services", "api", "sitemaps", "notify", "providers", "cli"),
    "content": ("services", "api", "notify", "cli"),
    "providers": ("services", "api", "notify", "cli"),
    "sitemaps": ("services", "api", "cli"),
    "notify": ("services", "api", "cli"),
}


def imported_packages(source: str, depth: int) -> list[tuple[int, str]]:
    """(line, top-level package of ``sitemap_server``) of each import in ``source``, a
    module ``depth`` packages below ``sitemap_server`` (0: ``sitemap_server/cli.py``),
    whether relative (``from ..services import x``) or absolute."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                if node.level != depth + 1:
                    continue  # within its own package
                parts = (node.module or "").split(".")
                names = [parts[0]] if parts[0] else [a.name for a in node.names]
            elif (node.module or "").startswith("sitemap_server."):
                names = [(node.module or "").split(".")[1]]
            else:
                continue
        elif isinstance(node, ast.Import):
            names = [
                a.name.split(".")[1] for a in node.names if a.name.startswith("sitemap_server.")
            ]
        else:
            continue
        found.extend((node.lineno, name) for name in names)
    return found


def module_imports(path: Path) -> list[tuple[int, str]]:
    return imported_packages(path.read_text(), len(path.relative_to(PACKAGE).parts) - 1)


@pytest.mark.parametrize("package", sorted(BELOW))
def test_a_lower_layer_does_not_import_a_higher_one(package: str):
    forbidden = BELOW[package]
    found = [
        f"{path.relative_to(PACKAGE)}:{line}: imports {name}"
        for path in sorted((PACKAGE / package).rglob("*.py"))
        for line, name in module_imports(path)
        if name in forbidden
    ]
    assert found == []


def test_the_check_sees_each_form_of_an_import():
    source = """
from ..services.common import flush
from .. import api
from . import maintenance
from .changes import log
import sitemap_server.cli
from sitemap_server.notify import outbox
"""
    assert imported_packages(source, depth=1) == [
        (2, "services"),
        (3, "api"),
        (6, "cli"),
        (7, "notify"),
    ]
