"""The plugin's part of the demo site (``sitemap-server seed-demo``): its videos' metadata.

The demo's posts embed YouTube and Vimeo players and ``<video>`` tags. Their ids are made
up, so no host knows them: oEmbed could only fail, and the demo must work offline. When
the demo is seeded (``sitemap_seed_demo``) its posts are not refreshed yet, so there are
no videos to describe: the transaction is marked, and once detection has made the videos
(``sitemap_content_changed``, before the sitemaps are refreshed) each is given what a
host would have told: a title, a description and, where no URL convention gives one
(Vimeo), a thumbnail on the demo site's own ``/uploads/``, where the demo's images are.
So every demo video is listed from the first refresh, and nothing is fetched for them.
"""

from __future__ import annotations

from collections.abc import Iterable

from sqlalchemy import select
from sqlalchemy.orm import Session

from sitemap_server.plugin import Post, site_url_of, utcnow

from . import oembed
from .models import DETECTED, Video

# session.info: this transaction seeds the demo; its detected videos are the demo's, and
# fetch nothing (the demo works without internet).
SEEDING = oembed.NO_FETCH
KINDS = {"youtube": "YouTube video", "vimeo": "Vimeo video"}


def seeding(session: Session) -> None:
    session.info[SEEDING] = True


def describe_videos(session: Session, post_ids: Iterable[int]) -> None:
    """After detection in the seeding transaction: the metadata of the videos of the
    demo's posts (``post_ids``, the posts it made), and no fetch for them. The fields
    still empty are filled, as oEmbed would."""
    if not session.info.pop(SEEDING, False):
        return
    rows = session.execute(
        select(Video, Post.title)
        .join(Post, Post.id == Video.post_id)
        .where(Video.post_id.in_(list(post_ids)), Video.source == DETECTED)
        .where(Video.title.is_(None), Video.fetched_at.is_(None))
        .order_by(Video.id)
    ).all()
    site_url = site_url_of(session)
    for video, post_title in rows:
        kind = KINDS.get((video.embed_key or "").partition(":")[0], "video file")
        video.title = f"{post_title} ({kind})"
        video.description = video.description or (
            f"The {kind} of the demo post “{post_title}”: made up, like the rest of the demo."
        )
        video.thumbnail_url = (
            video.thumbnail_url or f"{site_url}/uploads/video-thumbnails/{video.id}.jpg"
        )
        video.modified_at = utcnow()
    session.flush()
