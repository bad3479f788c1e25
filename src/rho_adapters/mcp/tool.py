r"""One MCP server tool as a tool handler of ours: ``mcp__<server>__<tool>``.

Its schema is the server's ``inputSchema``, passed through (our validator checks the subset it
knows; the server checks the rest), an array schema without ``items`` given ``"items": {}``
(``schema_kinds.as_sent``: the same meaning, a form OpenAI takes). Its risk is the
operator's word, not the server's: a tool is read-only only when its server's
``read_only_tools`` names it, else every call is dangerous (asked about under the readonly
and developer profiles). The server's own annotations (``readOnlyHint``) are not trusted: a
server describes itself.

What a server says about a tool goes into every model request: its description (or title) is
cut to ``MAX_DESCRIPTION`` characters, and a tool is not made at all (``left_out``) when its
name is over ``MAX_TOOL_NAME`` characters (the description names it, so does every call's
trace), its input schema is not an object's (``_not_an_object``: a string, a list, a
``"type": "string"``), is one a model API refuses (``schema_kinds``: ``"required": "q"``),
is larger than ``MAX_SCHEMA`` bytes of JSON or holds a number JSON
cannot carry (``NaN``, ``Infinity``, ``1e400``: Python's json reads them from a server's
message) or a lone surrogate (``"\ud800"``): every model request would fail to encode; a
description's lone surrogates are shown as escapes. Which of a server's tools are made,
and the problems its listing draws, are ``shown_tools``'s.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Mapping
from typing import Any, Protocol

from rho_adapters.mcp.server_text import said
from rho_domain.json_schema import MAX_SCHEMA_DEPTH
from rho_domain.schema_kinds import as_sent, misfit
from rho_domain.tools.base import (
    DANGEROUS,
    READ_ONLY,
    ToolContext,
    ToolHandler,
    ToolOutput,
    ToolPolicy,
)
from rho_domain.tools.truncation import truncate_middle, unicode_text


class Caller(Protocol):
    """How an ``McpTool`` calls its server's tool (``McpToolSource.call``)."""

    def __call__(
        self,
        server: str,
        tool: str,
        arguments: Mapping[str, Any],
        ctx: ToolContext,
        /,
        *,
        listed: Mapping[str, Any] | None = None,
    ) -> Awaitable[ToolOutput]:
        """Call ``tool`` of ``server``; ``listed``: its ``tools/list`` entry as the handler
        was made from it (what the model and the call's answerer were shown)."""
        ...


_EMPTY_SCHEMA: Mapping[str, Any] = {"type": "object", "properties": {}}
MAX_DESCRIPTION = 4_000  # characters of a tool's description the model is shown
MAX_SCHEMA = 64 * 1024  # bytes of JSON of the largest input schema a tool may have
MAX_LISTING = 16 * 1024 * 1024  # bytes of JSON of the entries kept of one tools/list
MAX_TOOL_NAME = 128  # characters: the specification's SHOULD (2025-11-25), the SDK's warning


def shown_name(name: str) -> str:
    """A server's tool name as a message quotes it: ``repr``, cut past ``MAX_TOOL_NAME``."""
    return repr(name if len(name) <= MAX_TOOL_NAME else name[:MAX_TOOL_NAME] + "...")


def left_out(tool: Mapping[str, Any]) -> str:
    """Why ``tool`` (a ``tools/list`` entry) is not made: its name is over ``MAX_TOOL_NAME``
    characters, its input schema not an object's (``_not_an_object``), one a model API
    refuses (``schema_kinds.misfit``: ``"items": 5``), over ``MAX_SCHEMA`` bytes of JSON,
    or not JSON at all (a
    number JSON cannot carry, or a lone surrogate: the model client cannot encode a request
    holding one); "" when it is made."""
    length = len(str(tool["name"]))
    if length > MAX_TOOL_NAME:
        return (
            f"its name is {length:,} characters (at most {MAX_TOOL_NAME}; the model is shown "
            "it with the tool)"
        )
    if why := _not_an_object(tool.get("inputSchema")):
        return why
    if why := _schema_shape(tool.get("inputSchema")):
        return why
    schema = tool.get("inputSchema")
    if isinstance(schema, dict) and (why := misfit(schema)):
        return why  # a keyword's value of the wrong kind: every model request refused
    try:  # as a model request encodes it; safe: it nests MAX_SCHEMA_DEPTH at most
        text = json.dumps(tool.get("inputSchema"), allow_nan=False, ensure_ascii=False)
        size = len(text.encode("utf-8"))
    except ValueError as exc:  # NaN, Infinity: Python's json reads them, 1e400 as infinity
        what = (
            "text that is not Unicode (a lone surrogate, such as \\ud800)"
            if isinstance(exc, UnicodeEncodeError)
            else "a number JSON cannot carry (NaN, Infinity, or past 1.8e308)"
        )
        return (
            f"its input schema holds {what}; every model request would carry it, and none "
            "could be sent"
        )
    if size <= MAX_SCHEMA:
        return ""
    return (
        f"its input schema is {size:,} bytes of JSON (at most {MAX_SCHEMA:,}; every model "
        "request would carry it)"
    )


