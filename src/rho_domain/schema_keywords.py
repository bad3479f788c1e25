"""Which output schemas rho-agent accepts: the keywords ``json_schema.validate`` checks, and the
check that a schema uses only those.

``check_node(schema, root, where, at)`` raises ``ConfigError`` unless the schema at ``at``
(and everything under it) uses only the checked keywords (``CHECKED``) and the annotations
that check nothing, each with a value of the right kind, names known types, and has only
``$ref`` chains that end; the message names the keyword, where it is, and what to use
instead. ``resolve(root, ref, where)`` finds the definition a ``#/$defs/NAME`` (or
``#/definitions/NAME``) reference names. ``json_schema.check_schema`` is the public check.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from rho_domain.errors import ConfigError

CHECKED = frozenset(
    {
        "type", "enum", "const", "properties", "required", "additionalProperties",
        "minProperties", "maxProperties", "items", "prefixItems", "minItems", "maxItems",
        "uniqueItems", "minLength", "maxLength", "pattern", "minimum", "maximum",
        "exclusiveMinimum", "exclusiveMaximum", "multipleOf", "anyOf", "oneOf", "allOf",
        "not", "$ref",
    }
)  # fmt: skip
_ANNOTATIONS = frozenset(
    {
        "title", "description", "default", "examples", "format", "$schema", "$id",
        "$comment", "$defs", "definitions", "nullable", "strict",
    }
)  # fmt: skip
_TYPES = frozenset({"object", "array", "string", "number", "integer", "boolean", "null"})


def _count(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and v >= 0


def _number_value(v: Any) -> bool:
    # NaN and the infinities are no bound: `maximum: .nan` in a YAML config failed every
    # answer, and is not JSON to send to the model (a whole int is finite, however large)
    if isinstance(v, bool) or not isinstance(v, int | float):
        return False
    return isinstance(v, int) or math.isfinite(v)


def _schemas(v: Any) -> bool:
    return isinstance(v, list) and bool(v)


_VALUE_KINDS: Mapping[str, tuple[Any, str]] = {
    "type": (
        lambda v: isinstance(v, str) or (_schemas(v) and all(isinstance(k, str) for k in v)),
        "a type name or a list of them",
    ),
    "required": (
        lambda v: isinstance(v, list) and all(isinstance(k, str) for k in v),
        "a list of property names",
    ),
    "properties": (lambda v: isinstance(v, Mapping), "an object of schemas"),
    "$defs": (lambda v: isinstance(v, Mapping), "an object of schemas"),
    "definitions": (lambda v: isinstance(v, Mapping), "an object of schemas"),
    "enum": (lambda v: isinstance(v, list), "a list of values"),
    "anyOf": (_schemas, "a non-empty list of schemas"),
    "oneOf": (_schemas, "a non-empty list of schemas"),
    "allOf": (_schemas, "a non-empty list of schemas"),
    "prefixItems": (_schemas, "a non-empty list of schemas"),
    "minProperties": (_count, "a whole number, 0 or more"),
    "maxProperties": (_count, "a whole number, 0 or more"),
    "minItems": (_count, "a whole number, 0 or more"),
    "maxItems": (_count, "a whole number, 0 or more"),
    "minLength": (_count, "a whole number, 0 or more"),
    "maxLength": (_count, "a whole number, 0 or more"),
    "minimum": (_number_value, "a finite number"),
    "maximum": (_number_value, "a finite number"),
    "exclusiveMinimum": (_number_value, "a finite number"),
    "exclusiveMaximum": (_number_value, "a finite number"),
    "multipleOf": (lambda v: _number_value(v) and v > 0, "a finite number above 0"),
    "uniqueItems": (lambda v: isinstance(v, bool), "true or false"),
    "pattern": (lambda v: isinstance(v, str), "a regular expression (a string)"),
    "$ref": (lambda v: isinstance(v, str), "'#/$defs/NAME'"),
}


def check_node(node: Any, root: Any, where: str, at: str) -> None:
    """Raise ``ConfigError`` unless the schema ``node`` at ``at`` of ``root``, and every
    schema under it, is one ``validate`` checks in full (``where`` names the setting)."""
    if isinstance(node, bool):
        return
    if not isinstance(node, Mapping):
        raise ConfigError(f"{where}: the schema at {at} must be an object or a boolean")
    _check_keywords(node, root, where, at)
    for key in ("properties", "$defs", "definitions"):
        for name, sub in (node.get(key) or {}).items():
            check_node(sub, root, where, f"{at}/{key}/{name}")
    for key in ("items", "additionalProperties", "not"):
        if key in node:
            check_node(node[key], root, where, f"{at}/{key}")
    for key in ("anyOf", "oneOf", "allOf", "prefixItems"):
        for i, sub in enumerate(node.get(key) or ()):
            check_node(sub, root, where, f"{at}/{key}/{i}")


def _check_keywords(node: Mapping[str, Any], root: Any, where: str, at: str) -> None:
    """This node's own keywords: known, of the right kind, types named, refs that end."""
    unknown = sorted(set(node) - CHECKED - _ANNOTATIONS)
    if unknown:
        raise ConfigError(
            f"{where}: {unknown[0]!r} at {at} is a JSON Schema keyword rho-agent does not "
            f"check; use only: {', '.join(sorted(CHECKED))} (docs/structured-output.md)"
        )
    for key, value in node.items():
        if key in _VALUE_KINDS and not _VALUE_KINDS[key][0](value):
            raise ConfigError(f"{where}: {key} at {at} must be {_VALUE_KINDS[key][1]}")
    kinds = node.get("type")
    for kind in [kinds] if isinstance(kinds, str) else kinds or ():
        if kind not in _TYPES:
            raise ConfigError(f"{where}: unknown type {kind!r} at {at}")
    seen: set[str] = set()
    target: Any = node
    while isinstance(target, Mapping) and "$ref" in target:  # a chain of refs must end
        if target["$ref"] in seen:
            raise ConfigError(f"{where}: $ref {target['$ref']!r} at {at} refers to itself")
        seen.add(target["$ref"])
        target = resolve(root, target["$ref"], where)


