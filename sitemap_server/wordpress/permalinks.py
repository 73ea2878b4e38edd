"""The permalink structure of a WordPress site, found from the links of its export.

WXR does not carry the site's permalink settings, but every item carries its ``<link>``:
the URL WordPress served for it. For each post type, ``infer`` tries the structures
WordPress offers (and the usual ones for pages and custom types), each written as this
product's pattern and computed by the function that makes this site's URLs
(``content.permalinks.post_path``), and keeps the one that reproduces the most links.
An item whose link the structure does not reproduce keeps its exported path as an
explicit path (S-103), so its URL does not change; the import says how many.
"""

from __future__ import annotations

import contextlib
import itertools
import re
import zoneinfo
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta, tzinfo
from pathlib import Path
from urllib.parse import unquote, urlsplit

from ..content import permalinks
from ..content.permalinks import NO_CATEGORY

# WordPress's own choices (Settings → Permalinks), then those of pages and custom types.
STRUCTURES = (
    "/{year}/{month}/{day}/{slug}/",
    "/{year}/{month}/{slug}/",
    "/archives/{id}",
    "/{slug}/",
    "/{category}/{slug}/",
    "/{path}/",
    "/{type}/{slug}/",
    "/{type}/{path}/",
)
# Links looked at per post type to choose its structure.
SAMPLE = 2000


@dataclass
class Sample:
    """What a published item's URL is made of, and the path WordPress gave it."""

    post_id: int
    slug: str
    date: datetime | None
    ancestors: list[str]
    path: str
    author: str = ""  # its author's slug
    category: list[str] = field(default_factory=list)  # its first category's lineage


@dataclass
class Structure:
    """The structure chosen for a post type, and how well it reproduced the sample."""

    pattern: str | None
    reproduced: int = 0
    sampled: int = 0


def link_path(link: str, site: str) -> str | None:
    """The path of ``link`` on the exported site (``site``: its base URL), decoded; None
    for a link elsewhere or with a query string."""
    parts = urlsplit(link)
    base = urlsplit(site).path.rstrip("/")
    if parts.query or parts.fragment:
        return None
    path = unquote(parts.path) or "/"
    if base and path.startswith(base + "/"):
        path = path[len(base) :]
    return path


def path_of(pattern: str, post_type: str, sample: Sample, zone: tzinfo = UTC) -> str:
    """``sample``'s path under ``pattern``, decoded (as ``link_path`` gives WordPress's),
    its date's fields local to ``zone`` (the site's time zone)."""
    made = permalinks.post_path(
        pattern,
        post_id=sample.post_id,
        slug=sample.slug,
        post_type=post_type,
        date=sample.date,
        ancestors=sample.ancestors,
        zone=zone,
        author=sample.author,
        category=sample.category,
    )
    return unquote(made)


# WordPress's structure tags (Settings → Permalinks) this product's patterns can express.
TAGS = {
    "%year%": "{year}",
    "%monthnum%": "{month}",
    "%day%": "{day}",
    "%hour%": "{hour}",
    "%minute%": "{minute}",
    "%second%": "{second}",
    "%postname%": "{slug}",
    "%post_id%": "{id}",
    "%author%": "{author}",
    "%category%": "{category}",
}
_TAG = re.compile(r"%[a-z_]+%")


def from_wordpress(structure: str) -> str:
    """WordPress's permalink structure (``/%year%/%monthnum%/%postname%/``) as a pattern
    of this product.

    :raises ValueError: a tag no pattern can express (a plugin's own), or a structure
        that is no path.
    """
    unknown = sorted(set(_TAG.findall(structure)) - set(TAGS))
    if unknown:
        raise ValueError(
            f"{', '.join(unknown)} cannot be part of a permalink here; use " + ", ".join(TAGS)
        )
    pattern = _TAG.sub(lambda m: TAGS[m.group(0)], structure)
    if not pattern.startswith("/"):
        pattern = "/" + pattern
    problem = permalinks.pattern_problem(pattern)
    if problem:
        raise ValueError(f"{structure}: {problem}")
    return pattern


def measure(post_type: str, samples: list[Sample], pattern: str, zone: tzinfo = UTC) -> Structure:
    """How many of ``samples`` ``pattern`` reproduces (a structure given, not found)."""
    reproduced = sum(1 for s in samples if path_of(pattern, post_type, s, zone) == s.path)
    return Structure(pattern, reproduced, len(samples))


