"""A live WordPress read through its REST API (``/wp-json/wp/v2/…``), as records of an
export (``wxr.Record``): what ``sync.py`` gives the importer, so that a synced site is
mapped exactly as its WXR export would be.

- **Discovery.** The post types and taxonomies are WordPress's own lists (``/types``,
  ``/taxonomies``): every type with a REST route that is not one of WordPress's internal
  ones (``importer.INTERNAL_TYPES``), every taxonomy of those types that is not internal.
- **Reading.** Collections are read 100 at a time, page by page, as far as the
  ``X-WP-TotalPages`` header says. Posts are asked in the order they were modified
  (``orderby=modified``), after a cursor (``modified_after``). With credentials (an
  application password: HTTP Basic) every status is asked (``status=any``, and trashed
  posts apart) in the ``edit`` context: raw titles and content, passwords, drafts,
  private and scheduled posts, as an export has them. Without, what any visitor sees:
  published posts, rendered titles and content.
- **Failures.** No connection, a timeout, 429 and 5xx are tried again with backoff
  (1 s, doubled, or the ``Retry-After`` WordPress asks for, up to 30 s), as the
  notification channels' are, then fail the run (``WordPressError``): the next one
  starts again from the cursor. Any other status fails at once, naming the request. An
  item that does not parse is left out and named (``sync.py``), never the run.
"""

from __future__ import annotations

import html
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from email.utils import parsedate_to_datetime
from typing import TYPE_CHECKING, Any

from ..notify.senders import retry_after
from . import wxr
from .importer import INTERNAL_TAXONOMIES, INTERNAL_TYPES

if TYPE_CHECKING:
    import requests

PER_PAGE = 100
# Attempts of one request (no connection, timeout, 429, 5xx), and the waits between them.
ATTEMPTS = 4
FIRST_WAIT = 1.0
LONGEST_WAIT = 30.0
TIMEOUT = 30.0
NO_DATE = wxr.NO_DATE
# The password of a post an anonymous run sees is protected, without its password: it
# leaves the post out of the sitemaps as the password itself would.
UNKNOWN_PASSWORD = "(protected: its password is not shown to an anonymous sync)"


class WordPressError(Exception):
    """WordPress could not be read: what was asked, and what came back. ``temporary``:
    it may pass (no connection, a timeout, 429, 5xx, each tried ``ATTEMPTS`` times)."""

    def __init__(self, message: str, temporary: bool = False) -> None:
        super().__init__(message)
        self.temporary = temporary


@dataclass(frozen=True)
class PostType:
    name: str
    rest_base: str
    taxonomies: tuple[str, ...]


@dataclass(frozen=True)
class Taxonomy:
    name: str
    rest_base: str


