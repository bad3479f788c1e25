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
``uniqueItems``, ``minLength``, ``maxLength``, ``pattern`` (Python ``re.search``, run by
the caller's ``matches``: see ``Matches``),
``minimum``, ``maximum``, ``exclusiveMinimum``, ``exclusiveMaximum``, ``multipleOf``,
``anyOf``, ``oneOf``, ``allOf``, ``not``, ``$ref`` to ``#/$defs/...`` or
``#/definitions/...``, and the annotations that check nothing (``title``, ``description``,
``default``, ``examples``, ``format``, ``$schema``, ``$id``, ``$comment``, ``$defs``,
``definitions``, ``nullable``, ``strict``).

``validate`` returns the first problem as a ``SchemaProblem`` whose ``path`` names the
failing place (``$.items[2].price``), or None.

What a schema may use, and the check of it (``check_schema``), are ``schema_keywords.py``'s;
this module judges values.
"""

from __future__ import annotations

import json
import operator
import re
from collections.abc import Callable, Mapping
from typing import Any

import attrs

from rho_domain.errors import ConfigError
from rho_domain.schema_keywords import check_node, resolve
from rho_domain.value_methods import value_eq, value_hash, value_repr


@attrs.frozen
class SchemaProblem:
    """Where the value fails the schema (``$``, ``$.a[0]``) and why."""

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    path: str
    message: str

    def __str__(self) -> str:
        return f"{self.path}: {self.message}"


MAX_SCHEMA_DEPTH = 100
"""How deeply a schema may nest objects and arrays: far past any real answer's shape, and
well within Python's recursion limit, which the checks and ``validate`` recurse under."""


def check_schema(schema: Any, where: str = "output_schema") -> None:
    """Raise ``ConfigError`` unless ``schema`` uses only the keywords ``validate`` checks,
    with values of the right kind, and every ``$ref`` resolves, nesting objects and arrays
    at most ``MAX_SCHEMA_DEPTH`` deep (a deeper one failed every recursive check with
    ``RecursionError``)."""
    if _nests_deeper(schema, MAX_SCHEMA_DEPTH):
        raise ConfigError(
            f"{where}: the schema nests objects and arrays more than {MAX_SCHEMA_DEPTH} deep; "
            "give a flatter one (a $ref to a shared definition names a repeated shape)"
        )
    check_node(schema, schema, where, "#")


def _nests_deeper(value: Any, limit: int) -> bool:
    """True when ``value`` holds objects and arrays more than ``limit`` deep (``value``
    itself is level 1); a loop, not a recursion, so that the depth it measures cannot
    exhaust the stack."""
    containers = (Mapping, list, tuple)
    level: list[Any] = [value] if isinstance(value, containers) else []
    for _ in range(limit):
        level = [
            child
            for node in level
            for child in (node.values() if isinstance(node, Mapping) else node)
            if isinstance(child, containers)
        ]
        if not level:
            return False
    return True


Matches = Callable[[str, str], bool]
"""Whether a ``pattern`` keyword's regex is found in a string (``re.search``): never run here.
A schema's patterns come from outside (a client, a config, a stored session) and ``re`` cannot
be interrupted, so ``rho_domain.schema_patterns`` answers them from a ``LineSearcher``."""


@attrs.frozen
class _Ctx:
    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    root: Any
    matches: Matches


def validate(value: Any, schema: Mapping[str, Any], matches: Matches) -> SchemaProblem | None:
    """The first place ``value`` fails ``schema`` (checked by ``check_schema``), or None;
    ``matches(pattern, text)`` answers each ``pattern`` keyword met on the way."""
    return _validate(value, schema, _Ctx(schema, matches), "$")


def _validate(value: Any, schema: Any, ctx: _Ctx, path: str) -> SchemaProblem | None:
    if schema is True:
        return None
    if schema is False:
        return SchemaProblem(path, "no value is allowed here")
    target = resolve(ctx.root, schema["$ref"], "schema") if "$ref" in schema else True
    if problem := _validate(value, target, ctx, path):
        return problem
    for check in (_type, _choices, _combined, _object, _array, _string, _number):
        if problem := check(value, schema, ctx, path):
            return problem
    return None


def _type(value: Any, schema: Mapping[str, Any], ctx: _Ctx, path: str) -> SchemaProblem | None:
    kinds = schema.get("type")
    if kinds is None:
        return None
    names = [kinds] if isinstance(kinds, str) else list(kinds)
    if any(_is(value, kind) for kind in names):
        return None
    return SchemaProblem(path, f"expected {' or '.join(names)}, got {_kind(value)}")


def _choices(value: Any, schema: Mapping[str, Any], ctx: _Ctx, path: str) -> SchemaProblem | None:
    if "const" in schema and not _same(value, schema["const"]):
        return SchemaProblem(path, f"expected {json.dumps(schema['const'])}")
    if "enum" in schema and not any(_same(value, v) for v in schema["enum"]):
        allowed = ", ".join(json.dumps(v) for v in schema["enum"])
        return SchemaProblem(path, f"expected one of {allowed}, got {_short(value)}")
    return None


def _combined(value: Any, schema: Mapping[str, Any], ctx: _Ctx, path: str) -> SchemaProblem | None:
    for sub in schema.get("allOf") or ():
        if problem := _validate(value, sub, ctx, path):
            return problem
    if "anyOf" in schema:
        problems = [_validate(value, sub, ctx, path) for sub in schema["anyOf"]]
        if all(problems):
            return SchemaProblem(path, f"matches none of anyOf: {problems[0]}")
    if "oneOf" in schema:
        matched = sum(_validate(value, sub, ctx, path) is None for sub in schema["oneOf"])
        if matched != 1:
            return SchemaProblem(path, f"matches {matched} of oneOf's schemas, not exactly one")
    if "not" in schema and _validate(value, schema["not"], ctx, path) is None:
        return SchemaProblem(path, "matches the schema under 'not'")
    return None


def _object(value: Any, schema: Mapping[str, Any], ctx: _Ctx, path: str) -> SchemaProblem | None:
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
        if problem := _validate(item, sub, ctx, where):
            return problem
    count = len(value)
    if count < schema.get("minProperties", 0):
        return SchemaProblem(path, f"expected at least {schema['minProperties']} properties")
    if "maxProperties" in schema and count > schema["maxProperties"]:
        return SchemaProblem(path, f"expected at most {schema['maxProperties']} properties")
    return None


def _array(value: Any, schema: Mapping[str, Any], ctx: _Ctx, path: str) -> SchemaProblem | None:
    if not isinstance(value, list):
        return None
    prefix = schema.get("prefixItems") or ()
    for i, item in enumerate(value):
        sub = prefix[i] if i < len(prefix) else schema.get("items", True)
        if problem := _validate(item, sub, ctx, f"{path}[{i}]"):
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


def _string(value: Any, schema: Mapping[str, Any], ctx: _Ctx, path: str) -> SchemaProblem | None:
    if not isinstance(value, str):
        return None
    if len(value) < schema.get("minLength", 0):
        return SchemaProblem(path, f"expected at least {schema['minLength']} characters")
    if "maxLength" in schema and len(value) > schema["maxLength"]:
        return SchemaProblem(path, f"expected at most {schema['maxLength']} characters")
    if "pattern" in schema and not ctx.matches(schema["pattern"], value):
        return SchemaProblem(path, f"does not match the pattern {schema['pattern']!r}")
    return None


def _number(value: Any, schema: Mapping[str, Any], ctx: _Ctx, path: str) -> SchemaProblem | None:
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
