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

import re
from dataclasses import dataclass
from datetime import datetime
from urllib.parse import unquote, urlsplit

from ..content import permalinks

# WordPress's own choices (Settings → Permalinks), then those of pages and custom types.
STRUCTURES = (
    "/{year}/{month}/{day}/{slug}/",
    "/{year}/{month}/{slug}/",
    "/archives/{id}",
    "/{slug}/",
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


def path_of(pattern: str, post_type: str, sample: Sample) -> str:
    """``sample``'s path under ``pattern``, decoded (as ``link_path`` gives WordPress's)."""
    made = permalinks.post_path(
        pattern,
        post_id=sample.post_id,
        slug=sample.slug,
        post_type=post_type,
        date=sample.date,
        ancestors=sample.ancestors,
    )
    return unquote(made)


# WordPress's structure tags (Settings → Permalinks) this product's patterns can express.
TAGS = {
    "%year%": "{year}",
    "%monthnum%": "{month}",
    "%day%": "{day}",
    "%postname%": "{slug}",
    "%post_id%": "{id}",
}
_TAG = re.compile(r"%[a-z_]+%")


def from_wordpress(structure: str) -> str:
    """WordPress's permalink structure (``/%year%/%monthnum%/%postname%/``) as a pattern
    of this product.

    :raises ValueError: a tag no pattern can express (``%category%``, ``%author%``,
        ``%hour%`` …), or a structure that is no path.
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


def measure(post_type: str, samples: list[Sample], pattern: str) -> Structure:
    """How many of ``samples`` ``pattern`` reproduces (a structure given, not found)."""
    reproduced = sum(1 for s in samples if path_of(pattern, post_type, s) == s.path)
    return Structure(pattern, reproduced, len(samples))


def infer(post_type: str, samples: list[Sample], current: str | None = None) -> Structure:
    """The structure of ``post_type`` that reproduces the most of ``samples``: its
    ``current`` pattern unless another reproduces more (None when none reproduces any:
    the type keeps its pattern, every item its exported path)."""
    best = Structure(pattern=None, sampled=len(samples))
    for pattern in dict.fromkeys([*([current] if current else []), *STRUCTURES]):
        reproduced = sum(1 for s in samples if path_of(pattern, post_type, s) == s.path)
        if reproduced > best.reproduced:
            best.pattern, best.reproduced = pattern, reproduced
    return best
