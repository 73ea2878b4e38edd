"""Site settings (S-106)."""

from __future__ import annotations

from typing import Any

from sqlalchemy.orm import Session

from ..errors import Invalid
from ..models import Post, SiteSettings
from ..models.site import get_settings
from .common import apply, changed, flush

FIELDS = (
    "site_url",
    "title",
    "language",
    "timezone",
    "private",
    "entries_per_page",
    "front_page",
    "front_page_id",
    "posts_page_id",
    "allowed_image_hosts",
)


def _check_page(session: Session, field: str, post_id: int | None) -> None:
    if post_id is None:
        return
    post = session.get(Post, post_id)
    if post is None:
        raise Invalid.field(field, f"unknown post {post_id}")
    if post.type != "page":
        raise Invalid.field(field, f"post {post_id} is a {post.type!r}, not a page")


def update_settings(session: Session, data: dict[str, Any]) -> SiteSettings:
    settings = get_settings(session)
    for field in ("front_page_id", "posts_page_id"):
        if field in data:
            _check_page(session, field, data[field])
    if data.get("site_url"):
        data = {**data, "site_url": data["site_url"].rstrip("/")}
    if "allowed_image_hosts" in data:
        # Host names ignore case: "CDN.example.com" and "cdn.example.com" are one host.
        hosts = dict.fromkeys(h.lower() for h in data["allowed_image_hosts"])
        data = {**data, "allowed_image_hosts": list(hosts)}
    apply(settings, data, FIELDS)
    if settings.front_page_id is not None and settings.front_page_id == settings.posts_page_id:
        raise Invalid.field("posts_page_id", "the posts page cannot also be the front page")
    altered = _altered_fields(session, settings)
    flush(session, "settings")
    # Search engines hear of the whole site again when it stops being private or moves
    # (entries hold paths, so a new site URL changes none of them).
    whole_site = not settings.private and bool({"private", "site_url"} & altered)
    if altered & ENTRY_FIELDS:
        changed(session, everything=True, whole_site=whole_site)
    elif altered:
        changed(session, site=True, whole_site=whole_site)  # privacy, title: no entry moves
    return settings


# Settings that change what the entries say (URLs, images, the home page, page size, and
# the offset of every date in their stored fragments).
ENTRY_FIELDS = {
    "site_url",
    "timezone",
    "allowed_image_hosts",
    "front_page",
    "front_page_id",
    "posts_page_id",
    "entries_per_page",
}


def _altered_fields(session: Session, settings: SiteSettings) -> set[str]:
    from sqlalchemy import inspect

    state = inspect(settings)
    return {name for name in FIELDS if state.attrs[name].history.has_changes()}