class Client:
    """Reads ``url``'s REST API, as ``auth`` (user, application password) or anonymously."""

    def __init__(
        self,
        url: str,
        auth: tuple[str, str] | None,
        http: requests.Session,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.url = url.rstrip("/")
        self.auth = auth
        self.http = http
        self.sleep = sleep
        self.requests = 0  # made, retries included
        # WordPress's clock, from the Date header of its last answer (UTC).
        self.server_time: datetime | None = None

    @property
    def context(self) -> str:
        return "edit" if self.auth else "view"

    def get(self, route: str, params: dict[str, Any] | None = None) -> tuple[Any, Any]:
        """The JSON answer to ``GET /wp-json{route}`` and its headers, tried again on
        what may pass (``ATTEMPTS``)."""
        import requests

        url = f"{self.url}/wp-json{route}"
        wait = FIRST_WAIT
        for attempt in range(1, ATTEMPTS + 1):
            self.requests += 1
            problem: str
            asked: float | None = None
            try:
                answer = self.http.get(url, params=params, auth=self.auth, timeout=TIMEOUT)
            except requests.RequestException as error:
                problem = f"{type(error).__name__}: {error}"
            else:
                if answer.status_code == 200:
                    self.server_time = _date_header(answer.headers.get("Date"))
                    try:
                        return answer.json(), answer.headers
                    except ValueError:
                        raise WordPressError(
                            f"GET {route}: the answer is not JSON "
                            f"({answer.headers.get('Content-Type', 'no type')})"
                        ) from None
                problem = f"HTTP {answer.status_code}"
                if answer.status_code != 429 and answer.status_code < 500:
                    raise WordPressError(f"GET {route}: {problem}{_message(answer)}")
                asked = retry_after(answer.headers.get("Retry-After"))
            if attempt == ATTEMPTS:
                raise WordPressError(f"GET {route}: {problem} ({ATTEMPTS} attempts)", True)
            self.sleep(min(max(wait, asked or 0.0), LONGEST_WAIT))
            wait *= 2
        raise AssertionError("unreachable")  # pragma: no cover

    def pages(self, route: str, params: dict[str, Any] | None = None) -> Iterator[Any]:
        """Each element of the collection ``route``, page after page."""
        page, last = 1, 1
        while page <= last:
            found, headers = self.get(route, {**(params or {}), "per_page": PER_PAGE, "page": page})
            if not isinstance(found, list):
                raise WordPressError(f"GET {route}: the answer is not a list")
            yield from found
            try:
                last = int(headers.get("X-WP-TotalPages") or 1)
            except ValueError:
                raise WordPressError(f"GET {route}: X-WP-TotalPages is not a number") from None
            page += 1

    # Discovery ---------------------------------------------------------------------------

    def index(self) -> dict[str, Any]:
        found, _ = self.get("/")
        if not isinstance(found, dict) or "wp/v2" not in found.get("namespaces", []):
            raise WordPressError("GET /wp-json/: not WordPress's REST API (no wp/v2)")
        return found

    def post_types(self) -> list[PostType]:
        return [
            PostType(
                name, base, tuple(t for t in data.get("taxonomies") or [] if isinstance(t, str))
            )
            for name, base, data in self._described("/wp/v2/types", INTERNAL_TYPES)
            if data.get("viewable", True)
        ]

    def taxonomies(self) -> list[Taxonomy]:
        return [
            Taxonomy(name, base)
            for name, base, data in self._described("/wp/v2/taxonomies", INTERNAL_TAXONOMIES)
            if (data.get("visibility") or {}).get("public", True)
        ]

    def _described(
        self, route: str, internal: frozenset[str]
    ) -> Iterator[tuple[str, str, dict[str, Any]]]:
        """Each (name, REST base, description) WordPress lists at ``route`` (its types
        or taxonomies), but the ``internal`` ones and those with no route."""
        found, _ = self.get(route, {"context": self.context})
        for name, data in sorted(_dict(found, route).items()):
            if name in internal or not isinstance(data, dict):
                continue
            base = data.get("rest_base")
            if isinstance(base, str) and base:
                yield name, base, data

    # Collections ------------------------------------------------------------------------

    def users(self) -> Iterator[Any]:
        return self.pages("/wp/v2/users", {"context": self.context})

    def terms(self, taxonomy: Taxonomy) -> Iterator[Any]:
        return self.pages(f"/wp/v2/{taxonomy.rest_base}", {"context": self.context})

    def posts(
        self, post_type: PostType, after: datetime | None = None, trash: bool = False
    ) -> Iterator[Any]:
        """The posts of ``post_type`` modified after ``after`` (UTC), oldest change
        first; with ``trash`` (credentials only), those in the trash, which ``any`` leaves
        out (trashing a post changes its date of change)."""
        params = self._shown(orderby="modified", order="asc")
        if trash and self.auth:
            params["status"] = "trash"
        if after is not None:
            # With its offset, WordPress compares it in its own time zone.
            params["modified_after"] = _utc(after)
        return self.pages(f"/wp/v2/{post_type.rest_base}", params)

    def posts_by_id(self, post_type: PostType, ids: list[int]) -> Iterator[Any]:
        params = self._shown()
        for start in range(0, len(ids), PER_PAGE):
            chunk = ids[start : start + PER_PAGE]
            yield from self.pages(
                f"/wp/v2/{post_type.rest_base}",
                {**params, "include": ",".join(map(str, chunk))},
            )

    def total(self, post_type: PostType, changed: Span | None = None) -> int:
        """How many posts of ``post_type`` WordPress shows (``X-WP-Total``): those
        ``ids`` lists (``changed``: of those, the ones last changed within it)."""
        params = self._shown(_fields="id", per_page=1, **_within(changed))
        route = f"/wp/v2/{post_type.rest_base}"
        _, headers = self.get(route, params)
        try:
            return int(headers.get("X-WP-Total") or 0)
        except ValueError:
            raise WordPressError(f"GET {route}: X-WP-Total is not a number") from None

    def ids(self, post_type: PostType, changed: Span | None = None) -> Iterator[int]:
        """Every id of ``post_type`` WordPress shows (trashed posts are not among them;
        ``changed``: of those, the ones last changed within it)."""
        params = self._shown(_fields="id", **_within(changed))
        for item in self.pages(f"/wp/v2/{post_type.rest_base}", params):
            if isinstance(item, dict) and isinstance(item.get("id"), int):
                yield item["id"]

    def _shown(self, **more: Any) -> dict[str, Any]:
        """The parameters of a collection of posts: every status but the trash with
        credentials (``any``), what visitors see without; and ``more``."""
        params: dict[str, Any] = {"context": self.context}
        if self.auth:
            params["status"] = "any"
        return {**params, **more}

    def media(self, parents: list[int], ids: list[int]) -> Iterator[Any]:
        """The attachments of posts ``parents``, and those of ``ids``."""
        for key, values in (("parent", parents), ("include", ids)):
            for start in range(0, len(values), PER_PAGE):
                chunk = values[start : start + PER_PAGE]
                yield from self.pages(
                    "/wp/v2/media",
                    {"context": self.context, key: ",".join(map(str, chunk))},
                )


# A span of dates of change, whole seconds, both ends included (UTC).
Span = tuple[datetime, datetime]


def _within(span: Span | None) -> dict[str, str]:
    """WordPress's parameters for ``span``: it takes later and earlier only, to the
    second, so a second outside each end."""
    if span is None:
        return {}
    first, last = span
    return {
        "modified_after": _utc(first - timedelta(seconds=1)),
        "modified_before": _utc(last + timedelta(seconds=1)),
    }


def _utc(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _dict(found: Any, route: str) -> dict[str, Any]:
    if not isinstance(found, dict):
        raise WordPressError(f"GET {route}: the answer is not an object")
    return found


def _date_header(value: str | None) -> datetime | None:
    if not value:
        return None
    try:
        return parsedate_to_datetime(value).astimezone(UTC)
    except (TypeError, ValueError):
        return None


def _message(answer: Any) -> str:
    """WordPress's own words for an error (``{"code", "message"}``), if it gave them."""
    try:
        found = answer.json()
    except ValueError:
        return ""
    if isinstance(found, dict) and isinstance(found.get("message"), str):
        return f": {found['message'][:300]}"
    return ""


# Records --------------------------------------------------------------------------------


def channel(index: dict[str, Any]) -> wxr.Channel:
    home = str(index.get("home") or index.get("url") or "")
    return wxr.Channel(
        title=str(index.get("name") or ""),
        link=home,
        base_site_url=str(index.get("url") or home),
        base_blog_url=home,
    )


def author(user: Any) -> wxr.WpAuthor:
    """A user as an export lists it: by its login (with credentials; else its slug,
    which WordPress makes of the login)."""
    login = user.get("username") or user["slug"]
    if not isinstance(login, str) or not login:
        raise ValueError("no login")
    return wxr.WpAuthor(
        login=login, display_name=str(user.get("name") or login), author_id=user["id"]
    )


def term(taxonomy: str, found: Any, slugs: dict[int, str]) -> wxr.WpTerm:
    """A term as an export lists it (its parent by slug: ``slugs``, id -> slug)."""
    slug = found["slug"]
    if not isinstance(slug, str):
        raise ValueError("no slug")
    return wxr.WpTerm(
        taxonomy=taxonomy,
        slug=slug,
        name=str(found.get("name") or slug),
        term_id=found["id"],
        parent_slug=slugs.get(found.get("parent") or 0, ""),
        description=str(found.get("description") or ""),
    )


def item(
    found: Any,
    line: int,
    logins: dict[int, str],
    terms: dict[str, dict[int, tuple[str, str]]],
    taxonomies: dict[str, Taxonomy],
) -> wxr.WpItem:
    """A post as an export has it. ``logins``: user id -> login; ``terms``: taxonomy ->
    id -> (slug, name)."""
    post_id = found["id"]
    if not isinstance(post_id, int):
        raise ValueError("no id")
    kind = found["type"]
    item_terms = []
    for name, by_id in terms.items():
        tax = taxonomies[name]
        for term_id in found.get(tax.rest_base) or []:
            if term_id in by_id:
                slug, term_name = by_id[term_id]
                item_terms.append(wxr.ItemTerm(taxonomy=name, slug=slug, name=term_name))
    meta = {}
    featured = found.get("featured_media")
    if isinstance(featured, int) and featured:
        meta["_thumbnail_id"] = str(featured)
    return wxr.WpItem(
        line=line,
        title=_text(found.get("title")),
        link=str(found.get("link") or ""),
        guid=_text(found.get("guid")),
        creator=logins.get(found.get("author") or 0, ""),
        content=_text(found.get("content")),
        post_id=post_id,
        post_date=_date(found.get("date")),
        post_date_gmt=_date(found.get("date_gmt")),
        post_modified=_date(found.get("modified")),
        post_modified_gmt=_date(found.get("modified_gmt")),
        post_name=str(found.get("slug") or ""),
        status=str(found["status"]),
        post_parent=int(found.get("parent") or 0),
        post_type=str(kind),
        password=str(found.get("password") or "") or _protected(found),
        terms=item_terms,
        meta=meta,
    )


def attachment(found: Any, line: int) -> wxr.WpItem:
    url = found.get("source_url")
    if not isinstance(url, str) or not isinstance(found["id"], int):
        raise ValueError("no source_url")
    return wxr.WpItem(
        line=line,
        title=_text(found.get("title")),
        link=str(found.get("link") or ""),
        guid=_text(found.get("guid")),
        post_id=found["id"],
        status=str(found.get("status") or "inherit"),
        post_parent=int(found.get("post") or 0),
        post_type="attachment",
        attachment_url=url,
    )


def _protected(found: dict[str, Any]) -> str:
    content = found.get("content")
    if isinstance(content, dict) and content.get("protected") is True:
        return UNKNOWN_PASSWORD
    return ""


def _text(value: Any) -> str:
    """A field WordPress gives raw (``edit``) or rendered (``view``: entities decoded)."""
    if isinstance(value, dict):
        if isinstance(value.get("raw"), str):
            return str(value["raw"])
        return html.unescape(str(value.get("rendered") or ""))
    return str(value or "")


def _date(value: Any) -> str:
    """A REST date (``2026-01-02T03:04:05``) as an export writes it; none: ``0000-…``."""
    if not isinstance(value, str) or len(value) < 19:
        return NO_DATE
    return value[:10] + " " + value[11:19]
