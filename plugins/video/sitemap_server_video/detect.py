"""Videos found in a post's HTML: YouTube and Vimeo embeds or links, ``<video>`` tags.

Each host's conventions give the player URL, the public page and (YouTube) the thumbnail,
so a detected video is listable before any metadata is fetched.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from html.parser import HTMLParser

from sitemap_server.plugin import clean_url

YOUTUBE = re.compile(
    r"(?:https?:)?//(?:www\.|m\.)?(?:youtube(?:-nocookie)?\.com/(?:embed/|v/|shorts/|watch\?(?:[^\s\"'<>]*?&(?:amp;)?)?v=)|youtu\.be/)"
    # Not the playlist and live players, whose names have 11 characters like an id.
    r"(?!videoseries|live_stream)([A-Za-z0-9_-]{11})(?![A-Za-z0-9_-])"
)
VIMEO = re.compile(r"(?:https?:)?//(?:www\.)?(?:player\.)?vimeo\.com/(?:video/)?(\d{1,12})(?!\d)")


@dataclass(frozen=True)
class Found:
    """A video in a post's content, before it is stored."""

    embed_key: str
    host: str  # "youtube", "vimeo" or "file"
    player_url: str | None = None
    content_url: str | None = None
    thumbnail_url: str | None = None
    page_url: str | None = None


def youtube(video_id: str) -> Found:
    return Found(
        embed_key=f"youtube:{video_id}",
        host="youtube",
        player_url=f"https://www.youtube-nocookie.com/embed/{video_id}",
        thumbnail_url=f"https://i.ytimg.com/vi/{video_id}/hqdefault.jpg",
        page_url=f"https://www.youtube.com/watch?v={video_id}",
    )


def vimeo(video_id: str) -> Found:
    # Vimeo thumbnails have no URL convention: oEmbed gives one.
    return Found(
        embed_key=f"vimeo:{video_id}",
        host="vimeo",
        player_url=f"https://player.vimeo.com/video/{video_id}",
        page_url=f"https://vimeo.com/{video_id}",
    )


class _VideoTags(HTMLParser):
    """``<video src poster>``, or its first ``<source src>``: one video per tag."""

    def __init__(self, base_url: str) -> None:
        super().__init__(convert_charrefs=True)
        self.base_url = base_url
        self.found: list[tuple[tuple[int, int], Found]] = []  # ((line, column), video)
        self.poster: str | None = None
        self.inside = False
        self.taken = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        if tag == "video":
            self.inside, self.taken, self.poster = True, False, values.get("poster")
            tag = "source"  # the tag's own src, if any, counts like a source
        if tag == "source" and self.inside and not self.taken and values.get("src"):
            self.taken = self._add(values.get("src") or "")

    def handle_endtag(self, tag: str) -> None:
        if tag == "video":
            self.inside = False

    def _add(self, src: str) -> bool:
        # Resolved and in normal form (S-404): a src that is no http(s) URL names no
        # video, a poster that is none leaves the video without a thumbnail.
        url = clean_url(src, self.base_url)
        if url is None:
            return False
        poster = clean_url(self.poster, self.base_url)
        video = Found(
            embed_key=url, host="file", content_url=url, thumbnail_url=poster, page_url=url
        )
        self.found.append((self.getpos(), video))
        return True


def find_videos(html: str, base_url: str) -> list[Found]:
    """The videos of a post's content, in order of appearance, each once."""
    found: list[tuple[int, Found]] = []
    for match in YOUTUBE.finditer(html):
        found.append((match.start(), youtube(match.group(1))))
    for match in VIMEO.finditer(html):
        found.append((match.start(), vimeo(match.group(1))))
    if "<video" in html.lower():
        parser = _VideoTags(base_url)
        parser.feed(html)
        parser.close()
        # The parser tells (line, column); the URL matches, offsets in the text.
        line_starts = [0]
        line_starts += [i + 1 for i, char in enumerate(html) if char == "\n"]
        found.extend(
            (line_starts[line - 1] + column, video) for (line, column), video in parser.found
        )
    unique: dict[str, Found] = {}
    for _, video in sorted(found, key=lambda pair: pair[0]):
        unique.setdefault(video.embed_key, video)
    return list(unique.values())
