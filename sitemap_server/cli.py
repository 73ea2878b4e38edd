"""``sitemap-server``: the one command-line entry point.

Every command builds the same ``Site`` as ``pserve`` from the same ini file (``--config``,
default ``development.ini``, or the ``SITEMAP_SERVER_CONFIG`` environment variable) with
the same ``SITEMAP_SERVER_*`` environment overrides, so it always works on the server's
database with the server's plugins.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import os
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any, BinaryIO, cast

import transaction
from pyramid.paster import setup_logging
from sqlalchemy.orm import Session

from . import migrations
from .errors import ServiceError
from .models import get_tm_session, take_write_lock
from .plugins import DISTRIBUTION, describe_plugins
from .settings import SettingsError, http_url
from .site import BUSY_TIMEOUT, COMMAND_BUSY_TIMEOUT_MS, Site

DEFAULT_CONFIG = "development.ini"


class CommandError(Exception):
    """A failure to report in one line, without a traceback."""


@contextmanager
def open_site(config: str) -> Iterator[Site]:
    """The site of the ini file ``config``, as ``pserve`` builds it (the command waits
    longer for SQLite's write lock); its database closed when the block ends."""
    if not Path(config).is_file():
        raise CommandError(f"configuration file {config!r} not found (use --config)")
    setup_logging(config)
    site = Site.from_ini(config, command=True)
    try:
        yield site
    finally:
        site.close()


@contextmanager
def database(site: Site) -> Iterator[Session]:
    """A session whose work is committed when the block ends, or aborted on an error. On
    SQLite it holds the write lock from the start: when another process holds it (a
    server's worker applying changes, another command), the command says it waits."""
    with transaction.manager:
        session = get_tm_session(site.sessions, transaction.manager)
        if not take_write_lock(session, wait=False):
            print(
                "waiting for the database: another process is writing to it (at most "
                f"{site.settings[BUSY_TIMEOUT] // 1000} s) …",
                file=sys.stderr,
                flush=True,
            )
            take_write_lock(session)
        yield session


def cmd_migrate(args: argparse.Namespace) -> None:
    # The plugins the application would load (minus the disabled ones) bring their tables.
    with open_site(args.config) as site:
        with site.database.begin() as connection:
            migrations.upgrade(args.config, site.plugins, connection=connection)
        heads = migrations.current_heads(args.config, site.plugins)
    print(f"database is at {', '.join(heads)}")


def cmd_plugins(args: argparse.Namespace) -> None:
    with open_site(args.config) as site:
        plugins = describe_plugins(site.plugins)
    if args.json:
        print(json.dumps({"plugins": plugins}, indent=2))
        return
    for plugin in plugins:
        origin: list[str] = [plugin["kind"]] if plugin["kind"] != "installed" else []
        if plugin["distribution"]:
            origin.append(f"{plugin['distribution']} {plugin['version']}")
        state = ": disabled" if plugin["disabled"] else ""
        print(f"{plugin['name']} ({', '.join(origin)}){state}")
        if plugin["hooks"]:
            print(f"  hooks: {', '.join(plugin['hooks'])}")


def cmd_token(args: argparse.Namespace) -> None:
    from .services import tokens

    with open_site(args.config) as site, database(site) as session:
        if args.action == "create":
            secret = tokens.create_token(session, args.name)
            print(secret)
            print(f"token {args.name!r} created; it is shown only this once.", file=sys.stderr)
        elif args.action == "revoke":
            tokens.revoke_token(session, args.name)
            print(f"token {args.name!r} revoked", file=sys.stderr)
        else:
            rows = tokens.list_tokens(session)
            for token in rows:
                print(f"{token.name}\tcreated {token.created_at.isoformat(timespec='seconds')}")
            if not rows:
                print(
                    "no tokens; create one with: sitemap-server token create NAME", file=sys.stderr
                )


def _open_input(path: str) -> tuple[BinaryIO, int | None]:
    if path == "-":
        return sys.stdin.buffer, None
    if not Path(path).is_file():
        raise CommandError(f"{path}: no such file")
    return open(path, "rb"), Path(path).stat().st_size


def _progress_bar(total: int | None, quiet: bool) -> Any:
    """The bytes an import has read, on standard error when it is a terminal."""
    from tqdm import tqdm

    return tqdm(
        total=total,
        unit="B",
        unit_scale=True,
        desc="importing",
        disable=quiet or None,
        file=sys.stderr,
    )


def cmd_import(args: argparse.Namespace) -> None:

    from .services.importer import import_lines, read_lines

    stream, size = _open_input(args.file)
    with open_site(args.config) as site:
        with (
            stream,
            _progress_bar(size, args.quiet) as bar,
            database(site) as session,
        ):
            # The lines are checked against the document the application serves: the
            # plugins' additions (sitemap_openapi) included.
            lines = read_lines(stream)
            report = import_lines(
                session,
                lines,
                site.import_validator,
                progress=bar.update,
                keep_going=args.continue_on_error,
            )
        for line in report.summary():
            print(line)
        apply_changes(site, quiet=args.quiet)


class _Counted:
    """A binary file whose progress is counted (``progress(bytes)``, the bytes past the
    furthest point read so far: a peek and a seek back count once), for a progress bar."""

    def __init__(self, file: BinaryIO, progress: Callable[[int], object]) -> None:
        self.file, self.progress = file, progress
        self.furthest = 0

    def read(self, size: int = -1) -> bytes:
        data = self.file.read(size)
        position = self.file.tell()
        if position > self.furthest:
            self.progress(position - self.furthest)
            self.furthest = position
        return data

    def seekable(self) -> bool:
        return self.file.seekable()

    def tell(self) -> int:
        return self.file.tell()

    def seek(self, offset: int, whence: int = 0) -> int:
        return self.file.seek(offset, whence)

    def __enter__(self) -> IO[bytes]:
        return cast(IO[bytes], self)  # what the reader uses of a file: read, seek, tell

    def __exit__(self, *_exc: object) -> None:
        self.file.close()


class _DryRun(Exception):
    """Raised at the end of a dry run, so that its transaction is rolled back."""


def cmd_import_wordpress(args: argparse.Namespace) -> None:

    from .wordpress.importer import import_wordpress
    from .wordpress.wxr import WxrError

    path = Path(args.file)
    if not path.is_file():
        raise CommandError(f"{args.file}: no such file")
    post_pattern = _post_pattern(args.permalinks, "--permalinks")
    with open_site(args.config) as site:
        try:
            with (
                # The file is read twice (a survey, then the import): bytes of both.
                _progress_bar(2 * path.stat().st_size, args.quiet) as bar,
                database(site) as session,
            ):
                items = 0

                def counted(_item: int) -> None:
                    nonlocal items
                    items += 1
                    if items % 1000 == 0:
                        bar.set_postfix(items=items, refresh=False)

                try:
                    report = import_wordpress(
                        session,
                        lambda: _Counted(path.open("rb"), bar.update),
                        site.import_validator,
                        counted,
                        prune=args.prune,
                        post_pattern=post_pattern,
                        keep_going=args.continue_on_error,
                    )
                except WxrError as error:
                    raise CommandError(f"{args.file}: {error}; nothing was changed") from None
                if args.dry_run:
                    raise _DryRun
        except _DryRun:
            print("dry run: this is what the import would do; nothing was changed")
        for line in report.summary():
            print(line)
        if not args.dry_run:
            apply_changes(site, quiet=args.quiet)


def cmd_sync_wordpress(args: argparse.Namespace) -> int | None:
    import json

    from .wordpress import rest, sync

    with open_site(args.config) as site:
        if args.status:
            with site.sessions() as session:
                print(json.dumps(sync.status(session), indent=2, ensure_ascii=False))
            return None
        url = args.url or site.settings["sitemap_server.wordpress.url"]
        if not url:
            raise CommandError(
                "give the WordPress to read: sitemap-server sync-wordpress URL (or set "
                "sitemap_server.wordpress.url)"
            )
        try:
            http_url(url)
        except ValueError as error:
            raise CommandError(f"{url}: {error}") from None
        post_pattern = (
            _post_pattern(args.permalinks, "--permalinks")
            if args.permalinks
            else _post_pattern(site.settings[PERMALINKS], PERMALINKS)
        )
        try:
            auth = sync.credentials_from_environment()
            run = sync.sync(site, url, auth, post_pattern=post_pattern)
        except (rest.WordPressError, sync.Busy) as error:
            if isinstance(error, sync.Busy) or error.temporary:
                print(
                    f"sitemap-server: {url}: {error}; try again: the next run starts "
                    "where the last one stopped",
                    file=sys.stderr,
                )
                return 75  # EX_TEMPFAIL
            raise CommandError(f"{url}: {error}; nothing more was read") from None
        for line in run.summary():
            print(line)
        apply_changes(site, quiet=args.quiet)
    return None


def cmd_export(args: argparse.Namespace) -> None:
    from .services.exporter import export

    def write_to(out: Any) -> int:
        count = 0
        with open_site(args.config) as site, site.sessions() as session:
            for item in export(session):
                out.write(json.dumps(item, ensure_ascii=False, separators=(",", ":")) + "\n")
                count += 1
        return count

    if args.file == "-":
        write_to(sys.stdout)
        return
    with open(args.file, "w", encoding="utf-8") as out:
        count = write_to(out)
    print(f"exported {count} lines to {args.file}", file=sys.stderr)


def cmd_seed_demo(args: argparse.Namespace) -> None:
    from .demo import seed_demo

    with open_site(args.config) as site:
        with database(site) as session:
            summary = seed_demo(session, posts=args.posts, if_empty=args.if_empty)
        print(summary)
        apply_changes(site)


def apply_changes(site: Site, quiet: bool = False) -> None:
    """Apply the change log now (the command's writes, committed already), so the sitemaps
    are built when the command ends; unless a worker runs, which applies them itself. It
    never fails the command: what is not applied now is applied by a worker or by the
    sitemap requests (``max_staleness``), and the command says so."""
    from tqdm import tqdm

    from .outages import database_unavailable
    from .sitemaps.changes import Waiting
    from .sitemaps.presence import worker_alive

    try:
        if worker_alive(site.database):
            if not quiet:
                print("a worker is running: it brings the sitemaps up to date", file=sys.stderr)
            return
        with site.sessions() as session:
            waiting = Waiting.read(session).count
        if not quiet:
            print(f"applying {waiting:,} changes to the sitemaps …", file=sys.stderr)
        started = time.monotonic()
        bar = tqdm(
            total=waiting, unit=" changes", desc="applying", disable=quiet or None, file=sys.stderr
        )
        with bar:
            applied = site.engine.apply(progress=bar.update)
        if not quiet:
            seconds = time.monotonic() - started
            print(
                f"the sitemaps are up to date ({applied:,} changes applied in {seconds:.1f} s)",
                file=sys.stderr,
            )
    except Exception as error:
        if not database_unavailable(error):
            raise
        print(
            f"sitemap-server: the sitemaps are not up to date yet ({_unavailable(error)}); "
            "a worker, or the next sitemap requests, will apply the changes",
            file=sys.stderr,
        )


def _unavailable(error: BaseException) -> str:
    """The first line of what the database said."""
    from .outages import cause_of

    return ": ".join(cause_of(error))


def cmd_rebuild_sitemaps(args: argparse.Namespace) -> None:
    with open_site(args.config) as site, database(site) as session:
        failures = site.engine.rebuild(session)
    for failure in failures:
        print(f"failed: {failure}", file=sys.stderr)
    print("sitemaps rebuilt" + (f", {len(failures)} failure(s) left as stored" if failures else ""))


def cmd_check(args: argparse.Namespace) -> int:
    from .sitemaps.check import CONTENT_PROBLEMS

    with open_site(args.config) as site, database(site) as session:
        report = site.engine.check(session, repair=args.repair)
    if args.json:
        print(json.dumps(report.as_dict(), indent=2))
    else:
        for d in report.differences:
            plain = d.as_dict()
            print(f"{d.provider}\t{d.where}\t{d.field}: stored {plain['stored']!r}", end="")
            print(f", expected {plain['expected']!r}")
        if report.count > len(report.differences):
            print(f"… and {report.count - len(report.differences)} more")
        for failure in report.failures:
            print(f"failed: {failure}")
        if report.failures:
            print(
                f"{len(report.failures)} failure(s) to compute an entry or a sitemap (see the "
                "log): fix the content or the plugin, then run check again",
                file=sys.stderr,
            )
        elif not report.count:
            print(f"the stored sitemaps are what the content implies ({report.entries} entries)")
        elif report.repaired:
            content = sum(d.field in CONTENT_PROBLEMS for d in report.differences)
            print(f"{report.count - content} difference(s) repaired", file=sys.stderr)
            if content:
                print(
                    f"{content} problem(s) of the content itself (a parent cycle, a URL of two "
                    "objects) are left: change the content through the API",
                    file=sys.stderr,
                )
        else:
            print(
                f"{report.count} difference(s); `check --repair` stores the rebuild",
                file=sys.stderr,
            )
    return 1 if report.count or report.failures else 0


def explain_target(words: list[str]) -> tuple[str, int] | str:
    """``post 12``, ``post:12`` → ("post", 12); a URL or a path on the site as it is."""
    from .sitemaps.explain import KINDS

    if len(words) == 1 and words[0].split(":", 1)[0] in KINDS:
        words = words[0].split(":", 1)
    if len(words) == 2 and words[0] in KINDS and words[1].isdigit():
        return words[0], int(words[1])
    if len(words) == 1 and words[0].startswith(("http://", "https://", "/")):
        return words[0]
    raise CommandError(
        f"explain what? {' '.join(words)!r}: give a URL, or post ID, term ID or author ID"
    )


def cmd_explain(args: argparse.Namespace) -> int:
    from .errors import NotFound

    target = explain_target(args.what)
    try:
        with open_site(args.config) as site, database(site) as session:
            engine = site.engine
            if isinstance(target, str):
                explanation = engine.explain_url(session, target)
            else:
                explanation = engine.explain_object(session, *target)
    except NotFound as exc:
        raise CommandError(exc.detail) from None
    if args.json:
        print(json.dumps(explanation.as_dict(), indent=2))
        return 0 if explanation.listed else 1
    subject = explanation.subject
    described = " ".join(str(subject[key]) for key in ("kind", "id") if key in subject)
    within = [str(subject[key]) for key in ("type", "taxonomy", "sitemap") if key in subject]
    if within:
        described += f" ({within[0]})"
    for key in ("part", "page"):
        if subject.get(key, 1) > 1:
            described += f", {key} {subject[key]}"
    name = subject.get("title") or subject.get("name")
    if name:
        described += f": {name!r}"
    print(explanation.url)
    print(f"  {described}")
    for listing in explanation.sitemaps:
        print(f"  listed in the {listing.sitemap} sitemap, page {listing.page}: {listing.document}")
        print(f"    lastmod {listing.lastmod}: {listing.lastmod_source}")
    if not explanation.listed:
        print("  not listed:")
    for reason in explanation.reasons:
        print(f"    {reason.requirement} {reason.rule}: {reason.reason}")
    if explanation.note:
        print(f"  note: {explanation.note}")
    return 0 if explanation.listed else 1


def cmd_worker(args: argparse.Namespace) -> None:
    from .notify.worker import Worker

    with open_site(args.config) as site:
        worker = Worker(site)
        if not (worker.config.enabled or worker.config.purging):
            print(
                "sitemap-server: no ping targets, no IndexNow key, no cache to purge and no "
                "plugin's channel are configured: nothing will be announced (see "
                "sitemap_server.ping.targets)",
                file=sys.stderr,
            )
        try:
            if args.once:
                _print_attempts(worker.run_once())
            else:
                _run_until_signalled(worker, _follower(site))
        finally:
            worker.close()


PERMALINKS = "sitemap_server.wordpress.permalinks"


def _post_pattern(structure: str | None, given_by: str) -> str | None:
    """WordPress's permalink structure as a pattern (``permalinks.from_wordpress``), or
    None when none is given; one no pattern expresses ends the command, naming where it
    was given (``given_by``)."""
    from .wordpress.permalinks import from_wordpress

    if not structure:
        return None
    try:
        return from_wordpress(structure)
    except ValueError as error:
        raise CommandError(f"{given_by}: {error}") from None


def _follower(site: Site) -> Any:
    """The WordPress the worker follows (``sitemap_server.wordpress.url``), if any."""
    url = site.settings["sitemap_server.wordpress.url"]
    if not url:
        return None
    from .wordpress import rest, sync

    try:
        auth = sync.credentials_from_environment()
    except rest.WordPressError as error:
        raise CommandError(str(error)) from None
    return sync.Follower(
        site,
        url,
        auth,
        site.settings["sitemap_server.wordpress.poll_seconds"],
        _post_pattern(site.settings[PERMALINKS], PERMALINKS),
    )


def _run_until_signalled(worker: Any, follower: Any = None) -> None:
    """``worker.run`` until SIGTERM or SIGINT, with ``follower`` (a WordPress followed) in
    a thread of its own: a long run of it never holds the maintainer up."""
    import signal
    import threading

    stop = threading.Event()

    def on_signal(*_: Any) -> None:
        # Finish the request in flight, then stop. Set from another thread: the handler
        # runs in the main thread, which may hold the event's lock inside stop.wait().
        threading.Thread(target=stop.set).start()

    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, on_signal)
    following = None
    if follower is not None:
        following = threading.Thread(target=follower.run, args=(stop,), name="wordpress")
        following.start()
    try:
        worker.run(stop)
    finally:
        stop.set()
        if following is not None:
            following.join()


