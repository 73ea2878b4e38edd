"""Admin API views: thin adapters from validated requests to the service functions."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from pyramid.request import Request
from pyramid.response import Response
from pyramid.view import view_config
from sqlalchemy import Select, func, select
from sqlalchemy.orm import Session

from ..content.links import Links
from ..errors import FieldProblem, Gone, NotFound, ServiceError
from ..models import Author, Post, PostType, Taxonomy, Term, post_terms
from ..models import site as site_model
from ..models.meta import utcnow
from ..services import authors, posts, site, terms, types
from ..services.common import parse_datetime
from ..sitemaps.changes import Waiting
from ..sitemaps.explain import KINDS
from ..sitemaps.journal import CursorRefused, read_changes
from . import representations as rep
from .auth import ADMIN

api_view = functools.partial(view_config, permission=ADMIN, openapi=True, renderer="json")


def body(request: Request) -> dict[str, Any]:
    return dict(request.openapi.body or {})


def path_param(request: Request, name: str) -> Any:
    return request.openapi.parameters.path[name]


def query(request: Request) -> dict[str, Any]:
    return dict(request.openapi.parameters.query)


def links(request: Request) -> Links:
    return Links(request.dbsession, site_model.site_url_of(request.dbsession))


def created(request: Request, payload: dict[str, Any], location: str) -> dict[str, Any]:
    request.response.status = 201
    request.response.location = request.application_url + location
    return payload


def no_content() -> Response:
    return Response(status=204)


def paginate(
    session: Session,
    statement: Select[Any],
    params: dict[str, Any],
    represent: Callable[[Any], dict[str, Any]],
) -> dict[str, Any]:
    page, per_page = params.get("page") or 1, params.get("per_page") or 50
    total = session.scalar(select(func.count()).select_from(statement.order_by(None).subquery()))
    rows = session.scalars(statement.limit(per_page).offset((page - 1) * per_page))
    return {
        "items": [represent(row) for row in rows],
        "page": page,
        "per_page": per_page,
        "total": total or 0,
    }


# Posts ---------------------------------------------------------------------------------


@api_view(route_name="api.posts", request_method="GET")
def list_posts(request: Request) -> dict[str, Any]:
    params = query(request)
    statement = select(Post).order_by(Post.id.desc())
    if "type" in params:
        statement = statement.where(Post.type == params["type"])
    if "status" in params:
        statement = statement.where(Post.status == params["status"])
    if "author" in params:
        statement = statement.where(Post.author_id == params["author"])
    if "parent" in params:
        statement = statement.where(Post.parent_id == params["parent"])
    if "term" in params:
        linked = select(post_terms.c.post_id).where(post_terms.c.term_id == params["term"])
        statement = statement.where(Post.id.in_(linked))
    if "modified_since" in params:
        # A well-formed date-time outside the range every layer can store: 422, as in a
        # body (the document's format accepts it, so it is not a malformed request).
        since = parse_datetime(params["modified_since"], "modified_since")
        statement = statement.where(Post.modified_at >= since)
    link = links(request)
    return paginate(request.dbsession, statement, params, lambda p: rep.post_dict(p, link))


@api_view(route_name="api.posts", request_method="POST")
def create_post(request: Request) -> dict[str, Any]:
    post = posts.create_post(request.dbsession, body(request))
    return created(request, rep.post_dict(post, links(request)), f"/api/posts/{post.id}")


@api_view(route_name="api.post", request_method="GET")
def get_post(request: Request) -> dict[str, Any]:
    post = posts.get_post(request.dbsession, path_param(request, "id"))
    return rep.post_dict(post, links(request))


@api_view(route_name="api.post", request_method="PATCH")
def update_post(request: Request) -> dict[str, Any]:
    post = posts.get_post(request.dbsession, path_param(request, "id"), for_update=True)
    posts.update_post(request.dbsession, post, body(request))
    return rep.post_dict(post, links(request))


@api_view(route_name="api.post", request_method="DELETE")
def delete_post(request: Request) -> Response:
    posts.delete_post(
        request.dbsession,
        posts.get_post(request.dbsession, path_param(request, "id"), for_delete=True),
    )
    return no_content()


# Post types ----------------------------------------------------------------------------


@api_view(route_name="api.post_types", request_method="GET")
def list_post_types(request: Request) -> dict[str, Any]:
    statement = select(PostType).order_by(PostType.name)
    return paginate(request.dbsession, statement, query(request), rep.post_type_dict)


@api_view(route_name="api.post_types", request_method="POST")
def create_post_type(request: Request) -> dict[str, Any]:
    post_type = types.create_post_type(request.dbsession, body(request))
    return created(request, rep.post_type_dict(post_type), f"/api/post-types/{post_type.name}")


@api_view(route_name="api.post_type", request_method="GET")
def get_post_type(request: Request) -> dict[str, Any]:
    return rep.post_type_dict(types.get_post_type(request.dbsession, path_param(request, "name")))


@api_view(route_name="api.post_type", request_method="PATCH")
def update_post_type(request: Request) -> dict[str, Any]:
    post_type = types.get_post_type(request.dbsession, path_param(request, "name"), for_update=True)
    return rep.post_type_dict(types.update_post_type(request.dbsession, post_type, body(request)))


@api_view(route_name="api.post_type", request_method="DELETE")
def delete_post_type(request: Request) -> Response:
    post_type = types.get_post_type(request.dbsession, path_param(request, "name"), for_delete=True)
    types.delete_post_type(request.dbsession, post_type)
    return no_content()


# Taxonomies ----------------------------------------------------------------------------


@api_view(route_name="api.taxonomies", request_method="GET")
def list_taxonomies(request: Request) -> dict[str, Any]:
    statement = select(Taxonomy).order_by(Taxonomy.name)
    return paginate(request.dbsession, statement, query(request), rep.taxonomy_dict)


@api_view(route_name="api.taxonomies", request_method="POST")
def create_taxonomy(request: Request) -> dict[str, Any]:
    taxonomy = types.create_taxonomy(request.dbsession, body(request))
    return created(request, rep.taxonomy_dict(taxonomy), f"/api/taxonomies/{taxonomy.name}")


@api_view(route_name="api.taxonomy", request_method="GET")
def get_taxonomy(request: Request) -> dict[str, Any]:
    return rep.taxonomy_dict(types.get_taxonomy(request.dbsession, path_param(request, "name")))


@api_view(route_name="api.taxonomy", request_method="PATCH")
def update_taxonomy(request: Request) -> dict[str, Any]:
    taxonomy = types.get_taxonomy(request.dbsession, path_param(request, "name"), for_update=True)
    return rep.taxonomy_dict(types.update_taxonomy(request.dbsession, taxonomy, body(request)))


@api_view(route_name="api.taxonomy", request_method="DELETE")
def delete_taxonomy(request: Request) -> Response:
    taxonomy = types.get_taxonomy(request.dbsession, path_param(request, "name"), for_delete=True)
    types.delete_taxonomy(request.dbsession, taxonomy)
    return no_content()


# Authors -------------------------------------------------------------------------------


@api_view(route_name="api.authors", request_method="GET")
def list_authors(request: Request) -> dict[str, Any]:
    link = links(request)
    statement = select(Author).order_by(Author.id)
    return paginate(
        request.dbsession, statement, query(request), lambda a: rep.author_dict(a, link)
    )


@api_view(route_name="api.authors", request_method="POST")
def create_author(request: Request) -> dict[str, Any]:
    author = authors.create_author(request.dbsession, body(request))
    return created(request, rep.author_dict(author, links(request)), f"/api/authors/{author.id}")


@api_view(route_name="api.author", request_method="GET")
def get_author(request: Request) -> dict[str, Any]:
    author = authors.get_author(request.dbsession, path_param(request, "id"))
    return rep.author_dict(author, links(request))


@api_view(route_name="api.author", request_method="PATCH")
def update_author(request: Request) -> dict[str, Any]:
    author = authors.get_author(request.dbsession, path_param(request, "id"), for_update=True)
    authors.update_author(request.dbsession, author, body(request))
    return rep.author_dict(author, links(request))


@api_view(route_name="api.author", request_method="DELETE")
def delete_author(request: Request) -> Response:
    author = authors.get_author(request.dbsession, path_param(request, "id"), for_delete=True)
    authors.delete_author(request.dbsession, author)
    return no_content()


# Terms ---------------------------------------------------------------------------------


@api_view(route_name="api.terms", request_method="GET")
def list_terms(request: Request) -> dict[str, Any]:
    params = query(request)
    statement = select(Term).order_by(Term.id)
    if "taxonomy" in params:
        statement = statement.where(Term.taxonomy == params["taxonomy"])
    if "parent" in params:
        statement = statement.where(Term.parent_id == params["parent"])
    link = links(request)
    return paginate(request.dbsession, statement, params, lambda t: rep.term_dict(t, link))


@api_view(route_name="api.terms", request_method="POST")
def create_term(request: Request) -> dict[str, Any]:
    term = terms.create_term(request.dbsession, body(request))
    return created(request, rep.term_dict(term, links(request)), f"/api/terms/{term.id}")


@api_view(route_name="api.term", request_method="GET")
def get_term(request: Request) -> dict[str, Any]:
    return rep.term_dict(
        terms.get_term(request.dbsession, path_param(request, "id")), links(request)
    )


@api_view(route_name="api.term", request_method="PATCH")
def update_term(request: Request) -> dict[str, Any]:
    term = terms.get_term(request.dbsession, path_param(request, "id"), for_update=True)
    terms.update_term(request.dbsession, term, body(request))
    return rep.term_dict(term, links(request))


@api_view(route_name="api.term", request_method="DELETE")
def delete_term(request: Request) -> Response:
    terms.delete_term(
        request.dbsession,
        terms.get_term(request.dbsession, path_param(request, "id"), for_delete=True),
    )
    return no_content()


# Site settings -------------------------------------------------------------------------


def _settings_payload(request: Request) -> dict[str, Any]:
    session = request.dbsession
    settings = site_model.get_settings(session)
    configured = site_model.configured_site_url(session)
    return rep.settings_dict(settings, site_model.effective_site_url(settings, configured))


@api_view(route_name="api.settings", request_method="GET")
def get_settings(request: Request) -> dict[str, Any]:
    return _settings_payload(request)


@api_view(route_name="api.settings", request_method="PATCH")
def update_settings(request: Request) -> dict[str, Any]:
    site.update_settings(request.dbsession, body(request))
    return _settings_payload(request)


# Explain -------------------------------------------------------------------------------


@api_view(route_name="api.explain", request_method="GET")
def explain(request: Request) -> dict[str, Any]:
    """What ``sitemap-server explain`` prints with ``--json``."""
    params = query(request)
    given = [name for name in ("url", *KINDS) if name in params]
    if len(given) != 1:
        message = "give exactly one of url, post, term or author"
        raise ServiceError(message, [FieldProblem(name, message) for name in given or ["url"]])
    if given[0] == "url":
        explanation = request.site.engine.explain_url(request.dbsession, params["url"])
    else:
        explanation = request.site.engine.explain_object(
            request.dbsession, given[0], params[given[0]]
        )
    return explanation.as_dict()


# The sitemaps' freshness ----------------------------------------------------------------


@api_view(route_name="api.sitemaps_status", request_method="GET")
def sitemaps_status(request: Request) -> dict[str, Any]:
    """Whether what was written is served yet (a write's ``Sitemap-Change`` header)."""
    session = request.dbsession
    waiting = Waiting.read(session)
    age = None if waiting.oldest is None else (utcnow() - waiting.oldest).total_seconds()
    found: dict[str, Any] = {
        "waiting": waiting.count,
        "oldest_waiting_seconds": None if age is None else round(max(age, 0.0), 3),
        "max_staleness_seconds": request.registry.settings["sitemap_server.max_staleness"],
    }
    change = query(request).get("change")
    if change is not None:
        newest = Waiting.newest_number(session)
        if change > newest:
            raise NotFound(
                f"change {change} was never recorded (the newest is {newest})",
                [FieldProblem("change", f"no change {change} (the newest is {newest})")],
            )
        found["change"] = change
        found["applied"] = Waiting.applied(session, change)
    return found


# The change feed (S-705) ------------------------------------------------------------------


@api_view(route_name="api.changes", request_method="GET")
def list_changes(request: Request) -> dict[str, Any]:
    """The listed URLs added, updated and removed since a cursor (``sitemaps/journal.py``)."""
    params = query(request)
    # As a sitemap request would: what has waited longer than max_staleness is applied
    # first (when no worker does it), so the feed tells what the sitemaps list.
    request.site.reader.state()
    session = request.dbsession
    since = params.get("since", "0")
    try:
        changes, cursor, more, private = read_changes(
            session, since, params.get("limit") or 1000, site_model.site_url_of(session)
        )
    except CursorRefused as refused:
        raise Gone(str(refused), [FieldProblem("since", str(refused))]) from None
    return {"changes": changes, "next": str(cursor), "more": more, "private": private}
