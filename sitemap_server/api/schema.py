"""The OpenAPI document: loading it, its formats, and errors that name the field.

The document in ``openapi.yaml`` is the single description of what the admin API accepts.
Requests are validated against it by openapi-core (see ``openapi.py``); import lines are
validated against its ``ImportLine`` schema by jsonschema. Both report problems through
``schema_problems`` so every error reads the same.
"""

from __future__ import annotations

import copy
import re
import zoneinfo
from collections.abc import Callable, Iterable, Iterator
from datetime import datetime
from functools import cache
from importlib.resources import files
from typing import TYPE_CHECKING, Any

import jsonschema_rs
import yaml

from ..content.slugs import SLUG_RULE, is_slug
from ..content.urls import http_url_problem, is_http_url, is_image_url, is_site_path
from ..errors import FieldProblem

if TYPE_CHECKING:
    import jsonschema
    from jsonschema.exceptions import ValidationError

_HOSTNAME = re.compile(
    r"^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$",
    re.I,
)


def _is_aware_datetime(value: object) -> bool:
    """Whether ``value`` reads as a date-time with a UTC offset. Its range is the services'
    rule (``parse_datetime``: a 422 that says it), not the format's."""
    if not isinstance(value, str):
        return True
    try:
        return datetime.fromisoformat(value).tzinfo is not None
    except (ValueError, OverflowError):
        return False


def _is_timezone(value: object) -> bool:
    if not isinstance(value, str):
        return True
    try:
        zoneinfo.ZoneInfo(value)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        return False
    return True


# Every URL of the site starts with it, and a sitemap URL must stay under 2,048 characters.
MAX_SITE_URL_LENGTH = 1000


def _is_site_url(value: object) -> bool:
    if not isinstance(value, str):
        return True
    if len(value) > MAX_SITE_URL_LENGTH or http_url_problem(value) is not None:
        return False
    return "?" not in value and "#" not in value


def _is_hostname(value: object) -> bool:
    return not isinstance(value, str) or bool(_HOSTNAME.match(value))


# format name -> (check, what a failing value should have been)
FORMATS: dict[str, tuple[Callable[[object], bool], str]] = {
    "http-url": (is_http_url, "an absolute http(s) URL"),
    "image-url": (is_image_url, "an absolute http(s) URL or a path starting with /"),
    "site-path": (is_site_path, "a path starting with / (no query string or fragment)"),
    "site-url": (
        _is_site_url,
        "an http(s) URL without query string or fragment, "
        f"at most {MAX_SITE_URL_LENGTH:,} characters",
    ),
    "date-time": (_is_aware_datetime, "an RFC 3339 date-time with a UTC offset"),
    "timezone": (_is_timezone, "an IANA time zone name such as Europe/Paris"),
    "hostname": (_is_hostname, "a host name such as cdn.example.com"),
    "slug": (is_slug, SLUG_RULE),
}


def load_core_spec() -> dict[str, Any]:
    text = files("sitemap_server.api").joinpath("openapi.yaml").read_text(encoding="utf-8")
    return yaml.safe_load(text)


@cache
def core_spec() -> dict[str, Any]:
    return load_core_spec()


def build_spec(extensions: Iterable[dict[str, Any]] = ()) -> dict[str, Any]:
    """The core document with plugins' paths and schemas merged in."""
    spec = copy.deepcopy(core_spec())
    for extension in extensions:
        for section in ("paths",):
            spec.setdefault(section, {}).update(extension.get(section, {}))
        for kind, items in extension.get("components", {}).items():
            spec["components"].setdefault(kind, {}).update(items)
        spec.setdefault("tags", []).extend(extension.get("tags", []))
    return spec


def inline_refs(spec: dict[str, Any], node: Any) -> Any:
    """``node`` with every local ``$ref`` replaced by what it points to.

    Our schemas are not recursive, so this terminates; validators then never chase a
    reference, which makes validation several times faster. Keywords beside a ``$ref``
    constrain the value too (JSON Schema 2020-12): merged into the target when they name
    other keywords, kept beside it under ``allOf`` when they would overwrite one.
    """
    if isinstance(node, dict):
        if "$ref" in node:
            target: Any = spec
            for part in node["$ref"].removeprefix("#/").split("/"):
                target = target[part]
            siblings = {k: inline_refs(spec, v) for k, v in node.items() if k != "$ref"}
            resolved = inline_refs(spec, target)
            if isinstance(resolved, dict) and set(siblings) & (set(resolved) - {"description"}):
                return {"allOf": [resolved], **siblings}
            return {**resolved, **siblings}
        return {k: inline_refs(spec, v) for k, v in node.items()}
    if isinstance(node, list):
        return [inline_refs(spec, v) for v in node]
    return node


def _detailed(schema: dict[str, Any]) -> jsonschema.protocols.Validator:
    import jsonschema

    checker = jsonschema.FormatChecker(formats=())
    for format_name, (check, _) in FORMATS.items():
        checker.checks(format_name)(check)
    validator = jsonschema.validators.extend(jsonschema.Draft202012Validator, {"pattern": _pattern})
    return validator(schema, format_checker=checker)


