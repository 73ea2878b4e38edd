"""``/api/notifications``: what search engines were told, and sending now (S-601, S-602)."""

from __future__ import annotations

from typing import Any

from pyramid.request import Request

from ..notify import report
from ..notify.worker import Worker
from .views import api_view, query


@api_view(route_name="api.notifications", request_method="GET")
def get_notifications(request: Request) -> dict[str, Any]:
    limit = query(request).get("limit") or 20
    return report.status(request.dbsession, request.site.notify, limit)


@api_view(route_name="api.notifications_flush", request_method="POST")
def flush_notifications(request: Request) -> dict[str, Any]:
    """Send everything waiting, now: the quiet period and backoff are skipped, each
    notification gets one attempt, and the answer lists them. The attempts run in their
    own transactions, like the worker's, so they are recorded whatever this request does."""
    worker = Worker(request.site)
    attempts = worker.run_once(force=True)
    return {"attempts": attempts, "pending": report.pending(request.dbsession)}
