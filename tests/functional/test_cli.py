"""The ``sitemap-server`` command (S-702 tokens, S-704 import, S-801 migrations, demo)."""

import importlib.metadata
import io
import json
import sys

import pytest
from sqlalchemy import func, select
from webtest import TestApp

from sitemap_server import migrations
from sitemap_server.cli import main
from sitemap_server.models import ApiToken, Author, Post
from sitemap_server.plugins import BUILTIN_PLUGINS, get_plugin_manager
from sitemap_server.testing import installed_plugins_loaded


@pytest.fixture(autouse=True)
def _restore_logging(restore_logging):
    """Tests here also call the command's ``main`` themselves (``cli`` restores it too)."""


class Terminal(io.StringIO):
    """Standard error as a terminal, where the progress bar is drawn."""

    def isatty(self):
        return True


def lines_file(path, *lines):
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


# Tokens ------------------------------------------------------------------------------------


def test_token_create_prints_a_token_that_works(cli, wsgi_app):
    status, out, err = cli("token", "create", "ci")
    assert status == 0
    token = out.strip()
    assert out == token + "\n"  # only the token on stdout, for scripts
    assert "shown only this once" in err

    app = TestApp(wsgi_app)
    app.get("/api/posts", status=401)
    app.authorization = ("Bearer", token)
    assert app.get("/api/posts", status=200).json["total"] == 0


def test_each_token_is_different_and_only_its_hash_is_stored(cli, dbsession):
    first = cli("token", "create", "alice")[1].strip()
    second = cli("token", "create", "bob")[1].strip()
    assert first != second
    stored = {row.name: row.token_hash for row in dbsession.scalars(select(ApiToken))}
    assert set(stored) == {"alice", "bob"}
    assert first not in stored.values() and second not in stored.values()


def test_token_create_twice_with_one_name_fails(cli, dbsession):
    cli("token", "create", "ci")
    status, out, err = cli("token", "create", "ci")
    assert status == 1
    assert out == ""
    assert "ci" in err
    assert dbsession.scalar(select(func.count()).select_from(ApiToken)) == 1


def test_token_list_shows_names_only(cli):
    secrets = [cli("token", "create", name)[1].strip() for name in ("deploy", "alice")]
    status, out, _err = cli("token", "list")
    assert status == 0
    listed = out.splitlines()
    assert [line.split("\t")[0] for line in listed] == ["alice", "deploy"]
    for secret in secrets:
        assert secret not in out
        assert secret.removeprefix("sms_") not in out


def test_token_list_when_there_are_none(cli):
    status, out, err = cli("token", "list")
    assert (status, out) == (0, "")
    assert "token create" in err


def test_token_revoke(cli, wsgi_app):
    token = cli("token", "create", "ci")[1].strip()
    app = TestApp(wsgi_app)
    app.authorization = ("Bearer", token)
    app.get("/api/posts", status=200)

    status, _out, err = cli("token", "revoke", "ci")
    assert status == 0
    assert "revoked" in err
    app.get("/api/posts", status=401)
    assert cli("token", "list")[1] == ""


def test_revoking_an_unknown_token_fails(cli, db_snapshot):
    cli("token", "create", "ci")
    before = db_snapshot()
    status, out, err = cli("token", "revoke", "nobody")
    assert status != 0
    assert out == ""
    assert "nobody" in err
    assert db_snapshot() == before


# Import ------------------------------------------------------------------------------------


def test_import_shows_progress_and_a_summary(cli, tmp_path, monkeypatch, dbsession):
    path = lines_file(
        tmp_path / "site.ndjson",
        {"author": {"id": 1, "slug": "ada", "name": "Ada"}},
        *[{"post": {"type": "post", "title": f"Post {n}", "author": 1}} for n in range(300)],
    )
    terminal = Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    status, out, _err = cli("import", path)
    assert status == 0
    assert out == "imported 301 lines: 1 author, 300 post\n"
    progress = terminal.getvalue()
    assert "importing" in progress
    assert "100%" in progress
    # What follows the bar: the changes applied to the sitemaps, with a bar of their own.
    after = progress.split("applying 301 changes to the sitemaps …", 1)[1]
    assert "applying: 100%" in after
    assert "the sitemaps are up to date (301 changes applied in " in after
    assert dbsession.scalar(select(func.count()).select_from(Post)) == 300
    assert dbsession.scalar(select(Post.author_id).limit(1)) == 1


