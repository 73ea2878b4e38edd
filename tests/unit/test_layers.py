"""The core's layers import downwards only, and no module imports itself in a circle.

``models`` (tables and the read helpers: settings, site URL, the write lock) and
``content`` (what a URL is, what is listed) are the bottom; the sitemap engine
(``sitemaps``, ``providers``) and the notifications (``notify``) build on them; the
admin API's services (``services``) and views (``api``) sit on top. An engine module
that reached up into ``services`` or ``api`` would tie the engine to one way of writing.
"""

from __future__ import annotations

import ast
from graphlib import CycleError, TopologicalSorter
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "sitemap_server"
# Each lower package, and what it must never import.
BELOW = {
    "models": ("services", "api", "sitemaps", "notify", "providers", "cli"),
    "content": ("services", "api", "sitemaps", "notify", "providers", "cli"),
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


def module_graph() -> dict[str, set[str]]:
    """Each module of ``sitemap_server`` and the modules of ours it imports, at the top
    or inside a function (a lazy import hides a circle, it does not break it); imports
    under ``if TYPE_CHECKING:`` are left out (they never run)."""
    modules: dict[str, tuple[Path, list[str]]] = {}
    for path in PACKAGE.rglob("*.py"):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        package = parts[:-1]  # what a relative import starts from
        if parts[-1] == "__init__":
            parts = parts[:-1]
        modules[".".join(parts)] = (path, package)
    graph: dict[str, set[str]] = {}
    for name, (path, package) in modules.items():
        found: set[str] = set()
        for node in _runnable_nodes(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package[: len(package) - node.level + 1]
                    target = [*base, *(node.module.split(".") if node.module else [])]
                elif (node.module or "").startswith("sitemap_server"):
                    target = (node.module or "").split(".")
                else:
                    continue
                submodules = [".".join([*target, alias.name]) for alias in node.names]
                if not all(sub in modules for sub in submodules):
                    submodules.append(".".join(target))  # names of the module itself
                found.update(sub for sub in submodules if sub in modules)
            elif isinstance(node, ast.Import):
                found.update(alias.name for alias in node.names if alias.name in modules)
        graph[name] = found - {name}
    return graph


def _runnable_nodes(tree: ast.AST) -> list[ast.AST]:
    """Every node of ``tree`` but those under ``if TYPE_CHECKING:``."""
    found: list[ast.AST] = []
    pending: list[ast.AST] = [tree]
    while pending:
        node = pending.pop()
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            pending.extend(node.orelse)
            continue
        found.append(node)
        pending.extend(ast.iter_child_nodes(node))
    return found


def test_the_import_graph_has_no_cycle():
    graph = module_graph()
    assert "sitemap_server.sitemaps.maintenance" in graph["sitemap_server.sitemaps.check"]
    try:
        list(TopologicalSorter(graph).static_order())
    except CycleError as error:
        pytest.fail(f"modules import each other in a circle: {' -> '.join(error.args[1])}")


@pytest.mark.parametrize("module", ["documents.py", "batches.py"])
def test_the_modules_every_layer_uses_import_nothing_of_the_application(module: str):
    """``documents.py`` (the read path's URL grammar) and ``batches.py`` (``chunks``) are
    read by the bottom layer (``content/``) and the engine alike: they can import
    neither."""
    assert module_imports(PACKAGE / module) == []
