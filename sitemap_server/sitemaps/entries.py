"""One URL of a sitemap, as providers compute it and the engine stores it."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any


@dataclass
class Entry:
    key: int
    path: str
    lastmod: datetime | None
    part: int = 1
    images: list[str] = field(default_factory=list)
    extra: dict[str, Any] | None = None
    # The URLs of its translations, itself included: [hreflang, path] in language order,
    # then ["x-default", path] when there is one (S-405).
    alternates: list[list[str]] | None = None
    # The row the entry was made from, for the ``sitemap_entry`` hook; never stored.
    item: Any = field(default=None, compare=False, repr=False)

    def row(self, provider: str, xml: str, size: int) -> dict[str, Any]:
        """The ``sitemap_entries`` row of this entry: ``xml`` its rendered fragment,
        ``size`` the bytes it takes in a page."""
        return {
            "xml": xml,
            "size": size,
            "provider": provider,
            "key": self.key,
            "part": self.part,
            "path": self.path,
            "lastmod": self.lastmod,
            "images": self.images,
            "extra": self.extra,
            "alternates": self.alternates,
        }


@dataclass(frozen=True)
class StoredEntry:
    """An entry as the engine stored it: the sitemap (``provider``) that lists it, its
    key and part there, its path and its lastmod."""

    provider: str
    key: int
    part: int
    path: str
    lastmod: datetime | None


def alternate_links(
    groups: dict[str, dict[str, str]], x_default: str | None
) -> dict[str, list[list[str]]]:
    """The alternates of each translation group (``groups``: the path of each listed
    member by language): [hreflang, path] by language, then x-default (the member in the
    ``x_default`` language, if listed); none for a group of one language. Only listed
    members are given, so each member names the same set: reciprocal by construction."""
    found: dict[str, list[list[str]]] = {}
    for group, by_language in groups.items():
        if len(by_language) < 2:
            continue
        found[group] = [[language, by_language[language]] for language in sorted(by_language)]
        if x_default in by_language:
            found[group].append(["x-default", by_language[x_default]])
    return found
