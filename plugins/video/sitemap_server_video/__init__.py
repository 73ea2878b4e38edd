"""sitemap-server-video: video content, its admin endpoints and ``/video-sitemap.xml``.

Installed (``pip install ./plugins/video``), the core finds this module through the
``sitemap_server`` entry-point group and calls the hooks below; nothing in the core names
it. Disabled (``sitemap_server.disabled_plugins = video``) or uninstalled, everything it
adds is gone and the core works as before.
"""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path
from typing import Any

import yaml
from pyramid.config import Configurator
from sqlalchemy.orm import Session

from sitemap_server.plugin import ContentChanges, Provider, hookimpl

from . import (
    demo,
    models,  # noqa: F401  (the table joins the core's metadata)
    services,
)
from .oembed import sitemap_channels, sitemap_settings  # noqa: F401  (its hooks are ours)
from .provider import VideoProvider

VIDEO_NS = "http://www.google.com/schemas/sitemap-video/1.1"


@hookimpl
def sitemap_providers(session: Session) -> list[Provider]:
    return [VideoProvider()]


@hookimpl
def sitemap_configure(config: Configurator) -> None:
    config.include("sitemap_server_video.api")


@hookimpl
def sitemap_namespaces() -> dict[str, str]:
    return {"video": VIDEO_NS}


@hookimpl
def sitemap_seed_demo(session: Session) -> None:
    demo.seeding(session)  # the videos are detected, then described, at the refresh


@hookimpl
def sitemap_migrations() -> list[str]:
    return [str(Path(__file__).resolve().parent / "migrations")]


@hookimpl
def sitemap_openapi() -> dict[str, Any]:
    text = files("sitemap_server_video").joinpath("openapi.yaml").read_text("utf-8")
    return dict(yaml.safe_load(text))


@hookimpl(tryfirst=True)
def sitemap_content_changed(session: Session, changes: ContentChanges) -> None:
    """Before the sitemaps are refreshed: the saved posts' embedded videos become rows."""
    services.sync_detected(session, changes.posts)
    demo.describe_videos(session, changes.posts)  # only in the transaction seeding the demo
