"""The core's tests use the fixtures that every sitemap-server test suite can opt into."""

import pytest

pytest_plugins = ["sitemap_server.testing"]


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The order in which pytest-xdist hands out test files (``--dist loadfile
    --no-loadscope-reorder``, the Makefile): the files holding a test marked ``long``
    first, then the others by their number of tests, most first. A file of minutes left
    to the end keeps one worker busy while the others have nothing left to do (the
    model-based test's two files did: five minutes of one idle worker on PostgreSQL)."""
    files: dict[str, list[pytest.Item]] = {}
    for item in items:
        files.setdefault(item.nodeid.split("::", 1)[0], []).append(item)

    def weight(name: str) -> tuple[bool, int]:
        held = files[name]
        return (not any(item.get_closest_marker("long") for item in held), -len(held))

    items[:] = [item for name in sorted(files, key=weight) for item in files[name]]
