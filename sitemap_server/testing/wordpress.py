"""A real, throwaway WordPress on 127.0.0.1 (issue 35's tests of ``sync-wordpress``).

Debian's ``wordpress`` package with MariaDB, php-fpm and nginx, all started in one
temporary directory and removed afterwards, the way ``scripts/with-postgres`` starts
PostgreSQL; ``scripts/ensure-wordpress`` installs the packages (``make test`` runs it).

- WordPress's files are linked (or copied) from ``/usr/share/wordpress`` into the
  directory, with a ``wp-config.php`` of its own: Debian's reads its settings from
  ``/etc/wordpress``, which a test must not write.
- MariaDB has a data directory of its own and listens on a socket in the directory only.
- nginx serves WordPress on a free port of 127.0.0.1 through php-fpm, with WordPress's
  permalinks (``try_files``, as its documentation for nginx says).
- A must-use plugin registers a custom post type (``book``, at ``/books/{slug}/``) and a
  custom taxonomy of it (``genre``), as themes and plugins do.
- WordPress is installed by PHP on the command line (``wp_install``), with the permalink
  structure ``/%year%/%monthnum%/%postname%/`` and an application password for its
  administrator (``WP_ENVIRONMENT_TYPE`` is ``local``: WordPress gives them over HTTP
  then), so tests write content through WordPress's own REST API.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import requests

from .servers import free_port, running, started

WORDPRESS = Path("/usr/share/wordpress")
PERMALINKS = "/%year%/%monthnum%/%postname%/"
# A custom post type and a custom taxonomy, as a theme or plugin registers them (a
# must-use plugin: always on): books, at /books/{slug}/, and their genres.
TYPES_PLUGIN = """<?php
add_action('init', function () {
    register_taxonomy('genre', array('book'), array(
        'public' => true, 'show_in_rest' => true, 'hierarchical' => true,
        'label' => 'Genres', 'rewrite' => array('slug' => 'genre'),
    ));
    register_post_type('book', array(
        'public' => true, 'show_in_rest' => true, 'rest_base' => 'books',
        'label' => 'Books', 'taxonomies' => array('genre'), 'has_archive' => true,
        'supports' => array('title', 'editor', 'author', 'thumbnail'),
        'rewrite' => array('slug' => 'books'),
    ));
});
"""
ADMIN = "admin"
PROGRAMS = {
    "mariadbd": ("/usr/sbin/mariadbd",),
    "mariadb-install-db": ("/usr/bin/mariadb-install-db", "/usr/bin/mysql_install_db"),
    "php": ("/usr/bin/php",),
    "php-fpm": ("/usr/sbin/php-fpm8.2", "/usr/sbin/php-fpm"),
    "nginx": ("/usr/sbin/nginx",),
}


def programs() -> dict[str, str] | None:
    """The programs a WordPress needs, or None if one is missing."""
    found = {}
    for name, paths in PROGRAMS.items():
        path = next((p for p in paths if os.access(p, os.X_OK)), None)
        if path is None:
            return None
        found[name] = path
    return found if (WORDPRESS / "wp-settings.php").exists() else None


@dataclass(frozen=True)
class WordPress:
    """A running WordPress: its URL, and an administrator's application password."""

    url: str
    user: str
    password: str
    directory: Path

    @property
    def auth(self) -> tuple[str, str]:
        return (self.user, self.password)

    def api(self, method: str, route: str, **kwargs: Any) -> Any:
        """``route`` of WordPress's REST API (``/wp/v2/posts``) as its administrator: the
        JSON answer, failing the test on an error."""
        answer = requests.request(
            method, f"{self.url}/wp-json{route}", auth=self.auth, timeout=60, **kwargs
        )
        assert answer.ok, (method, route, answer.status_code, answer.text[:2000])
        return answer.json()

    def export(self) -> bytes:
        """A fresh WXR export of everything, as Tools → Export writes it (``export_wp``)."""
        script = (
            "require_once ABSPATH . 'wp-admin/includes/export.php';\n"
            "ob_start();\n"
            "export_wp(array('content' => 'all'));\n"
            "file_put_contents(getenv('WXR_OUT'), ob_get_clean());\n"
        )
        out = self.directory / "export.xml"
        _php(self.directory, script, env={"WXR_OUT": str(out)})
        return out.read_bytes()

    def php(self, code: str) -> str:
        """``code`` run by PHP with WordPress loaded (as its administrator): what it
        printed."""
        return _php(self.directory, code)


