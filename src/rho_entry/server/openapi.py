"""The OpenAPI 3.1 document, generated from the route table and the body classes, so that
it cannot drift from what the server does."""

from __future__ import annotations

import re
import types
import typing
from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from rho_entry.server.route_spec import ApiRoute
from rho_entry.version import VERSION

_ERROR = {
    "type": "object",
    "properties": {
        "error": {
            "type": "object",
            "properties": {
                "code": {"type": "string"},
                "message": {"type": "string"},
                "field": {"type": "string"},
            },
            "required": ["code", "message"],
        }
    },
}


def document(routes: Sequence[ApiRoute]) -> dict[str, Any]:
    """The OpenAPI document of ``routes``."""
    paths: dict[str, dict[str, Any]] = {}
    for route in routes:
        paths.setdefault(route.path, {})[route.method.lower()] = _operation(route)
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "rho-agent server",
            "version": VERSION,
            "description": "Sessions over HTTP; events as Server-Sent Events (docs/server.md).",
        },
        "components": {
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
            "schemas": {"Error": _ERROR},
        },
        "security": [{"bearer": []}],
        "paths": paths,
    }


def answers(route: ApiRoute) -> dict[int, str]:
    """The route's own answers and the guard's (``guard.py``), which every route can give."""
    guard = {401: "no or wrong bearer token", 421: "the Host header does not name this server"}
    if route.method not in ("GET", "HEAD"):
        guard[403] = "sent by a page of another origin (Origin, Sec-Fetch-Site)"
        guard[415] = "a body or Content-Type other than application/json"
    merged = dict(route.responses)
    for code, text in guard.items():
        merged[code] = f"{merged[code]}; or {text}" if code in merged and code != 401 else text
    return dict(sorted(merged.items()))


def _operation(route: ApiRoute) -> dict[str, Any]:
    parameters = [
        {"name": name, "in": "path", "required": True, "schema": {"type": "string"}}
        for name in re.findall(r"{(\w+)}", route.path)
    ]
    if route.stream:
        parameters.append(
            {"name": "Last-Event-ID", "in": "header", "schema": {"type": "integer", "minimum": 0}}
        )
        for name in ("after", "until"):
            parameters.append({"name": name, "in": "query", "schema": {"type": "string"}})
    operation: dict[str, Any] = {
        "summary": route.summary,
        "operationId": route.handler.__name__,
        "parameters": parameters,
        "responses": {
            str(code): _response(code, text, route) for code, text in answers(route).items()
        },
    }
    if route.body is not None:
        operation["requestBody"] = {
            "required": route.body is not None,
            "content": {"application/json": {"schema": body_schema(route.body)}},
        }
    return operation


def _response(code: int, text: str, route: ApiRoute) -> dict[str, Any]:
    if code >= 400:
        content = {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
        answer: dict[str, Any] = {"description": text, "content": content}
        if code == 429:
            answer["headers"] = {"Retry-After": {"schema": {"type": "integer"}}}
        return answer
    media = "text/event-stream" if route.stream else "application/json"
    return {"description": text, "content": {media: {"schema": {"type": "object"}}}}


def body_schema(cls: type[Any]) -> dict[str, Any]:
    """A JSON schema for a body class (attrs fields: str, int, Literal, mappings)."""
    hints = typing.get_type_hints(cls)
    properties = {a.name: _schema(hints[a.name]) for a in attrs.fields(cls)}
    required = [a.name for a in attrs.fields(cls) if a.default is attrs.NOTHING]
    schema: dict[str, Any] = {
        "type": "object",
        "properties": properties,
        "additionalProperties": False,
    }
    if required:
        schema["required"] = required
    return schema


def _schema(hint: Any) -> dict[str, Any]:
    origin = typing.get_origin(hint)
    args = [a for a in typing.get_args(hint) if a is not type(None)]
    if origin in (typing.Union, types.UnionType):
        return _schema(args[0])
    if origin is typing.Literal:
        return {"type": "string", "enum": list(args)}
    if origin is not None and issubclass(origin, Mapping):
        return {"type": "object", "additionalProperties": {"type": "string"}}
    return {"type": {str: "string", int: "integer", bool: "boolean"}.get(hint, "string")}