def cmd_notifications(args: argparse.Namespace) -> None:
    from .notify import report
    from .notify.worker import Worker

    with open_site(args.config) as site:
        if args.action == "flush":
            worker = Worker(site)
            try:
                _print_attempts(worker.run_once(force=True))
            finally:
                worker.close()
        with database(site) as session:
            state = report.status(session, site.notify, args.limit)
            targets = report.target_lines(session, site.notify)
    if args.action == "flush":
        state = {"pending": state["pending"]}
    elif args.action == "status":
        print("targets:")
        for line in targets:
            print(f"  {line}")
        if not targets:
            print("  none: nothing is recorded or sent")
        if state["site_private"]:
            print("the site is private: nothing is sent")
        print("latest notifications:")
        for n in state["notifications"]:
            count = f", {n['url_count']} URLs" if n["url_count"] is not None else ""
            print(
                f"  {n['id']}\t{n['created_at']}\t{n['channel']} {n['url']}{count}\t"
                f"{n['status']} after {n['attempts']} attempt(s)"
                + (f": {n['error']}" if n["error"] else "")
            )
    waiting = state["pending"]
    print(
        f"waiting: {waiting['changes']} change(s), {waiting['notifications']} notification(s)"
        + (f", next attempt {waiting['next_attempt_at']}" if waiting["next_attempt_at"] else "")
    )