def _php(
    directory: Path, code: str, installing: bool = False, env: dict[str, str] | None = None
) -> str:
    script = directory / "run.php"
    script.write_text(
        "<?php\n"
        "define('WP_USE_THEMES', false);\n"
        + ("define('WP_INSTALLING', true);\n" if installing else "")
        + f"$_SERVER['HTTP_HOST'] = '127.0.0.1';\n"
        f"require '{directory / 'wordpress' / 'wp-load.php'}';\n"
        f"{code}\n"
    )
    done = subprocess.run(
        [PROGRAMS["php"][0], str(script)],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, **(env or {})},
    )
    if done.returncode:
        raise RuntimeError(f"php failed ({done.returncode}): {done.stdout}{done.stderr}")
    return done.stdout


@contextmanager
def wordpress() -> Iterator[WordPress]:
    """A fresh WordPress, installed and answering, for the time of the block."""
    found = programs()
    if found is None:
        pytest.fail("WordPress is not installed: run scripts/ensure-wordpress (make test does)")
    directory = Path(tempfile.mkdtemp(prefix="sitemap-wordpress."))
    directory.chmod(0o755)
    try:
        with ExitStack() as stack:
            socket = directory / "mysqld.sock"
            stack.enter_context(_mariadb(found, directory, socket))
            port = free_port()
            url = f"http://127.0.0.1:{port}"
            _files(directory, socket, url)
            fpm = directory / "php-fpm.sock"
            stack.enter_context(_php_fpm(found, directory, fpm))
            stack.enter_context(_nginx(found, directory, port, fpm))
            password = _install(directory, url)
            yield WordPress(url, ADMIN, password, directory)
    finally:
        shutil.rmtree(directory, ignore_errors=True)


def _root_options() -> list[str]:
    return ["--user=root"] if os.geteuid() == 0 else []


@contextmanager
def _mariadb(found: dict[str, str], directory: Path, socket: Path) -> Iterator[None]:
    data = directory / "mysql"
    # Its own temporary files: two MariaDBs set up at once (tests in parallel) would take
    # each other's in /tmp.
    scratch = directory / "mysql-tmp"
    scratch.mkdir()
    done = subprocess.run(
        [
            found["mariadb-install-db"],
            "--no-defaults",
            f"--datadir={data}",
            f"--tmpdir={scratch}",
            "--auth-root-authentication-method=normal",
            "--skip-test-db",
            *_root_options(),
        ],
        capture_output=True,
        text=True,
    )
    if done.returncode:
        raise RuntimeError(f"mariadb-install-db failed: {done.stdout}{done.stderr}")
    command = [
        found["mariadbd"],
        "--no-defaults",
        f"--datadir={data}",
        f"--tmpdir={scratch}",
        f"--socket={socket}",
        "--skip-networking",
        f"--pid-file={directory / 'mysqld.pid'}",
        "--innodb-buffer-pool-size=64M",
        "--skip-log-bin",
        *_root_options(),
    ]
    with started(command, directory / "mysqld.log", socket.exists, "listening"):
        create = subprocess.run(
            ["mariadb", "--no-defaults", f"--socket={socket}", "-uroot"],
            input="CREATE DATABASE wordpress CHARACTER SET utf8mb4;"
            "CREATE USER 'wordpress'@'localhost' IDENTIFIED BY 'wordpress';"
            "GRANT ALL ON wordpress.* TO 'wordpress'@'localhost';",
            capture_output=True,
            text=True,
        )
        if create.returncode:
            raise RuntimeError(f"MariaDB: {create.stderr}")
        yield


def _files(directory: Path, socket: Path, url: str) -> None:
    """WordPress's files in ``directory/wordpress`` (hard links where the file system
    allows, else copies), with a ``wp-config.php`` of their own."""
    root = directory / "wordpress"
    try:
        shutil.copytree(WORDPRESS, root, symlinks=True, copy_function=os.link)
    except OSError:
        shutil.rmtree(root, ignore_errors=True)
        shutil.copytree(WORDPRESS, root, symlinks=True)
    (root / "wp-config.php").unlink()
    content = directory / "wp-content"
    shutil.copytree(WORDPRESS / "wp-content", content, symlinks=True, copy_function=os.link)
    (content / "mu-plugins").mkdir()
    (content / "mu-plugins" / "sitemap-test-types.php").write_text(TYPES_PLUGIN)
    settings = {
        "DB_NAME": "wordpress",
        "DB_USER": "wordpress",
        "DB_PASSWORD": "wordpress",
        "DB_HOST": f"localhost:{socket}",
        "DB_CHARSET": "utf8mb4",
        "WP_HOME": url,
        "WP_SITEURL": url,
        "WP_CONTENT_DIR": str(content),
        "WP_ENVIRONMENT_TYPE": "local",
        "AUTOMATIC_UPDATER_DISABLED": True,
        "WP_AUTO_UPDATE_CORE": False,
        "DISABLE_WP_CRON": True,
        "WP_HTTP_BLOCK_EXTERNAL": True,  # no network but 127.0.0.1
        "FS_METHOD": "direct",
    }
    lines = [f"define({json.dumps(k)}, {json.dumps(v)});" for k, v in settings.items()]
    (root / "wp-config.php").write_text(
        "<?php\n"
        + "\n".join(lines)
        + "\n$table_prefix = 'wp_';\n"
        + "if (!defined('ABSPATH')) define('ABSPATH', __DIR__ . '/');\n"
        + "require_once ABSPATH . 'wp-settings.php';\n"
    )


