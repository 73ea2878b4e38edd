"""What the maintainer does when a provider's or a plugin's code fails.

The database unavailable, or a lock or statement timeout (``OUTAGE``), is never
contained: the worker waits and tries again, a request answers 503. Any other error
while one sitemap or one entry is computed is contained: that entry (or sitemap) is left
as stored, logged once per refresh with its traceback, kept in ``BuildContext.failures``
and reported by ``check``; everything else is applied.
"""

from __future__ import annotations

import logging

from sqlalchemy.exc import InterfaceError, OperationalError
from sqlalchemy.exc import TimeoutError as SATimeoutError

from .entries import Entry
from .providers import BuildContext, Provider

log = logging.getLogger(__name__)

OUTAGE = (OperationalError, InterfaceError, SATimeoutError)
# What becomes of what could not be computed, as a failure's message ends.
LEFT_AS_STORED = "is left as stored"
LEFT_OUT = "is left out"
WHOLE = "the whole sitemap is refreshed"
# Characters of an error's text that a log line or ``check`` repeats.
MAX_ERROR_TEXT = 300
# ``BuildContext.memo``: the failures and warnings already logged in this refresh.
LOGGED = "logged"


def failed(
    ctx: BuildContext, what: str, error: BaseException, outcome: str = LEFT_AS_STORED
) -> None:
    """Log and keep a failure to compute ``what``. The traceback goes to the log: it is a
    provider's or a plugin's bug, and names the line."""
    message = f"{what} could not be computed and {outcome}: {_described(error)}"
    ctx.failures.append(message)
    if first_time(ctx, message):
        log.error("%s", message, exc_info=error)


def first_time(ctx: BuildContext, message: str) -> bool:
    """Whether ``message`` is new to this refresh's log: a failure undoes the pass's
    savepoint and the providers are done again (``maintenance.update_all``), finding the
    same."""
    logged: set[str] = ctx.memo.setdefault(LOGGED, set())
    if message in logged:
        return False
    logged.add(message)
    return True


def subject(entry: Entry) -> str:
    """``post 12``, ``term 3``: what a log line about ``entry`` names (the item's
    ``subject_kind``, else its class: a provider may make entries from a row's columns)."""
    item = entry.item
    if item is not None and isinstance(getattr(item, "id", None), int):
        kind = getattr(item, "subject_kind", None) or type(item).__name__.lower()
        return f"{kind} {item.id}"
    return f"the entry with key {entry.key}"


def of_entry(provider: Provider, entry: Entry) -> str:
    """``post 12 in the post sitemap``."""
    return f"{subject(entry)} in the {provider.name} sitemap"


def _described(error: BaseException) -> str:
    text = f"{type(error).__name__}: {error}"
    return text if len(text) <= MAX_ERROR_TEXT else text[: MAX_ERROR_TEXT - 1] + "…"
