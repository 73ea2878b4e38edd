"""``sitemap_server.testing`` as plugin authors meet it: opt-in, inert on import, with the
official XSDs inside the package."""

import subprocess
import sys
from pathlib import Path

from sitemap_server.testing import PROJECT_ROOT, SCHEMAS_DIR, server_environment

SHARED_SCHEMAS = PROJECT_ROOT.parent / "shared" / "schemas"


# Ours alone: the XHTML link of hreflang annotations and the drivers that add it.
HREFLANG_SCHEMAS = [
    Path("legacy-2009/sitemap-with-hreflang.xsd"),
    Path("sitemap-with-hreflang.xsd"),
    Path("xhtml-link.xsd"),
]


def test_the_packaged_xsds_are_the_official_ones_byte_for_byte():
    official = sorted(p.relative_to(SHARED_SCHEMAS) for p in SHARED_SCHEMAS.rglob("*.xsd"))
    packaged = sorted(p.relative_to(SCHEMAS_DIR) for p in SCHEMAS_DIR.rglob("*.xsd"))
    assert sorted(set(packaged) - set(official)) == HREFLANG_SCHEMAS
    assert set(official) <= set(packaged)
    for name in official:
        assert (SCHEMAS_DIR / name).read_bytes() == (SHARED_SCHEMAS / name).read_bytes()


def test_importing_the_plugin_changes_no_environment_variable():
    program = (
        "import os; before = dict(os.environ); import sitemap_server.testing; "
        "assert dict(os.environ) == before, set(before) ^ set(os.environ)"
    )
    environment = server_environment(
        SITEMAP_SERVER_DATABASE_URL="sqlite:///elsewhere.sqlite",
        SITEMAP_SERVER_SITE_URL="https://elsewhere.test",
    )
    finished = subprocess.run(
        [sys.executable, "-c", program], env=environment, capture_output=True, timeout=60
    )
    assert finished.returncode == 0, finished.stderr.decode()


def listed_fixtures(directory):
    """What ``pytest --fixtures`` shows in ``directory``, a project of its own."""
    listed = subprocess.run(
        [sys.executable, "-m", "pytest", "--fixtures", "-p", "no:cacheprovider", str(directory)],
        cwd=directory,
        env=server_environment(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert listed.returncode == 0, listed.stdout + listed.stderr
    assert "tmp_path" in listed.stdout  # pytest's own are listed
    return listed.stdout


def test_another_projects_pytest_run_gets_none_of_its_fixtures(tmp_path):
    """Installed, sitemap-server adds nothing to pytest runs that do not ask for it."""
    (tmp_path / "test_other.py").write_text("def test_nothing():\n    pass\n")
    listed = listed_fixtures(tmp_path)
    for fixture in ("testapp", "clean_database", "app_session", "search_engine"):
        assert fixture not in listed

    (tmp_path / "conftest.py").write_text('pytest_plugins = ["sitemap_server.testing"]\n')
    assert "testapp" in listed_fixtures(tmp_path)
