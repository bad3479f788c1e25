"""Whether a tool's input schema is one a model API takes (``misfit``): an MCP server's
(``rho_adapters.mcp.tool.left_out``: the tool is left out) and the library user's own
(``Agent(tools=[...])`` refuses it, ``rho_entry.agent``).

Every model request carries every tool's schema, and the APIs check each one: Anthropic
refuses a request whose ``input_schema`` does not match the JSON Schema 2020-12 meta-schema
(HTTP 400, "tools.N.custom.input_schema: JSON schema is invalid"), or that has ``anyOf``,
``oneOf`` or ``allOf`` at its top; OpenAI validates ``parameters`` likewise ("Invalid schema
for function ..."). One tool of one server with ``"required": "q"`` or ``"items": 5`` would
fail every request of every run, its other tools and ours included. So such a tool is left
out, named (``tool.left_out``), rather than repaired: what the server checks its arguments
against is its schema, and an approval covers the schema as shown.

The check is the meta-schema's for the keywords whose values it constrains: a place that
holds a schema holds an object or a boolean, a keyword's value is of its kind (a count is a
whole number, ``required`` a list of strings, ``type`` a known name, ...). Keywords it does
not name are left alone (annotations and vocabularies an API ignores), as are the values of
``const``, ``default``, ``enum``'s items and ``examples``' (data, not schemas). A walk that
stops at the first misfit, over a schema ``tool._schema_shape`` has already bounded.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping
from typing import Any

from rho_domain.said_text import said

_TYPES = frozenset({"object", "array", "string", "number", "integer", "boolean", "null"})
_ONE = (
    *("items", "additionalProperties", "not", "if", "then", "else", "contains"),
    *("propertyNames", "unevaluatedItems", "unevaluatedProperties"),
)  # the keywords whose value is one schema
_NAMED = ("properties", "patternProperties", "$defs", "dependentSchemas")
_LISTED = ("anyOf", "oneOf", "allOf", "prefixItems")
_TOP_COMBINED = ("anyOf", "oneOf", "allOf")  # Anthropic: "not supported at the top level"


def _count(v: Any) -> bool:
    # the meta-schema's nonNegativeInteger: a JSON integer, so 10.0 is one
    if isinstance(v, bool) or not isinstance(v, int | float):
        return False
    return v >= 0 and (isinstance(v, int) or v.is_integer())


def _number(v: Any) -> bool:
    return not isinstance(v, bool) and isinstance(v, int | float) and math.isfinite(v)


def _strings(v: Any) -> bool:
    return isinstance(v, list) and all(isinstance(k, str) for k in v) and len(set(v)) == len(v)


def _type(v: Any) -> bool:
    if isinstance(v, str):
        return v in _TYPES
    return _strings(v) and bool(v) and all(k in _TYPES for k in v)


_KINDS: Mapping[str, tuple[Callable[[Any], bool], str]] = {
    "type": (_type, "a type name (object, array, string, ...) or a list of distinct ones"),
    "required": (_strings, "a list of distinct property names"),
    "enum": (lambda v: isinstance(v, list), "a list of values"),
    "examples": (lambda v: isinstance(v, list), "a list of values"),
    "dependentRequired": (
        lambda v: isinstance(v, dict) and all(_strings(k) for k in v.values()),
        "an object of lists of property names",
    ),
    **dict.fromkeys(
        ("minLength", "maxLength", "minItems", "maxItems", "minProperties", "maxProperties"),
        (_count, "a whole number, 0 or more"),
    ),
    **dict.fromkeys(("minContains", "maxContains"), (_count, "a whole number, 0 or more")),
    **dict.fromkeys(
        ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"), (_number, "a number")
    ),
    "multipleOf": (lambda v: _number(v) and v > 0, "a number above 0"),
    **dict.fromkeys(
        ("uniqueItems", "deprecated", "readOnly", "writeOnly"),
        (lambda v: isinstance(v, bool), "true or false"),
    ),
    **dict.fromkeys(
        ("pattern", "format", "title", "description", "$ref", "$schema", "$id", "$anchor"),
        (lambda v: isinstance(v, str), "a string"),
    ),
    "$comment": (lambda v: isinstance(v, str), "a string"),
}


def misfit(schema: Mapping[str, Any]) -> str:
    """Why a model API would refuse ``schema`` (an object's input schema, within
    ``tool._schema_shape``'s bounds), naming the keyword and where it is
    (``#/properties/q/items``); "" when none would."""
    combined = [key for key in _TOP_COMBINED if key in schema]
    if combined:
        return (
            f"its input schema has {combined[0]} at its top, which a model API refuses "
            "(Anthropic: not supported at the top level); every model request would carry it"
        )
    todo: list[tuple[object, str]] = [(schema, "#")]
    while todo:
        node, at = todo.pop()
        if why := _node(node, at, todo):
            return (
                f"its input schema's {why}, as JSON Schema 2020-12 says; a model API refuses "
                "every request carrying it (HTTP 400), so no run could call a model"
            )
    return ""


def _node(node: object, at: str, todo: list[tuple[object, str]]) -> str:
    """What is wrong at ``node`` itself; the schemas under it go on ``todo``."""
    if isinstance(node, bool):
        return ""
    if not isinstance(node, dict):
        return f"schema at {at} is {_kind(node)}, not an object or a boolean"
    for key, value in node.items():
        if key in _KINDS and not _KINDS[key][0](value):
            return f"{said(key, 60)} at {at} is {_kind(value)}, not {_KINDS[key][1]}"
    for key in _ONE:
        if key in node:
            todo.append((node[key], f"{at}/{key}"))
    for key in _NAMED:
        if key not in node:
            continue
        if not isinstance(node[key], dict):
            return f"{key} at {at} is {_kind(node[key])}, not an object of schemas"
        todo.extend((sub, f"{at}/{key}/{said(name, 60)}") for name, sub in node[key].items())
    for key in _LISTED:
        if key not in node:
            continue
        if not isinstance(node[key], list) or not node[key]:
            return f"{key} at {at} is {_kind(node[key])}, not a non-empty list of schemas"
        todo.extend((sub, f"{at}/{key}/{i}") for i, sub in enumerate(node[key]))
    return ""


def _kind(value: object) -> str:
    """What JSON value ``value`` is, as a message names it, with a short sample of it."""
    kinds: tuple[tuple[Any, str], ...] = ((bool, "a boolean"), (int | float, "a number"))
    kinds += ((str, "a string"), (dict, "an object"), (list, "a list"))
    name = next((word for kind, word in kinds if isinstance(value, kind)), "null")
    if isinstance(value, dict | list) and not value:
        return f"an empty {'object' if isinstance(value, dict) else 'list'}"
    return name if isinstance(value, dict | list) else f"{name} ({said(repr(value), 40)})"


def as_sent(schema: Mapping[str, Any]) -> Mapping[str, Any]:
    """A tool's ``schema`` (an object's, ``misfit`` passed) as the model APIs take it, with
    the same meaning: ``"type": "object"`` at its top when it names none, and ``with_items``.
    OpenAI refuses every request whose function schema has no top type ("schema must be a
    JSON Schema of 'type: "object"', got 'type: "None"'"), as pydantic's
    ``model_json_schema()`` of a recursive model gives (``$defs`` and a ``$ref``), and a bare
    array ("array schema missing items"). ``schema`` itself when it lacks neither."""
    shown = schema if "type" in schema else {"type": "object", **schema}
    return with_items(dict(shown)) if _bare_arrays(shown) else shown


def with_items(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` (one ``misfit`` passed) with ``"items": {}`` added to every array schema
    that has neither ``items`` nor ``prefixItems``; ``schema`` itself when none lacks them.
    OpenAI refuses a bare ``"type": "array"`` in every request ("array schema missing
    items"); ``{}`` allows any item, as the bare form does, so what the model is told and
    what the server checks stay one."""
    if not _bare_arrays(schema):
        return schema
    copied: dict[str, Any] = json.loads(json.dumps(schema))  # within MAX_SCHEMA bytes
    for node in _bare_arrays(copied):
        node["items"] = {}
    return copied


def _bare_arrays(schema: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The array schemas in ``schema`` without ``items`` or ``prefixItems``."""
    bare: list[dict[str, Any]] = []
    todo: list[object] = [schema]
    while todo:
        node = todo.pop()
        if not isinstance(node, dict):
            continue
        kinds = node.get("type")
        array = "array" in ([kinds] if isinstance(kinds, str) else kinds or ())
        if array and "items" not in node and "prefixItems" not in node:
            bare.append(node)
        todo.extend(node[key] for key in _ONE if key in node)
        for key in _NAMED:
            todo.extend(node[key].values() if isinstance(node.get(key), dict) else ())
        for key in _LISTED:
            todo.extend(node[key] if isinstance(node.get(key), list) else ())
    return bare
