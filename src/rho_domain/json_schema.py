"""A small JSON Schema validator for the final answer's ``output_schema`` (standard library).

Why our own and not ``jsonschema``: the check runs in the domain's loop (the corrective retry
is a loop decision), which imports only the standard library and attrs; ``jsonschema`` with
its dependencies (attrs, referencing, rpds-py, a compiled extension) would become a core
dependency for one feature. The schemas users write for an answer use a small set of
keywords, and this module checks exactly those; a schema using any other keyword is refused
when the agent is configured (``check_schema``), never silently half-checked.

Covered (draft 2020-12 meaning): ``type`` (a name or a list; ``integer`` is a number without
a fraction; booleans are not numbers), ``enum``, ``const``, ``properties``, ``required``,
``additionalProperties`` (boolean or schema), ``minProperties``, ``maxProperties``,
``items`` (one schema for every item), ``prefixItems``, ``minItems``, ``maxItems``,
``uniqueItems``, ``minLength``, ``maxLength``, ``pattern`` (Python ``re.search``),
``minimum``, ``maximum``, ``exclusiveMinimum``, ``exclusiveMaximum``, ``multipleOf``,
``anyOf``, ``oneOf``, ``allOf``, ``not``, ``$ref`` to ``#/$defs/...`` or
``#/definitions/...``, and the annotations that check nothing (``title``, ``description``,
``default``, ``examples``, ``format``, ``$schema``, ``$id``, ``$comment``, ``$defs``,
``definitions``, ``nullable``, ``strict``).

``validate`` returns the first problem as a ``SchemaProblem`` whose ``path`` names the
failing place (``$.items[2].price``), or None.
"""

from __future__ import annotations

import json
import operator
import re
from collections.abc import Mapping
from typing import Any

import attrs

from rho_domain.errors import ConfigError

_CHECKED = frozenset(
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
    return isinstance(v, int | float) and not isinstance(v, bool)


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
    "minimum": (_number_value, "a number"),
    "maximum": (_number_value, "a number"),
    "exclusiveMinimum": (_number_value, "a number"),
    "exclusiveMaximum": (_number_value, "a number"),
    "multipleOf": (lambda v: _number_value(v) and v > 0, "a number above 0"),
    "uniqueItems": (lambda v: isinstance(v, bool), "true or false"),
    "pattern": (lambda v: isinstance(v, str), "a regular expression (a string)"),
    "$ref": (lambda v: isinstance(v, str), "'#/$defs/NAME'"),
}


@attrs.frozen
class SchemaProblem:
    """Where the value fails the schema (``$``, ``$.a[0]``) and why."""

    path: str
    message: str

    def __str__(self) -> str:
        return f"{self.path}: {self.message}"


def check_schema(schema: Any, where: str = "output_schema") -> None:
    """Raise ``ConfigError`` unless ``schema`` uses only the keywords ``validate`` checks,
    with values of the right kind, and every ``$ref`` resolves."""
    _check(schema, schema, where, "#")


def validate(value: Any, schema: Mapping[str, Any]) -> SchemaProblem | None:
    """The first place ``value`` fails ``schema`` (checked by ``check_schema``), or None."""
    return _validate(value, schema, schema, "$")


def _check(node: Any, root: Any, where: str, at: str) -> None:
    if isinstance(node, bool):
        return
    if not isinstance(node, Mapping):
        raise ConfigError(f"{where}: the schema at {at} must be an object or a boolean")
    _check_keywords(node, root, where, at)
    for key in ("properties", "$defs", "definitions"):
        for name, sub in (node.get(key) or {}).items():
            _check(sub, root, where, f"{at}/{key}/{name}")
    for key in ("items", "additionalProperties", "not"):
        if key in node:
            _check(node[key], root, where, f"{at}/{key}")
    for key in ("anyOf", "oneOf", "allOf", "prefixItems"):
        for i, sub in enumerate(node.get(key) or ()):
            _check(sub, root, where, f"{at}/{key}/{i}")


