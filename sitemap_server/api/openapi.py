"""Admin API requests validated against the OpenAPI document.

A view registered with ``openapi=True`` runs only after its request (path, query string,
body) matched the operation in the document; the view reads the values from
``request.openapi`` (``.body``, ``.parameters.path``, ``.parameters.query``). Problems
become 4xx problem details (see ``problems.py``).

Each operation is compiled once, when the application starts: its parameters (all of
them scalars in the path or the query string) and its JSON body are checked by compiled
JSON Schema validators (``schema.problems_checker``, as import lines are). Integers are
ASCII digits, and a parameter given twice is refused.

The tests (``sitemap_server.api.validate_responses``) also check the assembled document
against the OpenAPI 3.1 specification (openapi-spec-validator) and every response against
the document (openapi-core, ``response_problems``). A server does neither: those two
libraries would add ~17 MB to every process (the application loaded in 117.5 MB with
them, 100 MB without).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from pyramid.config import Configurator
from pyramid.config.views import ViewDeriverInfo
from pyramid.request import Request
from pyramid.response import Response

from ..errors import FieldProblem
from ..services.decoding import character_problem, decode_json, text_problems
from .schema import FORMATS, inline_refs, problems_checker, type_names

# The charset parameters a JSON body may name: JSON is UTF-8 (RFC 8259, section 8.1).
UTF8_NAMES = ("utf-8", "utf8")


class RequestInvalid(Exception):
    """The request does not match the OpenAPI document."""

    def __init__(self, status: int, detail: str, errors: list[FieldProblem]) -> None:
        super().__init__(detail)
        self.status = status
        self.detail = detail
        self.errors = errors


def operation_method(request: Request) -> str:
    """The document's name of the request's method: HEAD is answered as GET (RFC 9110)."""
    return "get" if request.method == "HEAD" else request.method.lower()


# An integer parameter as the URL writes it (ASCII digits; int() would also take " 1",
# "1_000" and other scripts' digits).
INTEGER = re.compile(r"-?[0-9]+")
# The integers a parameter may be: what a database's 64-bit column holds. Longer digit
# strings are refused before int() (Python refuses to convert more than 4,300 digits).
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
INT64_DIGITS = len(str(INT64_MAX))


@dataclass(frozen=True)
class Parameter:
    name: str
    location: str  # "path" or "query"
    required: bool
    integer: bool
    problems: Callable[[Any], list[FieldProblem]]


@dataclass(frozen=True)
class Operation:
    """One operation of the document, ready to check requests."""

    parameters: list[Parameter]
    query_names: frozenset[str]
    # Media types the body may have, and the check of a JSON one (None: no JSON body).
    media_types: frozenset[str] = frozenset()
    body: Callable[[Any], list[FieldProblem]] | None = None
    body_required: bool = False

    @classmethod
    def compile(cls, shared: list[dict[str, Any]], operation: dict[str, Any]) -> Operation:
        declared = {(p["in"], p["name"]): p for p in [*shared, *operation.get("parameters", [])]}
        parameters = [
            Parameter(
                name=p["name"],
                location=p["in"],
                required=p.get("required", False),
                integer=p["schema"].get("type") == "integer",
                problems=problems_checker(p["schema"]),
            )
            for p in declared.values()
        ]
        query_names = frozenset(p.name for p in parameters if p.location == "query")
        body = operation.get("requestBody")
        if body is None:
            return cls(parameters, query_names)
        content = body["content"]
        schema = content.get("application/json", {}).get("schema")
        return cls(
            parameters,
            query_names,
            media_types=frozenset(content),
            body=problems_checker(schema) if schema is not None else None,
            body_required=body.get("required", False),
        )


@dataclass
class Parameters:
    path: dict[str, Any] = field(default_factory=dict)
    query: dict[str, Any] = field(default_factory=dict)


@dataclass
class ValidatedRequest:
    """What a view reads as ``request.openapi``."""

    parameters: Parameters
    body: Any = None


class _OpenAPIRequest:
    """What openapi-core needs to know about a Pyramid request to check its response."""

    def __init__(self, request: Request) -> None:
        from openapi_core.validation.request.datatypes import RequestParameters

        self.request = request
        self.parameters = RequestParameters(
            path=request.matchdict or {},
            query=request.GET,
            header=request.headers,
            cookie=request.cookies,
        )
        self.host_url = request.host_url
        self.path = request.path
        self.path_pattern = request.script_name + request.matched_route.pattern
        self.method = operation_method(request)
        # A streamed body (POST /api/import) is gone once the view has read it, and
        # checking a response needs only the operation, not what was sent.
        self.body = b""
        self.content_type = request.content_type
        self.mimetype = request.content_type


class _OpenAPIResponse:
    def __init__(self, response: Response) -> None:
        self.data = response.body
        self.status_code = response.status_code
        self.content_type = response.content_type
        self.mimetype = response.content_type
        self.headers = response.headers


@dataclass
class OpenAPI:
    """The assembled document and the checks made from it."""

    spec: dict[str, Any]

    def __post_init__(self) -> None:
        # Checked with every $ref of the operations replaced by what it names (the served
        # document keeps them).
        self.inlined = {**self.spec, "paths": inline_refs(self.spec, self.spec["paths"])}
        self.operations = {
            (path, method): Operation.compile(item.get("parameters", []), operation)
            for path, item in self.inlined["paths"].items()
            for method, operation in item.items()
            if method != "parameters"
        }

    def check_document(self) -> None:
        """Raise if the document (the core's and the plugins' parts) is not valid OpenAPI 3.1."""
        from openapi_spec_validator import validate

        validate(self.spec)

    @cached_property
    def response_validator(self) -> Any:
        from jsonschema_path import SchemaPath
        from openapi_core import V31ResponseValidator

        deserializers: dict[str, Callable[[bytes], Any]] = {"application/problem+json": json.loads}
        return V31ResponseValidator(
            SchemaPath.from_dict(self.inlined),
            extra_format_validators={name: check for name, (check, _) in FORMATS.items()},
            extra_media_type_deserializers=deserializers,
        )

    def validate_request(self, request: Request) -> Any:
        operation = self.operations[(request.matched_route.pattern, operation_method(request))]
        unknown = [name for name in request.GET if name not in operation.query_names]
        if unknown:
            raise RequestInvalid(
                400,
                f"unknown query parameter {unknown[0]!r}",
                [FieldProblem(name, "is not a known query parameter") for name in unknown],
            )
        # Path and query parameters are text too; the URL is UTF-8 (decoding_tween).
        _refuse(
            FieldProblem(name, message)
            for name, value in [*(request.matchdict or {}).items(), *request.GET.items()]
            for message in [character_problem(name) or character_problem(value)]
            if message
        )
        parsed = None
        if request.body and "json" in (request.content_type or ""):
            if request.charset.lower() not in UTF8_NAMES:
                raise RequestInvalid(
                    415, f"send JSON as UTF-8 (RFC 8259), not charset={request.charset}", []
                )
            # Decoded strictly (services/decoding.py): UTF-16, lone surrogates, NUL and
            # nesting too deep for Python are 400s here.
            try:
                parsed = decode_json(request.body)
            except ValueError as exc:
                raise RequestInvalid(400, f"the body {exc}", []) from None
            _refuse(text_problems(parsed))
        validated = ValidatedRequest(_parameters(operation, request))
        if operation.media_types and (request.body or operation.body_required):
            validated.body = _body(operation, request, parsed)
        return validated

    def response_problems(self, request: Request, response: Response) -> list[str]:
        """What is wrong with a response to a documented operation (tests check them all)."""
        if (request.matched_route.pattern, operation_method(request)) not in self.operations:
            return []
        errors = self.response_validator.iter_errors(
            _OpenAPIRequest(request), _OpenAPIResponse(response)
        )
        return [f"{e}: {e.__cause__}" if e.__cause__ else str(e) for e in errors]


def _parameters(operation: Operation, request: Request) -> Parameters:
    found = Parameters()
    problems: list[FieldProblem] = []
    for parameter in operation.parameters:
        if parameter.location == "path":
            values = (
                [request.matchdict[parameter.name]]
                if parameter.name in (request.matchdict or {})
                else []
            )
        else:
            values = request.GET.getall(parameter.name)
        if not values:
            if parameter.required:
                problems.append(FieldProblem(parameter.name, "is required"))
            continue
        if len(values) > 1:
            problems.append(FieldProblem(parameter.name, "must be given only once"))
            continue
        value: Any = values[0]
        if parameter.integer:
            if not INTEGER.fullmatch(value):
                problems.append(FieldProblem(parameter.name, f"must be {type_names('integer')}"))
                continue
            value = _integer(value)
        wrong = [p.message for p in parameter.problems(value)]
        if not wrong and parameter.integer and not INT64_MIN <= value <= INT64_MAX:
            wrong = [_int64_problem(value)]  # a parameter the document leaves unbounded
        problems.extend(FieldProblem(parameter.name, message) for message in wrong)
        getattr(found, parameter.location)[parameter.name] = value
    _refuse(problems)
    return found


def _integer(digits: str) -> int:
    """The integer ``digits`` (``INTEGER``) write; one past the 64-bit range, in its
    direction, for one too long to be in it, whatever its length."""
    negative = digits.startswith("-")
    significant = digits.lstrip("-").lstrip("0") or "0"
    if len(significant) > INT64_DIGITS:
        return INT64_MIN - 1 if negative else INT64_MAX + 1
    return -int(significant) if negative else int(significant)


def _int64_problem(value: int) -> str:
    return f"must be at least {INT64_MIN}" if value < 0 else f"must be at most {INT64_MAX}"


def _body(operation: Operation, request: Request, parsed: Any) -> Any:
    """The body ``validate_request`` decoded (``parsed``), checked against the operation."""
    if not request.body:
        raise RequestInvalid(400, "a JSON body is required", [])
    if request.content_type not in operation.media_types:
        media = " or ".join(sorted(operation.media_types))
        raise RequestInvalid(415, f"send the body as {media}", [])
    if operation.body is None or request.content_type != "application/json":
        return None
    _refuse(operation.body(parsed))
    return parsed


def _refuse(problems: Iterable[FieldProblem]) -> None:
    """A 400 naming every field in ``problems``, if there are any."""
    found = list(problems)
    if found:
        detail = "; ".join(f"{p.field or 'body'}: {p.message}" for p in found)
        raise RequestInvalid(400, detail[:300], found)


def openapi_view(view: Any, info: ViewDeriverInfo) -> Any:
    """View deriver: ``openapi=True`` validates the request before the view runs."""
    if not info.options.get("openapi"):
        return view

    def validated_view(context: Any, request: Request) -> Any:
        request.openapi = request.site.openapi.validate_request(request)
        return view(context, request)

    return validated_view


openapi_view.options = ("openapi",)  # type: ignore[attr-defined]


def includeme(config: Configurator) -> None:
    config.add_view_deriver(openapi_view)
    config.include(".decoding")  # a URL that is not UTF-8 is a 400