def patterns_of(schema: Any, at: str = "#") -> dict[str, str]:
    """Every ``pattern`` keyword of ``schema`` (checked by ``check_node``), by where it is
    (``#/properties/sku``). Never compiled here: a schema comes from outside (a server's
    client), compiling is not linear (each class under ``(?i)`` is case-folded range by
    range: 400 of them, 2.4 KB, took 3 s), and ``re`` cannot be interrupted; the entry points
    compile them in the ``LineSearcher``'s worker (``loop.output_check.check_patterns``)."""
    found: dict[str, str] = {}
    if not isinstance(schema, Mapping):
        return found
    if isinstance(schema.get("pattern"), str):
        found[at] = schema["pattern"]
    for key in ("properties", "$defs", "definitions"):
        for name, sub in (schema.get(key) or {}).items():
            found |= patterns_of(sub, f"{at}/{key}/{name}")
    for key in ("items", "additionalProperties", "not"):
        if key in schema:
            found |= patterns_of(schema[key], f"{at}/{key}")
    for key in ("anyOf", "oneOf", "allOf", "prefixItems"):
        for i, sub in enumerate(schema.get(key) or ()):
            found |= patterns_of(sub, f"{at}/{key}/{i}")
    return found


def resolve(root: Any, ref: Any, where: str) -> Any:
    """The definition ``ref`` (``#/$defs/NAME`` or ``#/definitions/NAME``) names in ``root``;
    ``ConfigError`` for any other reference or a name with no definition."""
    parts = str(ref).split("/")
    if len(parts) != 3 or parts[0] != "#" or parts[1] not in ("$defs", "definitions"):
        raise ConfigError(f"{where}: $ref {ref!r}: only '#/$defs/NAME' references are checked")
    target = (root.get(parts[1]) or {}).get(parts[2]) if isinstance(root, Mapping) else None
    if target is None:
        raise ConfigError(f"{where}: $ref {ref!r} names no definition")
    return target
