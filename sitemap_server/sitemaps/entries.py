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
        }
