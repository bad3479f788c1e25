"""Argument coercion and validation against a tool's JSON Schema.

Models get types wrong in predictable ways: "true" for true, "5" for 5, a JSON text for an
array or object. ``coerce_and_validate`` repairs those, then checks the schema subset tools
use (type, properties, required, enum, items, additionalProperties, minimum/maximum,
maxLength). Every
problem is reported at once, with its path, so the model can fix its call in one try.

A schema may come from outside (an MCP server's ``inputSchema``, passed through): a keyword
whose value is not of the kind the keyword takes (``"maxLength": "10"``, ``"required": 5``,
``"items": 5``) is not checked here, as a keyword this module does not know is not; the tool
checks its own. It never makes ``coerce_and_validate`` raise anything but
``ToolArgumentsError`` (a ``TypeError`` of one ended the whole run).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, TypeGuard

from rho_domain.errors import ToolArgumentsError
from rho_domain.json_text import one_reading

_TRUE = {"true", "yes", "1", "on"}
_FALSE = {"false", "no", "0", "off"}


def coerce_and_validate(arguments: Mapping[str, Any], schema: Mapping[str, Any]) -> dict[str, Any]:
    """Return coerced arguments, or raise ``ToolArgumentsError`` listing every problem."""
    problems: list[str] = []
    value = _check(dict(arguments), schema, "arguments", problems)
    if problems:
        raise ToolArgumentsError("invalid arguments: " + "; ".join(problems))
    assert isinstance(value, dict)
    return value


def _types_of(schema: object) -> list[str]:
    declared = schema.get("type") if isinstance(schema, Mapping) else None
    if isinstance(declared, str):
        return [declared]
    return [name for name in declared if isinstance(name, str)] if _is_list(declared) else []


def _is_list(value: object) -> TypeGuard[list[Any]]:
    return isinstance(value, list)


def _is_number(value: object) -> TypeGuard[int | float]:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _check(value: Any, schema: object, path: str, problems: list[str]) -> Any:
    if not isinstance(schema, Mapping):  # "items": 5, a property's schema 5: nothing to check
        return value
    types = _types_of(schema)
    if types:
        value = _coerce(value, types)
        if not any(_is_type(value, t) for t in types):
            problems.append(f"{path} must be {' or '.join(types)}, got {_describe(value)}")
            return value
    if _is_list(schema.get("enum")) and value not in schema["enum"]:
        choices = ", ".join(json.dumps(c) for c in schema["enum"])
        problems.append(f"{path} must be one of {choices}, got {json.dumps(value)}")
    longest = schema.get("maxLength")
    if isinstance(value, str) and _is_number(longest) and len(value) > longest:
        problems.append(
            f"{path} must be at most {schema['maxLength']:,} characters, got {len(value):,}"
        )
    if _is_number(value):
        if _is_number(schema.get("minimum")) and value < schema["minimum"]:
            problems.append(f"{path} must be >= {schema['minimum']}, got {value}")
        if _is_number(schema.get("maximum")) and value > schema["maximum"]:
            problems.append(f"{path} must be <= {schema['maximum']}, got {value}")
    if isinstance(value, dict):
        value = _check_object(value, schema, path, problems)
    if isinstance(value, list) and "items" in schema:
        value = [_check(v, schema["items"], f"{path}[{i}]", problems) for i, v in enumerate(value)]
    return value


def _check_object(
    value: dict[str, Any], schema: Mapping[str, Any], path: str, problems: list[str]
) -> dict[str, Any]:
    properties = schema.get("properties")
    if not isinstance(properties, Mapping):
        properties = {}
    required = schema.get("required")
    for name in required if _is_list(required) else ():
        if isinstance(name, str) and (name not in value or value[name] is None):
            problems.append(f"{path}.{name} is required")
    out: dict[str, Any] = {}
    for key, item in value.items():
        if key in properties:
            if item is None and "null" not in _types_of(properties[key]):
                continue  # an explicit null means "use the default"
            out[key] = _check(item, properties[key], f"{path}.{key}", problems)
        elif schema.get("additionalProperties", True) is False:
            known = ", ".join(sorted(properties)) or "none"
            problems.append(f"{path}.{key} is not a known parameter (known: {known})")
        else:
            out[key] = item
    return out


def _coerce(value: Any, types: list[str]) -> Any:
    if not isinstance(value, str) or "string" in types:
        if isinstance(value, float) and "integer" in types and value.is_integer():
            return int(value)
        return value
    text = value.strip()
    if "boolean" in types and text.lower() in _TRUE | _FALSE:
        return text.lower() in _TRUE
    if "integer" in types:
        try:
            return int(text)
        except ValueError:
            pass
    if "number" in types:
        try:
            return float(text)
        except ValueError:
            pass
    if ("array" in types or "object" in types) and text[:1] in "[{":
        try:
            return one_reading(text)  # a key twice or NaN stays a string: the schema refuses
        except (ValueError, RecursionError):  # not JSON, or nested past the parser: as given
            pass
    if "null" in types and text.lower() in {"null", "none"}:
        return None
    return value


def _is_type(value: Any, name: str) -> bool:
    match name:
        case "string":
            return isinstance(value, str)
        case "integer":
            return isinstance(value, int) and not isinstance(value, bool)
        case "number":
            return isinstance(value, (int, float)) and not isinstance(value, bool)
        case "boolean":
            return isinstance(value, bool)
        case "array":
            return isinstance(value, list)
        case "object":
            return isinstance(value, dict)
        case "null":
            return value is None
    return True


def _describe(value: Any) -> str:
    text = json.dumps(value, default=str)
    return text if len(text) <= 60 else text[:57] + "..."
