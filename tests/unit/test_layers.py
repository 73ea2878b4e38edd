"""The core's layers import downwards only, and nothing imports itself in a circle.

The layers, bottom first (``LAYERS``; docs/architecture.md draws them):

0. modules of no layer, which import nothing of the application but one another: the
   errors, the URL grammar of the documents, ``chunks``, the settings, the hook
   specifications, the outages;
1. ``models`` (tables, sessions and the site a session carries, the read helpers);
2. ``content`` (what a URL is, what is listed, the trees of pages and terms);
3. ``sitemaps`` (the engine: the stored sitemaps, the read and the write path);
4. what plugs into the engine: the built-in sitemaps (``providers``) and the
   notifications (``notify``);
5. the writes (``services``) and the plugin manager (``plugins``, which loads the
   built-in plugins of layer 4 by name);
6. a WordPress site brought in (``wordpress``: its export read and imported through
   the services);
7. the admin API (``api``) and the demo;
8. ``site``: the one object the application is, which builds every part;
9. the migrations (Alembic's ``env.py`` builds a site);
10. the entry points: the WSGI application (``app``), the command line, the plugin
   door (``plugin``);
11. the test helpers (``testing``).

A module may import its own package and any lower layer; never a higher one, nor
another package of its own layer. Every import counts, at the top of a module or inside a
function (a lazy import hides an upward import or a circle, it does not remove it), and
so do the built-in plugins the plugin manager imports by name; imports under
``if TYPE_CHECKING:`` never run and do not count. The two plugins that ship beside the core
are held to the same: no circle among their modules.
"""

from __future__ import annotations

import ast
from graphlib import CycleError, TopologicalSorter
from pathlib import Path

import pytest

from sitemap_server.plugins import BUILTIN_PLUGINS

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "sitemap_server"
PLUGIN_PACKAGES = sorted(p.parent for p in ROOT.glob("plugins/*/sitemap_server_*/__init__.py"))

LAYERS = [
    {
        "sitemap_server",
        "errors",
        "documents",
        "batches",
        "settings",
        "hookspecs",
        "outages",
        "server_timing",
    },
    {"models"},
    {"content"},
    {"sitemaps"},
    {"providers", "notify"},
    {"services", "plugins"},
    {"wordpress"},
    {"api", "demo"},
    {"site"},
    {"migrations"},
    {"app", "cli", "plugin"},
    {"testing"},
]
RANK = {unit: rank for rank, units in enumerate(LAYERS) for unit in units}