def _check_keywords(node: Mapping[str, Any], root: Any, where: str, at: str) -> None:
    """This node's own keywords: known, of the right kind, types named, refs that end."""
    unknown = sorted(set(node) - _CHECKED - _ANNOTATIONS)
    if unknown:
        raise ConfigError(
            f"{where}: {unknown[0]!r} at {at} is a JSON Schema keyword rho-agent does not "
            f"check; use only: {', '.join(sorted(_CHECKED))} (docs/structured-output.md)"
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
        target = _resolve(root, target["$ref"], where)
    if "pattern" in node:
        try:
            re.compile(node["pattern"])
        except (re.error, TypeError) as exc:
            raise ConfigError(f"{where}: the pattern at {at} is not a valid regex: {exc}") from None


def _resolve(root: Any, ref: Any, where: str) -> Any:
    parts = str(ref).split("/")
    if len(parts) != 3 or parts[0] != "#" or parts[1] not in ("$defs", "definitions"):
        raise ConfigError(f"{where}: $ref {ref!r}: only '#/$defs/NAME' references are checked")
    target = (root.get(parts[1]) or {}).get(parts[2]) if isinstance(root, Mapping) else None
    if target is None:
        raise ConfigError(f"{where}: $ref {ref!r} names no definition")
    return target


def _validate(value: Any, schema: Any, root: Any, path: str) -> SchemaProblem | None:
    if schema is True:
        return None
    if schema is False:
        return SchemaProblem(path, "no value is allowed here")
    target = _resolve(root, schema["$ref"], "schema") if "$ref" in schema else True
    if problem := _validate(value, target, root, path):
        return problem
    for check in (_type, _choices, _combined, _object, _array, _string, _number):
        if problem := check(value, schema, root, path):
            return problem
    return None


def _type(value: Any, schema: Mapping[str, Any], root: Any, path: str) -> SchemaProblem | None:
    kinds = schema.get("type")
    if kinds is None:
        return None
    names = [kinds] if isinstance(kinds, str) else list(kinds)
    if any(_is(value, kind) for kind in names):
        return None
    return SchemaProblem(path, f"expected {' or '.join(names)}, got {_kind(value)}")


def _choices(value: Any, schema: Mapping[str, Any], root: Any, path: str) -> SchemaProblem | None:
    if "const" in schema and not _same(value, schema["const"]):
        return SchemaProblem(path, f"expected {json.dumps(schema['const'])}")
    if "enum" in schema and not any(_same(value, v) for v in schema["enum"]):
        allowed = ", ".join(json.dumps(v) for v in schema["enum"])
        return SchemaProblem(path, f"expected one of {allowed}, got {_short(value)}")
    return None


def _combined(value: Any, schema: Mapping[str, Any], root: Any, path: str) -> SchemaProblem | None:
    for sub in schema.get("allOf") or ():
        if problem := _validate(value, sub, root, path):
            return problem
    if "anyOf" in schema:
        problems = [_validate(value, sub, root, path) for sub in schema["anyOf"]]
        if all(problems):
            return SchemaProblem(path, f"matches none of anyOf: {problems[0]}")
    if "oneOf" in schema:
        matched = sum(_validate(value, sub, root, path) is None for sub in schema["oneOf"])
        if matched != 1:
            return SchemaProblem(path, f"matches {matched} of oneOf's schemas, not exactly one")
    if "not" in schema and _validate(value, schema["not"], root, path) is None:
        return SchemaProblem(path, "matches the schema under 'not'")
    return None


def _object(value: Any, schema: Mapping[str, Any], root: Any, path: str) -> SchemaProblem | None:
    if not isinstance(value, dict):
        return None
    for name in schema.get("required") or ():
        if name not in value:
            return SchemaProblem(path, f"the required property {name!r} is missing")
    properties = schema.get("properties") or {}
    extra = schema.get("additionalProperties", True)
    for name, item in value.items():
        where = f"{path}.{name}" if re.fullmatch(r"[A-Za-z_]\w*", name) else f"{path}[{name!r}]"
        if name in properties:
            sub: Any = properties[name]
        elif extra is False:
            return SchemaProblem(where, "this property is not allowed")
        else:
            sub = extra
        if problem := _validate(item, sub, root, where):
            return problem
    count = len(value)
    if count < schema.get("minProperties", 0):
        return SchemaProblem(path, f"expected at least {schema['minProperties']} properties")
    if "maxProperties" in schema and count > schema["maxProperties"]:
        return SchemaProblem(path, f"expected at most {schema['maxProperties']} properties")
    return None


def _array(value: Any, schema: Mapping[str, Any], root: Any, path: str) -> SchemaProblem | None:
    if not isinstance(value, list):
        return None
    prefix = schema.get("prefixItems") or ()
    for i, item in enumerate(value):
        sub = prefix[i] if i < len(prefix) else schema.get("items", True)
        if problem := _validate(item, sub, root, f"{path}[{i}]"):
            return problem
    count = len(value)
    if count < schema.get("minItems", 0):
        return SchemaProblem(path, f"expected at least {schema['minItems']} items, got {count}")
    if "maxItems" in schema and count > schema["maxItems"]:
        return SchemaProblem(path, f"expected at most {schema['maxItems']} items, got {count}")
    if schema.get("uniqueItems"):
        for i, item in enumerate(value):
            if any(_same(item, other) for other in value[i + 1 :]):
                return SchemaProblem(f"{path}[{i}]", "expected unique items: this one repeats")
    return None


def _string(value: Any, schema: Mapping[str, Any], root: Any, path: str) -> SchemaProblem | None:
    if not isinstance(value, str):
        return None
    if len(value) < schema.get("minLength", 0):
        return SchemaProblem(path, f"expected at least {schema['minLength']} characters")
    if "maxLength" in schema and len(value) > schema["maxLength"]:
        return SchemaProblem(path, f"expected at most {schema['maxLength']} characters")
    if "pattern" in schema and re.search(schema["pattern"], value) is None:
        return SchemaProblem(path, f"does not match the pattern {schema['pattern']!r}")
    return None


def _number(value: Any, schema: Mapping[str, Any], root: Any, path: str) -> SchemaProblem | None:
    if not _is(value, "number"):
        return None
    bounds = (
        ("minimum", operator.ge, "at least"),
        ("maximum", operator.le, "at most"),
        ("exclusiveMinimum", operator.gt, "more than"),
        ("exclusiveMaximum", operator.lt, "less than"),
    )
    for key, holds, words in bounds:
        if key in schema and not holds(value, schema[key]):
            return SchemaProblem(path, f"expected {words} {schema[key]}, got {value}")
    step = schema.get("multipleOf")
    if step and (value / step) != int(value / step):
        return SchemaProblem(path, f"expected a multiple of {step}, got {value}")
    return None


def _is(value: Any, kind: str) -> bool:
    if kind == "null":
        return value is None
    if kind == "boolean":
        return isinstance(value, bool)
    if kind == "integer":
        return _is(value, "number") and float(value).is_integer()
    if kind == "number":
        return isinstance(value, int | float) and not isinstance(value, bool)
    return isinstance(value, {"string": str, "array": list, "object": dict}[kind])


def _same(a: Any, b: Any) -> bool:
    """JSON equality: 1 equals 1.0 (at any depth), true is not 1."""
    if _is(a, "number") and _is(b, "number"):
        return bool(a == b)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(map(_same, a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    return type(a) is type(b) and bool(a == b)


def _kind(value: Any) -> str:
    for kind in ("null", "boolean", "integer", "number", "string", "array", "object"):
        if _is(value, kind):
            return kind
    return type(value).__name__


def _short(value: Any) -> str:
    text = json.dumps(value)
    return text if len(text) <= 60 else text[:60] + "..."