def _print_attempts(attempts: list[dict[str, Any]]) -> None:
    for a in attempts:
        status = f"HTTP {a['http_status']}" if a["http_status"] else ""
        detail = "; ".join(x for x in (status, a["error"] or "") if x)
        print(f"{a['outcome']}\t{a['channel']} {a['url']}" + (f"\t{detail}" if detail else ""))
    if not attempts:
        print("nothing to send")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="sitemap-server", description=__doc__.split("\n")[0])
    parser.add_argument(
        "-c",
        "--config",
        default=os.environ.get("SITEMAP_SERVER_CONFIG", DEFAULT_CONFIG),
        help="ini file, as for pserve (default: $SITEMAP_SERVER_CONFIG or development.ini)",
    )
    parser.add_argument(
        "--version",
        action="version",
        version=f"%(prog)s {importlib.metadata.version(DISTRIBUTION)}",
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    migrate = commands.add_parser("migrate", help="create or upgrade the database schema")
    migrate.set_defaults(func=cmd_migrate)

    plugins = commands.add_parser(
        "plugins", help="the plugins the application loads, with their versions and hooks"
    )
    plugins.add_argument("--json", action="store_true", help="as JSON, like GET /api/plugins")
    plugins.set_defaults(func=cmd_plugins)

    token = commands.add_parser("token", help="admin API tokens")
    actions = token.add_subparsers(dest="action", required=True, metavar="ACTION")
    for action, text in (
        ("create", "create a token and print it once"),
        ("revoke", "revoke a token"),
    ):
        sub = actions.add_parser(action, help=text)
        sub.add_argument("name", help="what the token is for, e.g. 'ci' or 'alice'")
    actions.add_parser("list", help="list tokens (names only; secrets are not stored)")
    token.set_defaults(func=cmd_token)

    imp = commands.add_parser("import", help="bulk import newline-delimited JSON, all or nothing")
    imp.add_argument("file", help="the .ndjson file, or - for standard input")
    imp.add_argument("-q", "--quiet", action="store_true", help="no progress bar")
    imp.add_argument(
        "--continue-on-error",
        action="store_true",
        help="leave out a line the site cannot take, name it, and import the rest",
    )
    imp.set_defaults(func=cmd_import)

    wordpress = commands.add_parser(
        "import-wordpress",
        help="import a WordPress export (WXR, .xml or .xml.gz), all or nothing",
    )
    wordpress.add_argument(
        "--continue-on-error",
        action="store_true",
        help="leave out an item the site cannot take, name it, and import the rest",
    )
    wordpress.add_argument("file", help="the export: Tools → Export in WordPress")
    wordpress.add_argument("-q", "--quiet", action="store_true", help="no progress bar")
    wordpress.add_argument(
        "--dry-run", action="store_true", help="say what the import would do, and change nothing"
    )
    wordpress.add_argument(
        "--permalinks",
        metavar="STRUCTURE",
        help="the posts' permalink structure, as WordPress's settings write it "
        "(/%%year%%/%%monthnum%%/%%postname%%/); default: found from the exported links",
    )
    wordpress.add_argument(
        "--prune",
        action="store_true",
        help="delete what an earlier import of the same site made and the export no longer has",
    )
    wordpress.set_defaults(func=cmd_import_wordpress)

    sync = commands.add_parser(
        "sync-wordpress",
        help="bring in what changed in a WordPress since the last run, through its REST API",
    )
    sync.add_argument(
        "url",
        nargs="?",
        help="the WordPress (its address; default: sitemap_server.wordpress.url; credentials "
        "from SITEMAP_SERVER_WORDPRESS_USER and SITEMAP_SERVER_WORDPRESS_PASSWORD, an "
        "application password; else anonymous)",
    )
    sync.add_argument("--status", action="store_true", help="each WordPress followed, as JSON")
    sync.add_argument(
        "--permalinks",
        metavar="STRUCTURE",
        help="the posts' permalink structure, as WordPress's settings write it "
        "(/%%year%%/%%monthnum%%/%%postname%%/); default: sitemap_server.wordpress.permalinks, "
        "else found from the links",
    )
    sync.add_argument(
        "-q", "--quiet", action="store_true", help="say nothing of applying what it brought in"
    )
    sync.set_defaults(func=cmd_sync_wordpress)

    exp = commands.add_parser(
        "export", help="write the content as newline-delimited JSON that import reads back"
    )
    exp.add_argument("file", nargs="?", default="-", help="where to write it (default: -)")
    exp.set_defaults(func=cmd_export)

    seed = commands.add_parser("seed-demo", help="create a small demo site")
    seed.add_argument("--posts", type=int, default=300, help="number of blog posts (default 300)")
    seed.add_argument(
        "--if-empty", action="store_true", help="do nothing if the site already has posts"
    )
    seed.set_defaults(func=cmd_seed_demo)

    rebuild = commands.add_parser(
        "rebuild-sitemaps",
        help="recompute every sitemap entry and page (after restoring a database by hand)",
    )
    rebuild.set_defaults(func=cmd_rebuild_sitemaps)

    check = commands.add_parser(
        "check",
        help="compare the stored sitemaps with a rebuild from the content; exit 1 if they differ",
    )
    check.add_argument(
        "--repair",
        action="store_true",
        help="store the rebuild where they differ (one transaction)",
    )
    check.add_argument("--json", action="store_true", help="the differences as JSON")
    check.set_defaults(func=cmd_check)

    explain = commands.add_parser(
        "explain",
        help="whether a URL is listed, where and with which lastmod, or every rule that "
        "leaves it out; exit 0 if listed, 1 if not",
    )
    explain.add_argument(
        "what",
        nargs="+",
        metavar="URL | post ID | term ID | author ID",
        help="an absolute URL or a path on the site, or an object (also post:12)",
    )
    explain.add_argument("--json", action="store_true", help="as JSON, like GET /api/explain")
    explain.set_defaults(func=cmd_explain)

    worker = commands.add_parser(
        "worker", help="send pings and IndexNow submissions as sitemaps change (until stopped)"
    )
    worker.add_argument("--once", action="store_true", help="one pass, then exit")
    worker.set_defaults(func=cmd_worker)

    notifications = commands.add_parser(
        "notifications", help="what search engines were told; send what is waiting now"
    )
    notifications.add_argument(
        "action",
        nargs="?",
        choices=("status", "flush"),
        default="status",
        help="status (default): targets, latest notifications, what is waiting; "
        "flush: send everything waiting now, one attempt each",
    )
    notifications.add_argument("--limit", type=int, default=20, help="notifications to list")
    notifications.set_defaults(func=cmd_notifications)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    func: Callable[[argparse.Namespace], int | None] = args.func
    try:
        status = func(args)
    except (CommandError, SettingsError) as exc:
        print(f"sitemap-server: {exc}", file=sys.stderr)
        return 2
    except ServiceError as exc:
        print(f"sitemap-server: {exc.detail}", file=sys.stderr)
        for problem in exc.errors:
            where = f"line {problem.line}: " if problem.line else ""
            print(f"  {where}{problem.field or ''}: {problem.message}", file=sys.stderr)
        print("nothing was changed", file=sys.stderr)
        return 1
    except Exception as exc:
        from .outages import database_unavailable

        if not database_unavailable(exc):
            raise
        # Down, refusing connections, or (SQLite) locked by another writer for longer
        # than the command waits: nothing this transaction did was committed.
        print(
            f"sitemap-server: the database is unavailable or busy ({_unavailable(exc)}); "
            "nothing was changed: try again when it answers (a SQLite database is locked "
            f"while another process writes; a command waits {COMMAND_BUSY_TIMEOUT_MS // 1000} s)",
            file=sys.stderr,
        )
        return 75  # EX_TEMPFAIL: try again later
    return status or 0


if __name__ == "__main__":
    sys.exit(main())
