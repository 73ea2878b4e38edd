"""The application needs none of the test extras (pytest, WebTest, hypothesis …): a user
installs sitemap-server without them. tests/deploy proves it with real wheels in a fresh
virtual environment; this proves it in seconds on every run, in a process where importing
any test package fails."""

import subprocess
import sys
import textwrap

from sitemap_server.testing import parse_sitemap, server_environment

TEST_PACKAGES = ("pytest", "_pytest", "webtest", "hypothesis", "schemathesis", "playwright")

PROGRAM = textwrap.dedent(
    """
    import sys
    for name in {blocked!r}:
        sys.modules[name] = None  # "import pytest" now raises ImportError

    from pathlib import Path
    from webob import Request

    from sitemap_server import migrations
    from sitemap_server.app import make_app
    from sitemap_server.site import Site

    ini = Path({ini!r})
    settings = {{
        "sqlalchemy.url": "sqlite:///" + str(ini.parent / "app.sqlite"),
        "sitemap_server.site_url": "http://no-extras.test",
    }}
    site = Site(settings)
    migrations.upgrade(ini, site.plugins)
    app = make_app(site)
    paths = ("/sitemap_index.xml", "/page-sitemap.xml")
    answers = {{path: Request.blank(path).get_response(app) for path in paths}}
    for path, response in answers.items():
        assert response.status_int == 200, (path, response.status)
    sys.stdout.buffer.write(answers["/sitemap_index.xml"].body)
    """
)


def test_the_application_migrates_and_serves_without_any_test_package(tmp_path):
    ini = tmp_path / "app.ini"
    ini.write_text(
        "[app:main]\nuse = egg:sitemap-server\n"
        f"sqlalchemy.url = sqlite:///{tmp_path / 'app.sqlite'}\n"
        "sitemap_server.site_url = http://no-extras.test\n"
    )
    program = PROGRAM.format(blocked=TEST_PACKAGES, ini=str(ini))
    finished = subprocess.run(
        [sys.executable, "-c", program],
        cwd=tmp_path,
        env=server_environment(),
        capture_output=True,
        timeout=120,
    )
    assert finished.returncode == 0, finished.stderr.decode()
    index = parse_sitemap(finished.stdout)
    assert index.tag.endswith("sitemapindex")