def _not_an_object(schema: object) -> str:
    """Why ``schema`` (an ``inputSchema``) describes no object of arguments: it is not a JSON
    object, or its ``type`` is not ``"object"``; "" when it does, or is absent (no
    arguments; a schema without ``type`` is read as an object's). The model would be shown
    an empty object in its place (its arguments are always one), never what was listed."""
    if schema is None or (isinstance(schema, dict) and schema.get("type", "object") == "object"):
        return ""
    what = (
        f"of type {said(repr(schema.get('type')), 100)}"
        if isinstance(schema, dict)
        else f"a JSON {type(schema).__name__}"
    )
    return (
        f"its input schema is {what}, not an object schema (a tool's arguments are an "
        'object: "type": "object")'
    )


def _schema_shape(schema: object) -> str:
    """Why ``schema``'s shape is refused, before it is encoded: it nests objects and arrays
    more than ``MAX_SCHEMA_DEPTH`` deep (every model request encodes it, deep in the stack:
    RecursionError ended each run), or holds more than ``MAX_SCHEMA`` values (each at least
    a byte of JSON); "" when it is neither. A loop that stops at either bound: it neither
    recurses nor walks a schema of 256 MiB."""
    level: list[dict[str, Any] | list[Any]] = [schema] if isinstance(schema, dict | list) else []
    values = 0
    for _ in range(MAX_SCHEMA_DEPTH):
        deeper: list[dict[str, Any] | list[Any]] = []
        for node in level:
            for child in node.values() if isinstance(node, dict) else node:
                values += 1
                if values > MAX_SCHEMA:
                    return f"its input schema holds more than {MAX_SCHEMA:,} values"
                if isinstance(child, dict | list):
                    deeper.append(child)
        level = deeper
    if level:
        return f"its input schema nests objects and arrays more than {MAX_SCHEMA_DEPTH} deep"
    return ""


def kept_entry(tool: Mapping[str, Any]) -> dict[str, Any]:
    """What is kept of a ``tools/list`` entry (a dict with a string ``name``): its name,
    title, description (cut to ``MAX_DESCRIPTION``) and input schema; for one ``left_out``,
    its name cut and why (``left_out``). Only these keys: the rest of what the server sent,
    and the part of it the model is never shown, is not held for the session's life."""
    name = str(tool["name"])
    if why := left_out(tool):
        return {"name": name[: MAX_TOOL_NAME + 1], "left_out": why}
    kept: dict[str, Any] = {"name": name, "inputSchema": tool.get("inputSchema")}
    for key in ("title", "description"):
        if (value := tool.get(key)) is not None:
            # a lone surrogate (JSON's "\ud800") shown as an escape: no request could carry it
            kept[key] = truncate_middle(unicode_text(str(value)), MAX_DESCRIPTION)
    return kept


class McpTool(ToolHandler):
    """Tool ``tool`` (its ``tools/list`` entry) of server ``server``, called through ``call``."""

    def __init__(
        self,
        *,
        name: str,
        server: str,
        tool: Mapping[str, Any],
        read_only: bool,
        call: Caller,
    ) -> None:
        self._name = name
        self.server = server
        self.tool = str(tool["name"])
        self._listed = tool
        description = truncate_middle(
            str(tool.get("description") or tool.get("title") or ""), MAX_DESCRIPTION
        )
        self._description = f"{description}\n(MCP server {server!r}, tool {self.tool!r})".strip()
        schema = tool.get("inputSchema")
        self._parameters: Mapping[str, Any] = _EMPTY_SCHEMA
        if isinstance(schema, dict):  # an object's (``left_out``): its properties shown
            self._parameters = as_sent(schema)  # a bare array: every OpenAI request refused
        self._policy = READ_ONLY if read_only else DANGEROUS
        self._call = call

    @property
    def name(self) -> str:
        """``mcp__<server>__<tool>``."""
        return self._name

    @property
    def description(self) -> str:
        """The server's description, and where the tool comes from."""
        return self._description

    @property
    def parameters(self) -> Mapping[str, Any]:
        """The server's ``inputSchema``."""
        return self._parameters

    def policy_for(self, arguments: Mapping[str, Any]) -> ToolPolicy:
        """Read-only when the server's ``read_only_tools`` names the tool, else dangerous."""
        return self._policy

    async def handle(self, arguments: Mapping[str, Any], ctx: ToolContext) -> ToolOutput:
        """Call the tool on its server (see ``McpToolSource.call``), as it was listed."""
        return await self._call(self.server, self.tool, arguments, ctx, listed=self._listed)