@contextmanager
def _php_fpm(found: dict[str, str], directory: Path, socket: Path) -> Iterator[None]:
    user = "user = root\ngroup = root\n" if os.geteuid() == 0 else ""
    config = directory / "php-fpm.conf"
    config.write_text(
        "[global]\n"
        f"pid = {directory / 'php-fpm.pid'}\n"
        f"error_log = {directory / 'php-fpm.log'}\n"
        "daemonize = no\n"
        "[wordpress]\n"
        f"{user}"
        f"listen = {socket}\n"
        "pm = static\n"
        "pm.max_children = 4\n"
        "catch_workers_output = yes\n"
        "php_admin_value[error_log] = " + str(directory / "php-errors.log") + "\n"
        "php_admin_flag[log_errors] = on\n"
    )
    command = [found["php-fpm"], "--nodaemonize", "--fpm-config", str(config)]
    if os.geteuid() == 0:
        command.append("--allow-to-run-as-root")
    with started(command, directory / "php-fpm.out", socket.exists, "listening"):
        yield


@contextmanager
def _nginx(found: dict[str, str], directory: Path, port: int, fpm: Path) -> Iterator[None]:
    config = directory / "nginx.conf"
    user = "user root;\n" if os.geteuid() == 0 else ""
    root = directory / "wordpress"
    config.write_text(
        f"{user}"
        "worker_processes 1;\n"
        "daemon off;\n"
        f"pid {directory / 'nginx.pid'};\n"
        f"error_log {directory / 'nginx-error.log'};\n"
        "events { worker_connections 256; }\n"
        "http {\n"
        "  include /etc/nginx/mime.types;\n"
        f"  access_log {directory / 'nginx-access.log'};\n"
        f"  client_body_temp_path {directory / 'nginx-body'};\n"
        f"  fastcgi_temp_path {directory / 'nginx-fastcgi'};\n"
        f"  proxy_temp_path {directory / 'nginx-proxy'};\n"
        f"  uwsgi_temp_path {directory / 'nginx-uwsgi'};\n"
        f"  scgi_temp_path {directory / 'nginx-scgi'};\n"
        "  server {\n"
        f"    listen 127.0.0.1:{port};\n"
        f"    root {root};\n"
        "    index index.php;\n"
        "    client_max_body_size 64m;\n"
        "    location / { try_files $uri $uri/ /index.php?$args; }\n"
        "    location ~ \\.php$ {\n"
        "      include /etc/nginx/fastcgi_params;\n"
        "      fastcgi_param SCRIPT_FILENAME $document_root$fastcgi_script_name;\n"
        "      fastcgi_param HTTP_AUTHORIZATION $http_authorization;\n"
        f"      fastcgi_pass unix:{fpm};\n"
        "    }\n"
        "  }\n"
        "}\n"
    )
    command = [found["nginx"], "-p", str(directory), "-c", str(config)]
    with running(
        command, directory, dict(os.environ), directory / "nginx.out", port, "/readme.html"
    ):
        yield


def _install(directory: Path, url: str) -> str:
    """WordPress installed, with its permalinks: its administrator's application
    password."""
    _php(
        directory,
        "require_once ABSPATH . 'wp-admin/includes/upgrade.php';\n"
        "wp_install('Sitemap test', 'admin', 'admin@example.com', true, '', 'admin-password');\n"
        f"update_option('permalink_structure', '{PERMALINKS}');\n"
        "flush_rewrite_rules();\n"
        "update_option('timezone_string', 'UTC');\n",
        installing=True,
    )
    made = _php(
        directory,
        "$made = WP_Application_Passwords::create_new_application_password("
        "1, array('name' => 'sitemap-server'));\n"
        "if (is_wp_error($made)) { fwrite(STDERR, $made->get_error_message()); exit(1); }\n"
        "echo $made[0];\n",
    )
    password = made.strip()
    answer = requests.get(f"{url}/wp-json/wp/v2/users/me", auth=(ADMIN, password), timeout=60)
    if answer.status_code != 200 or not answer.headers["Content-Type"].startswith(
        "application/json"
    ):
        raise RuntimeError(f"WordPress refused its application password: {answer.text[:500]}")
    return password
