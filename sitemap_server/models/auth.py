"""Admin API bearer tokens (SPEC S-702). Only a SHA-256 of each token is stored.

Revoking a token deletes its row: a revoked token is indistinguishable from a wrong one.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import String
from sqlalchemy.orm import Mapped, mapped_column

from .meta import Base, UTCDateTime


class ApiToken(Base):
    __tablename__ = "api_tokens"

    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(100), unique=True)
    # Tokens are 256 random bits, so a fast hash is enough: there is nothing to brute-force.
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)