def unit_of(module: str) -> str:
    """The part of the core ``module`` belongs to: its package under ``sitemap_server``
    (``sitemaps``), or the top-level module itself (``site``)."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


def module_graph(package: Path) -> dict[str, dict[str, int]]:
    """Each module of ``package`` (a directory) and the modules of that package it
    imports, with the line of the import: at the top or inside a function; imports under
    ``if TYPE_CHECKING:`` are left out (they never run)."""
    modules: dict[str, tuple[Path, list[str]]] = {}
    for path in package.rglob("*.py"):
        parts = list(path.relative_to(package.parent).with_suffix("").parts)
        base = parts[:-1]  # what a relative import starts from
        if parts[-1] == "__init__":
            parts = parts[:-1]
        modules[".".join(parts)] = (path, base)
    graph: dict[str, dict[str, int]] = {}
    for name, (path, base) in modules.items():
        found: dict[str, int] = {}
        for node in _runnable_nodes(ast.parse(path.read_text())):
            for target in imported_modules(node, base, package.name):
                # ``from package import module`` imports the module; ``from module import
                # name``, the module (a package's ``__init__`` runs for any of its
                # modules: that is not an import of it).
                submodules = [sub for sub in target.submodules if sub in modules]
                for candidate in submodules or [target.module]:
                    if candidate in modules and candidate != name:
                        found.setdefault(candidate, node.lineno)
        graph[name] = found
    return graph


class Target:
    """What one import statement names: a module, and names that may be its submodules."""

    def __init__(self, module: str, submodules: list[str]) -> None:
        self.module = module
        self.submodules = submodules


def imported_modules(node: ast.AST, base: list[str], root: str) -> list[Target]:
    """The modules of ``root`` that ``node`` imports (none if it is no import), from a
    module in the package ``base`` (its dotted parts)."""
    if isinstance(node, ast.ImportFrom):
        if node.level:
            start = base[: len(base) - node.level + 1]
            target = [*start, *(node.module.split(".") if node.module else [])]
        elif (node.module or "").split(".")[0] == root:
            target = (node.module or "").split(".")
        else:
            return []
        dotted = ".".join(target)
        return [Target(dotted, [f"{dotted}.{alias.name}" for alias in node.names])]
    if isinstance(node, ast.Import):
        return [Target(alias.name, []) for alias in node.names if alias.name.split(".")[0] == root]
    return []


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


def core_graph() -> dict[str, dict[str, int]]:
    """The core's import graph, with the built-in plugins the plugin manager imports by
    name (``importlib.import_module``) as imports of ``sitemap_server.plugins``."""
    graph = module_graph(PACKAGE)
    graph["sitemap_server.plugins"].update({name: 0 for name in BUILTIN_PLUGINS})
    return graph


def upward_imports(graph: dict[str, dict[str, int]]) -> list[str]:
    """Each import of ``graph`` from a layer to a higher one, or to another part of its
    own layer, in words."""
    found = []
    for module, imported in sorted(graph.items()):
        unit = unit_of(module)
        for target, line in sorted(imported.items()):
            other = unit_of(target)
            if other == unit:
                continue
            if RANK[other] > RANK[unit] or (RANK[other] == RANK[unit] != 0):
                found.append(f"{module}:{line} imports {target}")
    return found


def cycle(graph: dict[str, dict[str, int]]) -> list[str] | None:
    """A circle of imports in ``graph``, or None."""
    try:
        list(TopologicalSorter({k: set(v) for k, v in graph.items()}).static_order())
    except CycleError as error:
        return list(error.args[1])
    return None


def test_every_part_of_the_core_has_a_layer():
    units = {unit_of(module) for module in core_graph()}
    assert units - RANK.keys() == set()


def test_no_module_imports_a_higher_layer_or_a_neighbour():
    assert upward_imports(core_graph()) == []


def test_the_core_imports_nothing_in_a_circle():
    graph = core_graph()
    assert "sitemap_server.sitemaps.maintenance" in graph["sitemap_server.sitemaps.check"]
    assert cycle(graph) is None


@pytest.mark.parametrize("package", PLUGIN_PACKAGES, ids=lambda p: p.name)
def test_a_plugin_imports_nothing_in_a_circle(package: Path):
    graph = module_graph(package)
    assert len(graph) > 5
    assert cycle(graph) is None


@pytest.mark.parametrize("module", ["documents.py", "batches.py"])
def test_the_modules_every_layer_uses_import_nothing_of_the_application(module: str):
    """``documents.py`` (the read path's URL grammar) and ``batches.py`` (``chunks``) are
    read by the bottom layers and the engine alike: they import nothing of ours."""
    assert module_graph(PACKAGE)[f"sitemap_server.{module[:-3]}"] == {}


# The checks themselves ------------------------------------------------------------------


def graph_of(tmp_path: Path, files: dict[str, str]) -> dict[str, dict[str, int]]:
    """The graph of a package ``sitemap_server`` made of ``files`` under ``tmp_path``."""
    package = tmp_path / "sitemap_server"
    for name, source in {"__init__.py": "", **files}.items():
        path = package / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(source)
    return module_graph(package)


def test_the_check_sees_each_form_of_an_import(tmp_path):
    graph = graph_of(
        tmp_path,
        {
            "services/__init__.py": "",
            "services/common.py": "",
            "api/__init__.py": "",
            "cli.py": "",
            "notify/__init__.py": "",
            "notify/outbox.py": "",
            "sitemaps/__init__.py": "",
            "sitemaps/changes.py": "",
            "sitemaps/maintenance.py": (
                "from ..services.common import flush\n"
                "from .. import api\n"
                "from . import changes\n"
                "import sitemap_server.cli\n"
                "def later():\n"
                "    from sitemap_server.notify import outbox\n"
                "from typing import TYPE_CHECKING\n"
                "if TYPE_CHECKING:\n"
                "    from ..services import common\n"
            ),
        },
    )
    assert graph["sitemap_server.sitemaps.maintenance"] == {
        "sitemap_server.services.common": 1,
        "sitemap_server.api": 2,
        "sitemap_server.sitemaps.changes": 3,
        "sitemap_server.cli": 4,
        "sitemap_server.notify.outbox": 6,
    }


def test_the_check_fails_on_the_upward_imports_the_core_once_had(tmp_path):
    """Those of 4188b8f: ``content`` reaching into the engine, the engine into the built-in
    providers, the models into the application (a lazy import), and two neighbours of
    one layer."""
    graph = graph_of(
        tmp_path,
        {
            "models/__init__.py": "def site():\n    from ..site import Site\n",
            "content/__init__.py": "",
            "content/object_urls.py": "from ..sitemaps.maintenance import chunks\n",
            "sitemaps/__init__.py": "",
            "sitemaps/maintenance.py": "",
            "sitemaps/explain.py": "from ..providers.posts import newest_lastmod\n",
            "providers/__init__.py": "",
            "providers/posts.py": "from ..notify import outbox\n",
            "notify/__init__.py": "",
            "notify/outbox.py": "",
            "site.py": "",
        },
    )
    assert upward_imports(graph) == [
        "sitemap_server.content.object_urls:1 imports sitemap_server.sitemaps.maintenance",
        "sitemap_server.models:2 imports sitemap_server.site",
        "sitemap_server.providers.posts:1 imports sitemap_server.notify.outbox",
        "sitemap_server.sitemaps.explain:1 imports sitemap_server.providers.posts",
    ]


def test_the_check_finds_a_circle_hidden_by_a_lazy_import(tmp_path):
    """As the video plugin's ``oembed`` and ``services`` once were."""
    graph = graph_of(
        tmp_path,
        {
            "oembed.py": "def received():\n    from .services import videos_changed\n",
            "services.py": "from . import oembed\n",
        },
    )
    assert cycle(graph) is not None
