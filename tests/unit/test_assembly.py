"""The application is assembled in one place: ``Site.__init__`` (``sitemap_server/site.py``).

Before, six places built a plugin manager, a session factory or the parsed settings
(``main()``, the command line twice, the worker, its configuration and the test fixtures),
and each could drift from the others. Now every entry point builds a ``Site`` and takes
them from it; this test reads the code of the core and of both plugins and finds one
place that calls a builder.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SOURCES = [ROOT / "sitemap_server", *sorted(ROOT.glob("plugins/*/sitemap_server_*"))]

# What builds each part, by the name it is called by; and the builders themselves, which
# call one another (``from_settings`` calls ``get_plugin_manager``).
BUILDERS = {
    "plugin manager": {"PluginManager", "get_plugin_manager", "from_settings"},
    "session factory": {"sessionmaker", "get_session_factory", "scoped_session"},
    "settings": {"normalize", "get_appsettings", "declared_settings"},
}
BUILDER_DEFINITIONS = {
    "plugins.py:get_plugin_manager",
    "plugins.py:from_settings",
    "models/__init__.py:get_session_factory",
}
THE_PLACE = {"site.py:Site.__init__", "site.py:Site.from_ini"}


def called_name(call: ast.Call) -> str | None:
    """``normalize`` for ``normalize(…)`` and ``settings.normalize(…)``; None for
    ``unicodedata.normalize(…)``, which normalizes text, not settings."""
    func = call.func
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        owner = func.value
        if isinstance(owner, ast.Name) and owner.id == "unicodedata":
            return None
        return func.attr
    return None


def places_calling(names: set[str], source: str, module: str) -> set[str]:
    """``module:Class.function`` of each function of ``source`` that calls one of ``names``
    (``module:`` alone for a call at the top level of the module)."""
    found: set[str] = set()

    def visit(node: ast.AST, where: list[str]) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                visit(child, [*where, child.name])
                continue
            if isinstance(child, ast.Call) and called_name(child) in names:
                found.add(f"{module}:{'.'.join(where)}")
            visit(child, where)

    visit(ast.parse(source), [])
    return found


def assembly_places(part: str) -> set[str]:
    found: set[str] = set()
    for base in SOURCES:
        for path in sorted(base.rglob("*.py")):
            module = path.relative_to(base).as_posix()
            if base.name != "sitemap_server":
                module = f"{base.name}/{module}"
            found |= places_calling(BUILDERS[part], path.read_text(), module)
    return found - BUILDER_DEFINITIONS


@pytest.mark.parametrize("part", sorted(BUILDERS))
def test_one_place_builds_each_part_of_the_application(part: str):
    assert assembly_places(part) <= THE_PLACE
    assert assembly_places(part)


def test_the_count_sees_a_call_in_a_method_a_function_and_a_module():
    source = """
from pyramid.paster import get_appsettings
settings = normalize({})
text = unicodedata.normalize("NFC", "é")

class Worker:
    def make(self):
        return sessionmaker(bind=None)

def helper():
    return plugins.from_settings({})
"""
    assert places_calling({"normalize"}, source, "x.py") == {"x.py:"}
    assert places_calling({"sessionmaker"}, source, "x.py") == {"x.py:Worker.make"}
    assert places_calling({"from_settings"}, source, "x.py") == {"x.py:helper"}
