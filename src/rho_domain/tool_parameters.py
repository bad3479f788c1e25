"""The check of a tool's ``parameters`` schema when the agent is built.

A tool's schema is the JSON Schema the model is sent and its call's arguments are checked
against (``tools/schema.coerce_and_validate``). A wrong keyword value there passed
``Agent(tools=[...])`` and failed later, or never: ``"type": "strin"`` let every value
through (an unknown type checks nothing), ``"required": "x"`` and ``"properties": []`` were
skipped, and a provider that checks schemas refused the whole request at the first model
call, naming no tool. ``check_parameters`` refuses them at construction, naming where in the
schema and the value given.

Narrower than ``json_schema.check_schema`` (the output schema's): a tool may use keywords
rho-agent does not check (``format``, ``patternProperties``, draft-07's ``items`` list);
those are left to the provider and the tool. What is checked is each keyword rho-agent knows
(``schema_keywords.check_values``), in every schema it nests, and that the arguments (a JSON
object) can match the top (its ``type``, when given, allows ``object``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rho_domain.errors import ConfigError
from rho_domain.schema_keywords import check_values

_BY_NAME = ("properties", "$defs", "definitions", "patternProperties", "dependentSchemas")
_ONE = ("items", "additionalProperties", "not", "contains", "propertyNames", "if", "then", "else")
_LISTED = ("anyOf", "oneOf", "allOf", "prefixItems")


def check_parameters(schema: Any, where: str) -> None:
    """Raise ``ConfigError`` naming ``where`` (the tool), the place in ``schema`` (``#``,
    ``#/properties/path``) and the value, unless every schema in it is an object or a
    boolean whose known keywords have values of their kind, and its top allows an object."""
    try:
        _check(schema, where, "#")
    except RecursionError:  # JSON took it: nested just short of the interpreter's limit
        raise ConfigError(
            f"{where}: the schema nests too deep to check; give a flatter one"
        ) from None
    kinds = schema.get("type") if isinstance(schema, Mapping) else None
    names = [kinds] if isinstance(kinds, str) else kinds or ()
    if names and "object" not in names:
        raise ConfigError(
            f"{where}: type at # is {kinds!r}; a tool's arguments are a JSON object, so its "
            'schema\'s top is {"type": "object", "properties": {...}}'
        )


def _check(node: Any, where: str, at: str) -> None:
    if isinstance(node, bool):
        return
    if not isinstance(node, Mapping):
        raise ConfigError(
            f"{where}: the schema at {at} must be an object or a boolean, not "
            f"{type(node).__name__} {node!r:.60}"
        )
    check_values(node, where, at)
    for key in _BY_NAME:
        if isinstance(node.get(key), Mapping):
            for name, sub in node[key].items():
                _check(sub, where, f"{at}/{key}/{name}")
    for key in _ONE:
        if key in node and not (key == "items" and isinstance(node[key], list)):
            _check(node[key], where, f"{at}/{key}")
    for key in _LISTED:
        for i, sub in enumerate(node.get(key) or ()):
            _check(sub, where, f"{at}/{key}/{i}")
    if isinstance(node.get("items"), list):  # draft-07's tuple form
        for i, sub in enumerate(node["items"]):
            _check(sub, where, f"{at}/items/{i}")
