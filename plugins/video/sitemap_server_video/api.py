"""Admin endpoints: a post's videos (``/api/posts/{id}/videos``) and one video
(``/api/videos/{id}``); same bearer tokens, validation and problem details as the core."""

from __future__ import annotations

from typing import Any

from pyramid.config import Configurator
from pyramid.request import Request
from pyramid.response import Response

from sitemap_server.plugin import api_view, body, created, no_content, path_param

from . import services
from .models import Video
from .provider import video_fields


def video_dict(video: Video) -> dict[str, Any]:
    def when(value: Any) -> str | None:
        return value.isoformat() if value is not None else None

    return {
        "id": video.id,
        "post": video.post_id,
        "source": video.source,
        "title": video.title,
        "description": video.description,
        "caption": video.caption,
        "host_description": video.host_description,
        "content_url": video.content_url,
        "player_url": video.player_url,
        "thumbnail_url": video.thumbnail_url,
        "page_url": video.page_url,
        "published_at": when(video.published_at),
        "duration": video.duration,
        "view_count": video.view_count,
        "width": video.width,
        "height": video.height,
        "family_friendly": video.family_friendly,
        "uploader": video.uploader,
        "uploader_url": video.uploader_url,
        "modified_at": when(video.modified_at),
        "fetched_at": when(video.fetched_at),
        "fetch_error": video.fetch_error,
        "listable": video_fields(video, "", [], None) is not None,
    }


@api_view(route_name="video.post_videos", request_method="GET")
def list_post_videos(request: Request) -> dict[str, Any]:
    videos = services.post_videos(request.dbsession, path_param(request, "id"))
    return {"items": [video_dict(v) for v in videos]}


@api_view(route_name="video.post_videos", request_method="POST")
def create_video(request: Request) -> dict[str, Any]:
    video = services.create_video(request.dbsession, path_param(request, "id"), body(request))
    return created(request, video_dict(video), f"/api/videos/{video.id}")


@api_view(route_name="video.video", request_method="GET")
def get_video(request: Request) -> dict[str, Any]:
    return video_dict(services.get_video(request.dbsession, path_param(request, "id")))


@api_view(route_name="video.video", request_method="PATCH")
def update_video(request: Request) -> dict[str, Any]:
    video = services.get_video(request.dbsession, path_param(request, "id"), for_update=True)
    return video_dict(services.update_video(request.dbsession, video, body(request)))


@api_view(route_name="video.video", request_method="DELETE")
def delete_video(request: Request) -> Response:
    video = services.get_video(request.dbsession, path_param(request, "id"), for_delete=True)
    services.delete_video(request.dbsession, video)
    return no_content()


def includeme(config: Configurator) -> None:
    # Paths as openapi.yaml names them: the core then answers other methods with a 405
    # and checks responses against the document, as for its own routes.
    config.add_route("video.post_videos", "/api/posts/{id}/videos")
    config.add_route("video.video", "/api/videos/{id}")
    config.scan(".api")
