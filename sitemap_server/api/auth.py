"""Bearer tokens for the admin API (S-702)."""

from __future__ import annotations

from typing import Any

from pyramid.request import Request, RequestLocalCache
from pyramid.security import Allowed, Denied

from ..models import ApiToken
from ..services.tokens import token_by_secret

ADMIN = "admin"


class BearerTokenSecurityPolicy:
    """``Authorization: Bearer <token>``; a stored token grants the one permission there is.
    The token is looked up once a request (Pyramid asks for the identity more than once)."""

    def __init__(self) -> None:
        self.identity_cache = RequestLocalCache(self._load_identity)

    def identity(self, request: Request) -> ApiToken | None:
        return self.identity_cache.get_or_create(request)

    def _load_identity(self, request: Request) -> ApiToken | None:
        authorization = request.authorization
        if authorization is None or authorization.authtype.lower() != "bearer":
            return None
        secret = str(authorization.params).strip()
        if not secret or len(secret) > 200:
            return None
        return token_by_secret(request.dbsession, secret)

    def authenticated_userid(self, request: Request) -> str | None:
        identity = request.identity
        return identity.name if identity is not None else None

    def permits(self, request: Request, context: Any, permission: str) -> Allowed | Denied:
        if request.identity is not None:
            return Allowed("valid bearer token")
        return Denied("no valid bearer token")

    def remember(self, request: Request, userid: Any, **kw: Any) -> list[tuple[str, str]]:
        return []

    def forget(self, request: Request, **kw: Any) -> list[tuple[str, str]]:
        return []