def test_import_quiet_draws_no_progress_bar(cli, tmp_path, monkeypatch):
    path = lines_file(tmp_path / "a.ndjson", {"author": {"slug": "ada", "name": "Ada"}})
    terminal = Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    status, out, _err = cli("import", "--quiet", path)
    assert (status, out) == (0, "imported 1 lines: 1 author\n")
    assert terminal.getvalue() == ""


def test_import_from_standard_input(cli, monkeypatch, dbsession):
    body = b'{"author": {"slug": "ada", "name": "Ada"}}\n'
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(body)))
    status, out, _err = cli("import", "-q", "-")
    assert (status, out) == (0, "imported 1 lines: 1 author\n")
    assert dbsession.scalars(select(Author.slug)).all() == ["ada"]


def test_a_bad_file_exits_1_and_changes_nothing(cli, tmp_path, db_snapshot):
    path = lines_file(
        tmp_path / "bad.ndjson",
        {"author": {"slug": "ada", "name": "Ada"}},
        *[{"post": {"type": "post", "title": f"Post {n}"}} for n in range(1500)],
        {"post": {"type": "post", "title": "Who", "author": 999}},
    )
    before = db_snapshot()
    status, out, err = cli("import", "-q", path)
    assert status == 1
    assert out == ""
    assert "line 1502" in err
    assert "author" in err
    assert "nothing was changed" in err
    assert db_snapshot() == before


def test_continue_on_error_leaves_out_the_bad_lines_and_names_them(cli, tmp_path, dbsession):
    path = lines_file(
        tmp_path / "some-bad.ndjson",
        {"author": {"id": 1, "slug": "ada", "name": "Ada"}},
        {"post": {"type": "post", "title": "Kept", "author": 1}},
        {"post": {"type": "post", "title": "Who", "author": 999}},
        {"post": {"type": "post", "title": "Kept too", "status": "publish"}},
    )
    with path.open("ab") as file:
        file.write(b"{not json\n")
        file.write(b'{"post": {"id": 70, "type": "post", "title": "Parent"}}\n')
    status, out, err = cli("import", "-q", "--continue-on-error", path)
    assert status == 0, err
    lines = out.splitlines()
    assert lines[0] == "imported 6 lines: 1 author, 3 post"
    assert lines[1] == "left out, failed: 2 lines"
    assert "line 3" in lines[2] and "author" in lines[2]
    assert "line 5" in lines[3] and "JSON" in lines[3]
    titles = set(dbsession.scalars(select(Post.title)))
    assert titles == {"Kept", "Kept too", "Parent"}


@pytest.mark.parametrize("value", ["0001-01-01T00:00:00+14:00", "9999-12-31T23:59:59-14:00"])
def test_a_date_past_the_range_exits_1_naming_line_and_field(cli, tmp_path, db_snapshot, value):
    path = lines_file(
        tmp_path / "dates.ndjson",
        {"post": {"type": "post", "title": "Fine", "published_at": "2024-05-01T12:00:00Z"}},
        {"post": {"type": "post", "title": "Edge", "published_at": value}},
    )
    before = db_snapshot()
    status, _out, err = cli("import", "-q", path)
    assert status == 1
    assert "line 2" in err
    assert "published_at: must be between 1000-01-01T00:00:00Z and 9999-01-01T00:00:00Z" in err
    assert "Traceback" not in err
    assert db_snapshot() == before


def test_import_of_a_missing_file_exits_2(cli, tmp_path, db_snapshot):
    before = db_snapshot()
    status, out, err = cli("import", tmp_path / "nope.ndjson")
    assert (status, out) == (2, "")
    assert "nope.ndjson" in err
    assert db_snapshot() == before


# Migrations and demo content ---------------------------------------------------------------


def test_migrate_on_a_migrated_database_changes_nothing(cli, ini_file, db_snapshot):
    before = db_snapshot()
    status, out, _err = cli("migrate")
    assert status == 0
    # The plugins the command loads: those the test configuration loads.
    loaded = get_plugin_manager(load_entrypoints=installed_plugins_loaded())
    heads = migrations.current_heads(ini_file, loaded)
    assert heads
    assert out == f"database is at {', '.join(heads)}\n"
    assert db_snapshot() == before  # alembic_version included


