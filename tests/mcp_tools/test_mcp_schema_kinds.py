"""A listed tool whose input schema a model API refuses is left out, named: one such tool
would otherwise fail every model request of every run (pure: no server started)."""

from __future__ import annotations

from typing import Any

from rho_adapters.mcp.shown_tools import made_tools
from rho_adapters.mcp.tool import kept_entry
from rho_domain.mcp_config import McpServerConfig
from rho_domain.tools.base import ToolOutput

REFUSED: dict[str, tuple[dict[str, object], str]] = {  # the schema, and what the problem says
    "items5": (
        {"type": "object", "properties": {"q": {"type": "array", "items": 5}}},
        "schema at #/properties/q/items is a number (5), not an object or a boolean",
    ),
    "required_text": (
        {"type": "object", "properties": {"q": {}}, "required": "q"},
        "required at # is a string ('q'), not a list of distinct property names",
    ),
    "enum_object": (
        {"type": "object", "properties": {"q": {"enum": {}}}},
        "enum at #/properties/q is an empty object, not a list of values",
    ),
    "properties_list": (
        {"type": "object", "properties": []},
        "properties at # is an empty list, not an object of schemas",
    ),
    "property_as_word": (  # a common slip: the type's name where its schema goes
        {"type": "object", "properties": {"q": "string"}},
        "schema at #/properties/q is a string ('string'), not an object or a boolean",
    ),
    "unknown_type": (
        {"type": "object", "properties": {"q": {"type": "strnig"}}},
        "type at #/properties/q is a string ('strnig'), not a type name",
    ),
    "count_as_text": (
        {"type": "object", "properties": {"q": {"type": "string", "maxLength": "10"}}},
        "maxLength at #/properties/q is a string ('10'), not a whole number, 0 or more",
    ),
    "draft7_tuple": (
        {"type": "object", "properties": {"q": {"items": [{"type": "string"}]}}},
        "schema at #/properties/q/items is a list, not an object or a boolean",
    ),
    "empty_any_of": (
        {"type": "object", "properties": {"q": {"anyOf": []}}},
        "anyOf at #/properties/q is an empty list, not a non-empty list of schemas",
    ),
    "top_any_of": (
        {"type": "object", "anyOf": [{"required": ["a"]}, {"required": ["b"]}]},
        "its input schema has anyOf at its top, which a model API refuses",
    ),
}
ACCEPTED: dict[str, dict[str, object]] = {  # what the meta-schema allows, or does not judge
    "plain": {
        "type": "object",
        "properties": {
            "q": {"type": "array", "items": {"type": "string"}, "maxItems": 10.0},
            "flag": True,
            "ref": {"$ref": "#/$defs/R"},
            "choice": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": None},
            "data": {"const": {"items": 5}, "examples": [{"required": "x"}]},
        },
        "$defs": {"R": {"type": "string", "enum": ["a", 1]}},
        "required": ["q"],
        "x-vendor": {"items": 5},  # a keyword no vocabulary names is not judged
    },
}


async def _never(*args: object, **kwargs: object) -> ToolOutput:
    raise AssertionError("not called")


def test_a_schema_a_model_api_refuses_is_left_out_named() -> None:
    # probemcp23b: these schemas were passed to the model as listed; Anthropic checks each
    # tool's input_schema against JSON Schema 2020-12 (and refuses anyOf at its top), OpenAI
    # likewise, so one such tool made every model request of every run an HTTP 400.
    schemas = {name: schema for name, (schema, _) in REFUSED.items()} | ACCEPTED
    listed = [kept_entry({"name": name, "inputSchema": s}) for name, s in schemas.items()]
    made, problems = made_tools("h", McpServerConfig(command=("x",)), listed, _never)
    assert [tool.tool for tool in made] == list(ACCEPTED)
    assert made[0].parameters == ACCEPTED["plain"]
    assert len(problems) == len(REFUSED)
    for (name, (_, words)), problem in zip(REFUSED.items(), problems, strict=True):
        assert problem.startswith(f"MCP server 'h': tool '{name}' is left out: its input sch")
        assert words in problem, problem
    assert "JSON Schema 2020-12" in problems[0]
    assert "a model API refuses every request carrying it (HTTP 400)" in problems[0]


def test_an_array_schema_without_items_is_shown_with_any_items() -> None:
    # probemcp23b: a bare "type": "array" (common in MCP servers) was passed as listed, and
    # OpenAI refuses it in every request ("Invalid schema for function ...: array schema
    # missing items"). It is shown with "items": {}, which allows any item as the bare form
    # does; the entry as listed (what an approval's shape and the server hold) is unchanged.
    bare = {"type": "array"}
    schema: dict[str, Any] = {
        "type": "object",
        "properties": {
            "tags": bare,
            "maybe": {"anyOf": [{"type": ["array", "null"]}, {"type": "string"}]},
            "pair": {"type": "array", "prefixItems": [{"type": "string"}]},
            "ref": {"$ref": "#/$defs/Rows"},
        },
        "$defs": {"Rows": {"type": "array", "items": {"type": "array"}}},
    }
    entry = {"name": "t", "inputSchema": schema}
    plain = {
        "name": "p",
        "inputSchema": {"type": "object", "properties": {"q": {"type": "string"}}},
    }
    made, problems = made_tools(
        "h", McpServerConfig(command=("x",)), [kept_entry(entry), kept_entry(plain)], _never
    )
    assert problems == []
    shown = made[0].parameters
    assert shown["properties"]["tags"] == {"type": "array", "items": {}}
    assert shown["properties"]["maybe"]["anyOf"][0] == {"type": ["array", "null"], "items": {}}
    assert shown["properties"]["pair"] == schema["properties"]["pair"]  # prefixItems: as listed
    assert shown["$defs"]["Rows"]["items"] == {"type": "array", "items": {}}
    assert bare == {"type": "array"}  # the server's schema is not changed in place
    assert made[1].parameters is plain["inputSchema"]  # nothing bare: nothing copied
