"""Admin API tokens (S-702): created and revoked from the command line."""

from __future__ import annotations

import hashlib
import secrets

from sqlalchemy import bindparam, select
from sqlalchemy.orm import Session

from ..errors import NotFound
from ..models import ApiToken
from ..models.meta import utcnow
from .common import ensure_free, flush

TOKEN_PREFIX = "sms_"


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def create_token(session: Session, name: str) -> str:
    """Store a new token's hash and return the token: the only time it is ever shown."""
    ensure_free(session, ApiToken.name, name, "name")
    token = TOKEN_PREFIX + secrets.token_urlsafe(32)
    session.add(ApiToken(name=name, token_hash=hash_token(token), created_at=utcnow()))
    flush(session, "token")
    return token


def revoke_token(session: Session, name: str) -> None:
    token = session.scalar(select(ApiToken).where(ApiToken.name == name))
    if token is None:
        raise NotFound(f"no token named {name!r}")
    session.delete(token)
    flush(session, "token")


def list_tokens(session: Session) -> list[ApiToken]:
    return list(session.scalars(select(ApiToken).order_by(ApiToken.name)))


def token_by_secret(session: Session, token: str) -> ApiToken | None:
    return session.scalar(BY_HASH, {"hash": hash_token(token)})


# Every API request looks its token up: the statement is built once.
BY_HASH = select(ApiToken).where(ApiToken.token_hash == bindparam("hash"))
