"""Admin API requests validated against the OpenAPI document by openapi-core.

A view registered with ``openapi=True`` runs only after its request (path, query string,
headers, body) matched the operation in the document; the view reads the unmarshalled
values from ``request.openapi``. Problems become 4xx problem details (see ``problems.py``).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from jsonschema_path import SchemaPath
from openapi_core import V31RequestUnmarshaller, V31ResponseValidator
from openapi_core.validation.request.datatypes import RequestParameters
from openapi_spec_validator import validate as validate_spec
from pyramid.config import Configurator
from pyramid.config.views import ViewDeriverInfo
from pyramid.request import Request
from pyramid.response import Response

from ..services.decoding import character_problem, decode_json, text_problems
from ..services.errors import FieldProblem
from .schema import FORMATS, inline_refs, schema_problems, type_names

OPENAPI = "sitemap_server.openapi"
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


class _OpenAPIRequest:
    """What openapi-core needs to know about a Pyramid request."""

    def __init__(self, request: Request, with_body: bool = True) -> None:
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
        self.body = request.body if with_body else b""
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
    """The assembled document and the validators made from it."""

    spec: dict[str, Any]

    def __post_init__(self) -> None:
        validate_spec(self.spec)
        # Validated with every $ref of the operations replaced by what it names (the served
        # document keeps them): openapi-core otherwise resolves about a hundred references
        # per request, a fifth of a PATCH (p50 6.4 ms before, 5.0 ms after: medians of five
        # interleaved runs of 200 PATCHes through WebTest at 100,000 posts on SQLite).
        inlined = {**self.spec, "paths": inline_refs(self.spec, self.spec["paths"])}
        schema_path = SchemaPath.from_dict(inlined)
        formats = {name: check for name, (check, _) in FORMATS.items()}
        deserializers: dict[str, Callable[[bytes], Any]] = {"application/problem+json": json.loads}
        self.request_unmarshaller = V31RequestUnmarshaller(
            schema_path, extra_format_validators=formats
        )
        self.response_validator = V31ResponseValidator(
            schema_path,
            extra_format_validators=formats,
            extra_media_type_deserializers=deserializers,
        )
        self.query_names = self._declared_query_parameters()

    def _declared_query_parameters(self) -> dict[tuple[str, str], set[str]]:
        """(path, method) -> names of its query parameters, to refuse unknown ones."""

        def resolve(param: dict[str, Any]) -> dict[str, Any]:
            if "$ref" in param:
                name = param["$ref"].rsplit("/", 1)[-1]
                return self.spec["components"]["parameters"][name]
            return param

        names: dict[tuple[str, str], set[str]] = {}
        for path, item in self.spec["paths"].items():
            shared = [resolve(p) for p in item.get("parameters", [])]
            for method, operation in item.items():
                if method == "parameters":
                    continue
                params = shared + [resolve(p) for p in operation.get("parameters", [])]
                names[(path, method)] = {p["name"] for p in params if p["in"] == "query"}
        return names

    def validate_request(self, request: Request) -> Any:
        pattern = request.matched_route.pattern
        known = self.query_names.get((pattern, operation_method(request)), set())
        unknown = [name for name in request.GET if name not in known]
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
        if request.body and "json" in (request.content_type or ""):
            if request.charset.lower() not in UTF8_NAMES:
                raise RequestInvalid(
                    415, f"send JSON as UTF-8 (RFC 8259), not charset={request.charset}", []
                )
            # Decoded here first, strictly (services/decoding.py): openapi-core would take
            # UTF-16, lone surrogates and NUL, and lets a RecursionError through.
            try:
                parsed = decode_json(request.body)
            except ValueError as exc:
                raise RequestInvalid(400, f"the body {exc}", []) from None
            _refuse(text_problems(parsed))
        result = self.request_unmarshaller.unmarshal(_OpenAPIRequest(request))
        if result.errors:
            raise _translate(result.errors)
        return result

    def response_problems(self, request: Request, response: Response) -> list[str]:
        """What is wrong with a response to a documented operation (tests check them all)."""
        if (request.matched_route.pattern, operation_method(request)) not in self.query_names:
            return []
        errors = self.response_validator.iter_errors(
            _OpenAPIRequest(request, with_body=False), _OpenAPIResponse(response)
        )
        return [f"{e}: {e.__cause__}" if e.__cause__ else str(e) for e in errors]


def _refuse(problems: Iterable[FieldProblem]) -> None:
    """A 400 naming every field in ``problems``, if there are any."""
    found = list(problems)
    if found:
        detail = "; ".join(f"{p.field or 'body'}: {p.message}" for p in found)
        raise RequestInvalid(400, detail[:300], found)


def _translate(errors: Iterable[Exception]) -> RequestInvalid:
    problems: list[FieldProblem] = []
    status = 400
    details: list[str] = []
    for error in errors:
        cause = error.__cause__
        cause_name = type(cause).__name__
        if cause_name == "MediaTypeNotFound":
            return RequestInvalid(415, "send the body as application/json", [])
        if cause_name == "MediaTypeDeserializeError":
            return RequestInvalid(400, "the body is not valid JSON", [])
        schema_errors = getattr(cause, "schema_errors", None)
        name = getattr(error, "name", None)
        if schema_errors:
            found = schema_problems(schema_errors)
            if name:  # a parameter: its errors have no path of their own
                found = [FieldProblem(name, p.message) for p in found]
            problems.extend(found)
        elif type(error).__name__ == "MissingRequestBody":
            details.append("a JSON body is required")
        elif name and "Missing" in type(error).__name__:
            problems.append(FieldProblem(name, "is required"))
        elif name and cause_name == "CastError":
            problems.append(FieldProblem(name, f"must be {type_names(getattr(cause, 'type', ''))}"))
        elif name:
            problems.append(FieldProblem(name, f"is invalid: {cause}"[:300]))
        else:
            details.append(str(error)[:300])
    detail = "; ".join(
        details + [f"{p.field}: {p.message}" if p.field else p.message for p in problems]
    )
    return RequestInvalid(status, detail or "the request does not match the API", problems)


def openapi_view(view: Any, info: ViewDeriverInfo) -> Any:
    """View deriver: ``openapi=True`` validates the request before the view runs."""
    if not info.options.get("openapi"):
        return view

    def validated_view(context: Any, request: Request) -> Any:
        request.openapi = request.registry[OPENAPI].validate_request(request)
        return view(context, request)

    return validated_view


openapi_view.options = ("openapi",)  # type: ignore[attr-defined]


def includeme(config: Configurator) -> None:
    config.add_view_deriver(openapi_view)
    config.include(".decoding")  # a URL that is not UTF-8 is a 400
