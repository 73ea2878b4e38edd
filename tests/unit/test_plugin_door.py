"""Plugins reach the core through one door: ``sitemap_server.plugin``.

The two plugins that ship beside the core, and the tests' sample plugin, are held to what
a third-party plugin may use: their packages import from ``sitemap_server.plugin`` and
nothing else of ours.
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

from sitemap_server import plugin

PLUGINS = Path(__file__).resolve().parents[2] / "plugins"
SAMPLE = Path(__file__).resolve().parents[1] / "sample_plugin"
PACKAGES = sorted(p.parent for p in PLUGINS.glob("*/sitemap_server_*/__init__.py"))


def core_imports(path: Path) -> list[tuple[int, str]]:
    """(line, module) of each import of a ``sitemap_server`` module in ``path``."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        elif isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        else:
            continue
        for name in names:
            if name == "sitemap_server" or name.startswith("sitemap_server."):
                found.append((node.lineno, name))
    return found


def test_there_are_plugins_to_check():
    assert [p.name for p in PACKAGES] == ["sitemap_server_news", "sitemap_server_video"]


@pytest.mark.parametrize("package", [*PACKAGES, SAMPLE], ids=lambda p: p.name)
def test_a_plugin_package_imports_only_the_door(package: Path):
    outside = [
        f"{path.relative_to(package.parent)}:{line}: {module}"
        for path in sorted(package.rglob("*.py"))
        for line, module in core_imports(path)
        if module != "sitemap_server.plugin"
    ]
    assert outside == []


def test_the_door_exports_what_it_names():
    missing = [name for name in plugin.__all__ if not hasattr(plugin, name)]
    assert missing == []
    # Each name is the core's own object, not a copy that could drift from it.
    assert plugin.hookimpl is importlib.import_module("sitemap_server.hookspecs").hookimpl