def test_seed_demo_creates_a_site_and_if_empty_keeps_it(cli, api, db_snapshot):
    status, out, _err = cli("seed-demo", "--posts", "20")
    assert status == 0
    assert out.startswith("demo site seeded:")

    def count(**params):
        return api.get("/api/posts", params={"per_page": 1, **params}).json["total"]

    assert count(type="post") >= 20
    assert count(type="page") >= 5
    assert count(type="product") > 0
    assert api.get("/api/authors").json["total"] >= 2
    assert api.get("/api/terms", params={"taxonomy": "category"}).json["total"] > 0
    assert api.get("/api/settings").json["front_page"] == "page"

    before = db_snapshot()
    status, out, _err = cli("seed-demo", "--if-empty")
    assert status == 0
    assert "nothing seeded" in out
    assert db_snapshot() == before


def test_seed_demo_if_empty_seeds_an_empty_site(cli, dbsession):
    status, _out, _err = cli("seed-demo", "--if-empty", "--posts", "5")
    assert status == 0
    assert dbsession.scalar(select(func.count()).select_from(Post)) > 5


# Version and plugins -----------------------------------------------------------------------

CORE_VERSION = importlib.metadata.version("sitemap-server")


def installed_entry_points():
    """The plugins pip installed (the ``sitemap_server`` entry-point group), by name."""
    return sorted(importlib.metadata.entry_points(group="sitemap_server"), key=lambda ep: ep.name)


def listed_plugins(out):
    """``sitemap-server plugins`` output: {plugin line: its hooks}, in order."""
    listed: dict[str, list[str]] = {}
    for line in out.splitlines():
        if line.startswith("  hooks: "):
            listed[list(listed)[-1]] = line.removeprefix("  hooks: ").split(", ")
        else:
            listed[line] = []
    return listed


def test_version(capsys):
    with pytest.raises(SystemExit) as exited:
        main(["--version"])
    assert exited.value.code == 0
    assert capsys.readouterr().out == f"sitemap-server {CORE_VERSION}\n"


def test_plugins_lists_the_installed_plugins_then_the_built_in_ones(cli):
    status, out, _err = cli("plugins")
    assert status == 0
    listed = listed_plugins(out)
    installed = [
        f"{ep.name} ({ep.dist.name} {ep.dist.version})"
        for ep in (installed_entry_points() if installed_plugins_loaded() else [])
    ]
    built_in = [f"{name} (built-in, sitemap-server {CORE_VERSION})" for name in BUILTIN_PLUGINS]
    assert list(listed) == installed + built_in
    assert listed[f"sitemap_server.providers.posts (built-in, sitemap-server {CORE_VERSION})"] == [
        "sitemap_providers"
    ]
    assert all(listed[line] for line in installed)


def test_plugins_shows_a_disabled_plugin_without_hooks(cli, ini_file, tmp_path):
    installed = installed_entry_points()
    assert installed, "the test environment has plugins/video and plugins/news installed"
    disabled = installed[0]
    config = tmp_path / "disabled.ini"
    config.write_text(
        ini_file.read_text().replace(
            "[app:main]\n", f"[app:main]\nsitemap_server.disabled_plugins = {disabled.name}\n"
        )
    )
    status, out, _err = cli("--config", config, "plugins")  # the last --config wins
    assert status == 0
    line = f"{disabled.name} ({disabled.dist.name} {disabled.dist.version}): disabled"
    assert listed_plugins(out)[line] == []


def test_plugins_json_is_what_the_api_answers(cli, api):
    status, out, _err = cli("plugins", "--json")
    assert status == 0
    assert json.loads(out) == api.get("/api/plugins").json


# Configuration -----------------------------------------------------------------------------


def test_a_missing_config_file_exits_2_with_one_line(tmp_path, capsys):
    status = main(["--config", str(tmp_path / "nowhere.ini"), "token", "list"])
    out, err = capsys.readouterr()
    assert status == 2
    assert out == ""
    assert err.count("\n") == 1
    assert "nowhere.ini" in err
    assert "Traceback" not in err


def test_a_config_without_the_database_exits_2_naming_the_setting(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("SITEMAP_SERVER_DATABASE_URL", raising=False)
    config = tmp_path / "empty.ini"
    config.write_text("[app:main]\nuse = egg:sitemap-server\nsqlalchemy.url =\n")
    status = main(["--config", str(config), "token", "list"])
    _out, err = capsys.readouterr()
    assert status == 2
    assert "sqlalchemy.url" in err
    assert "SITEMAP_SERVER_DATABASE_URL" in err
    assert err.count("\n") == 1


def test_unknown_command_is_a_usage_error(capsys):
    with pytest.raises(SystemExit) as exited:
        main(["frobnicate"])
    assert exited.value.code == 2
    assert "usage:" in capsys.readouterr().err