def _pattern(validator: Any, pattern: str, instance: Any, schema: Any) -> Iterator[Any]:
    """``pattern`` as jsonschema-rs reads it: its ``$`` is the end of the text, where
    Python's ``re`` also lets it match before a final newline (``"pt-BR\n"``). Without
    this, a value refused by the fast validator found no error to name here."""
    import jsonschema

    if not validator.is_type(instance, "string"):
        return
    found = re.search(pattern, instance)
    if found is None or (pattern.endswith("$") and found.end() != len(instance)):
        yield jsonschema.ValidationError(f"{instance!r} does not match {pattern!r}")


def problems_checker(schema: dict[str, Any]) -> Callable[[Any], list[FieldProblem]]:
    """What is wrong with a value for ``schema`` (no ``$ref`` left in it), fast.

    jsonschema-rs answers "is it valid?" in microseconds, which is what a 100,000-line
    import and an API under load need; only a value that fails is checked again by
    jsonschema, whose errors carry the paths and details that ``schema_problems`` turns
    into messages. jsonschema is imported by the first value that fails: a process that
    never meets one does without it (~8 MB).
    """
    detailed = cache(lambda: _detailed(schema))
    fast = jsonschema_rs.validator_for(
        schema,
        formats={name: check for name, (check, _) in FORMATS.items()},
        validate_formats=True,
    )

    def problems(value: Any) -> list[FieldProblem]:
        if fast.is_valid(value):
            return []
        return schema_problems(detailed().iter_errors(value)) or [
            FieldProblem(None, "does not match the schema")
        ]

    return problems


def import_line_validator(spec: dict[str, Any]) -> Callable[[Any], list[FieldProblem]]:
    """What is wrong with the shape of one import line (``ImportLine``)."""
    return problems_checker(inline_refs(spec, spec["components"]["schemas"]["ImportLine"]))


def _path(error: ValidationError) -> str | None:
    parts = [str(p) for p in error.absolute_path]
    return "/".join(parts) if parts else None


def _join(path: str | None, name: str) -> str:
    return f"{path}/{name}" if path else name


def type_names(schema_type: Any) -> str:
    names = schema_type if isinstance(schema_type, list) else [schema_type]
    return " or ".join(
        "null" if n == "null" else f"a{'n' if n[0] in 'aeiou' else ''} {n}" for n in names
    )


def schema_problems(errors: Iterable[ValidationError]) -> list[FieldProblem]:
    """Turn jsonschema errors into field-named problems a person can act on."""
    problems: list[FieldProblem] = []
    for error in errors:
        problems.extend(_problems(error))
    return problems


def _problems(error: ValidationError) -> list[FieldProblem]:
    path = _path(error)
    validator, value = error.validator, error.validator_value
    if validator in ("oneOf", "anyOf") and error.context:
        specific = [e for e in error.context if e.validator != "type"]
        if specific:
            return _problems(specific[0])
        types = [e.validator_value for e in error.context]
        return [FieldProblem(path, f"must be {' or '.join(type_names(t) for t in types)}")]
    if validator == "required":
        instance = error.instance if isinstance(error.instance, dict) else {}
        return [
            FieldProblem(_join(path, name), "is required") for name in value if name not in instance
        ]
    if validator == "additionalProperties":
        instance = error.instance if isinstance(error.instance, dict) else {}
        known = set(error.schema.get("properties", {}))
        return [
            FieldProblem(_join(path, name), "is not a known field")
            for name in instance
            if name not in known
        ]
    messages: dict[str, Callable[[], str]] = {
        "type": lambda: f"must be {type_names(value)}",
        "enum": lambda: "must be one of: " + ", ".join(str(v) for v in value),
        "maxLength": lambda: f"must be at most {value} characters long",
        "minLength": lambda: (
            "must not be empty" if value == 1 else f"must be at least {value} characters long"
        ),
        "pattern": lambda: f"must match the pattern {value}",
        "format": lambda: _format_message(value, error.instance),
        "minimum": lambda: f"must be at least {value}",
        "maximum": lambda: f"must be at most {value}",
        "maxItems": lambda: f"must have at most {value} items",
        "uniqueItems": lambda: "must not repeat an item",
        "minProperties": lambda: (
            "must have "
            + (
                "exactly one key"
                if error.schema.get("maxProperties") == 1
                else f"at least {value} keys"
            )
        ),
        "maxProperties": lambda: (
            "must have " + ("exactly one key" if value == 1 else f"at most {value} keys")
        ),
    }
    message = messages[validator]() if validator in messages else error.message[:300]
    return [FieldProblem(path, message)]


def _format_message(format_name: str, instance: object) -> str:
    if format_name in ("http-url", "site-url") and isinstance(instance, str):
        problem = http_url_problem(instance)
        if problem:
            return problem
    expected = FORMATS.get(format_name, (None, f"a valid {format_name}"))[1]
    return f"must be {expected}"
