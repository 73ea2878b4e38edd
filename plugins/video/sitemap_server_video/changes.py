"""What a write to videos alone changed: the sitemaps follow it, detection adds nothing.

Both the admin API's writes (``services``) and a fetched oEmbed answer (``oembed``) record
such a change; it lives here, below both, so that neither imports the other.
"""

from __future__ import annotations

from sqlalchemy.orm import Session

from sitemap_server.plugin import engine_of

from .models import VIDEO_WRITES


def videos_changed(session: Session, *post_ids: int) -> None:
    """Only the videos of ``post_ids`` changed: their posts' entries are recomputed, and
    the detection that runs on a saved post (``services.sync_detected``) adds nothing
    back to them."""
    session.info.setdefault(VIDEO_WRITES, set()).update(post_ids)
    engine_of(session).record(session, posts=set(post_ids))
