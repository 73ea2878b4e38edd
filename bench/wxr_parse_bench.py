"""WXR reading alone: ``wxr.read`` over a generated WordPress export, no database.

    .venv/bin/python bench/wxr_parse_bench.py --posts 200000
    .venv/bin/python bench/wxr_parse_bench.py --posts 200000 --compare /tmp/wxr_old.py
    .venv/bin/python bench/wxr_parse_bench.py --posts 200000 --floor

The export is ``wxr_bench.generate``'s (the import benchmark's: posts with terms, meta
and content, attachments, pages, menu items, revisions; ~1.4 KB a post). Each run reads
it in a fresh process, so that its peak RSS is its own: CPU time per record (records are
the channel, authors, terms and items; nearly all are items) and peak RSS, medians of
``--runs``. ``--compare`` reads it too with another copy of the module (an older
``wxr.py``, say), run after run in turn with this one, so both see the same machine.
``--floor`` times libxml2's parse alone as well (lxml's iterparse, each item freed and
nothing read from it): what no reader written with lxml can go below. The floor's records
are the items only.
"""

from __future__ import annotations

import argparse
import importlib.util
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

from wxr_bench import generate

from sitemap_server.wordpress import wxr


def load(module: str) -> ModuleType:
    """This checkout's ``wxr``, or the module in the file ``module``."""
    if module == "wxr":
        return wxr
    spec = importlib.util.spec_from_file_location("wxr_compared", module)
    assert spec is not None and spec.loader is not None
    loaded = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = loaded  # its dataclasses look their module up there
    spec.loader.exec_module(loaded)
    return loaded


def floor(stream: Any) -> Iterator[Any]:
    """The least an lxml reader of the export costs: libxml2 parses it, each ``<item>`` is
    handed to Python and freed, and nothing is read from it (``--floor``)."""
    from lxml import etree

    for _event, element in etree.iterparse(
        stream, events=("end",), tag="item", **wxr.PARSER_OPTIONS
    ):
        yield element
        element.clear()
        while element.getprevious() is not None:
            del element.getparent()[0]


def child(module: str, export: Path) -> None:
    """One reading, in this process: records, CPU seconds, peak RSS in MiB."""
    read = floor if module == "floor" else load(module).read
    started = time.process_time()
    with export.open("rb") as stream:
        records = sum(1 for _record in read(stream))
    cpu = time.process_time() - started
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(records, cpu, peak)


def measure(module: str, export: Path) -> tuple[int, float, float]:
    done = subprocess.run(
        [sys.executable, __file__, "--child", module, str(export)],
        check=True,
        capture_output=True,
        text=True,
    )
    records, cpu, peak = done.stdout.split()
    return int(records), float(cpu), float(peak)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--posts", type=int, default=200_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--compare", metavar="WXR_PY", help="another wxr.py to read with too")
    parser.add_argument(
        "--floor",
        action="store_true",
        help="time libxml2's parse alone too (items handed over and freed, nothing read)",
    )
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child[0], Path(args.child[1]))
        return
    modules = {"this": "wxr"}
    if args.compare:
        modules = {"compared": args.compare, **modules}
    if args.floor:
        modules = {"floor": "floor", **modules}
    with tempfile.TemporaryDirectory() as tmp:
        export = Path(tmp) / "export.xml"
        generate(export, args.posts)
        print(f"{export.name}: {export.stat().st_size / 1e6:.0f} MB ({args.posts} posts)")
        results: dict[str, list[tuple[int, float, float]]] = {name: [] for name in modules}
        for _run in range(args.runs):
            for name, module in modules.items():
                results[name].append(measure(module, export))
        for name, runs in results.items():
            records = runs[0][0]
            cpu = [run[1] for run in runs]
            per_record = statistics.median(cpu) / records * 1e6
            print(
                f"{name:9} {records} records: {statistics.median(cpu):6.2f} s CPU "
                f"(runs {', '.join(f'{c:.2f}' for c in cpu)}), {per_record:5.1f} us a record; "
                f"peak RSS {statistics.median(run[2] for run in runs):.0f} MiB"
            )


if __name__ == "__main__":
    main()