def infer(
    post_type: str, samples: list[Sample], current: str | None = None, zone: tzinfo = UTC
) -> Structure:
    """The structure of ``post_type`` that reproduces the most of ``samples``: its
    ``current`` pattern unless another reproduces more (None when none reproduces any:
    the type keeps its pattern, every item its exported path).

    The structures tried are WordPress's own choices, and those read from the first
    links themselves: each segment of a link is a field whose value it is (the year,
    the slug, the id …), or text of its own (``/blog/``, ``/archives/``; never digits),
    as WordPress's custom structures are written."""
    tried = [*([current] if current else []), *STRUCTURES]
    for sample in samples[:READ_FROM]:
        tried.extend(_read(post_type, sample, zone))
    best = Structure(pattern=None, sampled=len(samples))
    for pattern in dict.fromkeys(tried):
        reproduced = sum(1 for s in samples if path_of(pattern, post_type, s, zone) == s.path)
        if reproduced > best.reproduced:
            best.pattern, best.reproduced = pattern, reproduced
    return best


# (UTC offset in minutes, year, month) -> (an instant WordPress wrote at that offset, how
# many it wrote at that offset that month): what the site's clock was (``infer_zone``).
Clocks = dict[tuple[int, int, int], tuple[datetime, int]]
# Links a structure is read from (``infer``), and the readings kept of each.
READ_FROM = 20
READINGS = 16


def _read(post_type: str, sample: Sample, zone: tzinfo) -> list[str]:
    """The patterns that make ``sample``'s path: each segment read as each field whose
    value it is, or as itself; the last segments as ``{path}`` where they are the slugs
    of the post's ancestors and its own."""
    local = None
    if sample.date is not None and 1000 < sample.date.year < 9999:  # the API's range
        local = sample.date.astimezone(zone)
    values = {
        "slug": sample.slug,
        "id": str(sample.post_id),
        "type": post_type,
        **({"author": sample.author} if sample.author else {}),
        **(permalinks.date_fields(local) if local is not None else {}),
    }
    segments = sample.path.strip("/").split("/")
    ending = "/" if sample.path.endswith("/") and sample.path != "/" else ""
    heads: list[tuple[list[str], list[str]]] = [(segments, [])]
    lineage = [*sample.ancestors, sample.slug]
    if sample.ancestors and segments[-len(lineage) :] == lineage:
        heads.append((segments[: -len(lineage)], ["{path}"]))
    # The first category's slugs, where the link holds them in a row (several for a
    # child category): one field.
    run = sample.category or [NO_CATEGORY]
    for start in range(len(segments) - len(run) + 1):
        if segments[start : start + len(run)] == run:
            in_one = [*segments[:start], "{category}", *segments[start + len(run) :]]
            heads.append((in_one, []))
            break
    readings: list[str] = []
    for head, tail in heads:
        # A segment of digits is a field or nothing: as text of its own it would date
        # every post the same (``/2023/{slug}/``).
        options = [
            [part]
            if part == "{category}"
            else [f"{{{name}}}" for name, value in values.items() if value == part]
            + ([] if part.isdigit() else [part])
            for part in head
        ]
        for chosen in itertools.islice(itertools.product(*options), READINGS):
            pattern = "/" + "/".join([*chosen, *tail]) + ending
            if permalinks.pattern_problem(pattern) is None:
                readings.append(pattern)
    return readings


def zone_reproduces(zone: tzinfo, clocks: Clocks) -> int:
    """How many exported dates ``zone`` gives their offset (``Survey.clocks``)."""
    return sum(
        count
        for (offset, _year, _month), (instant, count) in clocks.items()
        if instant.astimezone(zone).utcoffset() == timedelta(minutes=offset)
    )


def infer_zone(clocks: Clocks, current: str = "UTC") -> tuple[str, int]:
    """The time zone the site's dates were local to, and how many of them it gives their
    offset: the zone that gives the most, ``current`` (the site's) unless another gives
    more, then the zones of the tz database's own list (``zone1970.tab``, not the older
    names kept as links), then the others, then ``Etc/GMT±n``, by name. Several zones may
    give them all (a constant -7 hours is America/Phoenix's and Etc/GMT+7's): any gives
    the export's dates, and so its links. An export may hold dates of several zones (its
    posts came from several sites): the others keep their exported path."""
    best, most = current, zone_reproduces(zoneinfo.ZoneInfo(current), clocks)
    total = sum(count for _instant, count in clocks.values())
    if most == total:
        return best, most
    main = _main_zones()
    names = sorted(
        zoneinfo.available_timezones(), key=lambda n: (n.startswith("Etc/"), n not in main, n)
    )
    for name in names:
        if "/" not in name and name != "UTC":
            continue
        given = zone_reproduces(zoneinfo.ZoneInfo(name), clocks)
        if given > most:
            best, most = name, given
            if most == total:
                break
    return best, most


def _main_zones() -> set[str]:
    """The zones of the tz database's ``zone1970.tab`` where this machine has it."""
    for directory in zoneinfo.TZPATH:
        with contextlib.suppress(OSError):
            lines = Path(directory, "zone1970.tab").read_text(encoding="utf-8").splitlines()
            return {line.split("\t")[2] for line in lines if line and not line.startswith("#")}
    return set()
