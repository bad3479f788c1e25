"""One MCP server's client: the ``initialize`` handshake, ``tools/list`` and ``tools/call``.

The handshake offers the newest revision of the ones the official Python SDK reaches by
``initialize`` (``HANDSHAKE_VERSIONS``) and accepts any of them in the server's answer;
another answer is refused with the versions we speak. A server's ``instructions`` are kept
for the system prompt, cut to ``MAX_INSTRUCTIONS`` characters, and of its ``serverInfo`` the
name and version (``said``): nothing else of the answer is held. ``tools/list`` follows
``nextCursor`` pages (a cursor seen twice ends the listing with an error rather than a loop,
more than ``MAX_PAGES`` pages with one naming that bound); the cursors seen are held as
digests, since a server chooses their length (100 distinct 10 MB cursors held 1 GB).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections.abc import Callable, Mapping
from typing import Any

from rho_adapters.mcp.jsonrpc import RpcPeer
from rho_adapters.mcp.server_text import said
from rho_adapters.mcp.tool import MAX_LISTING, kept_entry
from rho_adapters.mcp.transport import Message, Transport
from rho_domain.errors import McpProtocolError
from rho_domain.tools.truncation import truncate_middle, unicode_text

# Newest first: the revisions the official SDK (mcp 2.3) negotiates through ``initialize``.
# Its stateless 2026-07-28 revision (no handshake, per-request envelopes) is not spoken here.
HANDSHAKE_VERSIONS = ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")
CLIENT_INFO = {"name": "rho-agent", "version": "1"}
MAX_PAGES = 100
MAX_INSTRUCTIONS = 10_000  # characters of a server's instructions kept (the system prompt's)


class McpClient:
    """A connection to one server. ``on_list_changed`` is called when the server says its
    tool list changed (``notifications/tools/list_changed``), ``on_gone`` once when it is
    gone (it exited, or was shut down), with why."""

    def __init__(
        self,
        server: str,
        transport: Transport,
        on_list_changed: Callable[[], None],
        on_gone: Callable[[str], None] = lambda why: None,
    ) -> None:
        self.server = server
        self.transport = transport
        self.peer = RpcPeer(server, transport, self._notification, on_gone)
        self.instructions = ""
        self.protocol_version = ""
        self.server_info: Mapping[str, Any] = {}
        self.offers_tools = False  # its initialize answer declared the tools capability
        self._on_list_changed = on_list_changed

    async def start(self, *, timeout: float) -> None:
        """Start the transport, initialize, and say so. Raises ``McpError`` (``McpTimeout``
        naming ``startup_timeout``)."""
        await self.peer.start()
        result = await self.peer.request(
            "initialize",
            {
                "protocolVersion": HANDSHAKE_VERSIONS[0],
                "capabilities": {},
                "clientInfo": CLIENT_INFO,
            },
            timeout=timeout,
            setting="startup_timeout",
        )
        version = result.get("protocolVersion")
        if version not in HANDSHAKE_VERSIONS:
            spoken = (
                f"speaks protocol version {said(repr(version))}"
                if isinstance(version, str)
                else "answered initialize without a protocolVersion string"
            )
            raise McpProtocolError(
                f"MCP server {self.server!r} {spoken}; rho-agent speaks "
                f"{', '.join(HANDSHAKE_VERSIONS)}",
                server=self.server,
            )
        self.protocol_version = str(version)
        self.transport.negotiated(self.protocol_version)
        # kept as they are used, not as sent: the answer's text may be 256 MiB
        instructions = result.get("instructions")
        if isinstance(instructions, str):
            # a lone surrogate (JSON's "\ud800") shown as an escape: the system prompt
            # goes into every model request, which could not be encoded with one
            self.instructions = truncate_middle(
                unicode_text(instructions.strip()), MAX_INSTRUCTIONS
            )
        # a server with tools declares the capability (MCP's lifecycle); one without it is
        # not asked tools/list, which it would refuse as an unknown method, failing its start
        capabilities = result.get("capabilities")
        self.offers_tools = isinstance(capabilities, dict) and isinstance(
            capabilities.get("tools"), dict
        )
        info = result.get("serverInfo")
        if isinstance(info, dict):
            self.server_info = {k: said(info[k]) for k in ("name", "version") if k in info}
        await self.peer.notify("notifications/initialized")

    async def list_tools(self, *, timeout: float) -> list[Message]:
        """Every tool the server lists, as ``kept_entry`` keeps it (a ``Tool`` object with a
        ``name``), at most ``MAX_LISTING`` bytes of them (past it ``McpProtocolError``);
        none, unasked, from a server that declared no ``tools`` capability."""
        if not self.offers_tools:
            return []
        tools: list[Message] = []
        cursor: str | None = None
        seen: set[bytes] = set()  # the digests of the cursors met (``_cursor_digest``)
        size = 0  # bytes of JSON of the entries kept
        for _ in range(MAX_PAGES):
            params = {"cursor": cursor} if cursor is not None else None
            page = await self.peer.request(
                "tools/list", params, timeout=timeout, setting="startup_timeout"
            )
            listed = page.get("tools")
            if not isinstance(listed, list):
                raise McpProtocolError(
                    f"MCP server {self.server!r}: tools/list answered without a tools list",
                    server=self.server,
                )
            # in a thread: each entry is measured (its schema walked, its kept form encoded),
            # Python's work over what may be millions of values
            for kept, kept_size in await asyncio.to_thread(_kept_page, listed):
                tools.append(kept)
                size += kept_size
                if size > MAX_LISTING:
                    raise McpProtocolError(
                        f"MCP server {self.server!r}: tools/list lists more than "
                        f"{MAX_LISTING // 2**20} MiB of tools (their names, descriptions and "
                        "schemas as kept); rho-agent keeps at most that",
                        server=self.server,
                    )
            cursor = page.get("nextCursor")
            if not isinstance(cursor, str) or not cursor:
                return tools
            digest = _cursor_digest(cursor)
            if digest in seen:
                raise McpProtocolError(
                    f"MCP server {self.server!r}: tools/list pages do not end (a page gave "
                    f"again the cursor of an earlier one: {said(repr(cursor))})",
                    server=self.server,
                )
            seen.add(digest)
        raise McpProtocolError(
            f"MCP server {self.server!r}: tools/list runs past {MAX_PAGES} pages, the most "
            f"rho-agent reads (the next cursor: {said(repr(cursor))}); no setting raises it: "
            "ask the server's author for larger pages",
            server=self.server,
        )

    async def call_tool(
        self, tool: str, arguments: Mapping[str, Any], *, timeout: float
    ) -> Message:
        """The ``CallToolResult`` of one call (``content``, ``structuredContent``,
        ``isError``, made a boolean: ``_error_flag``). Raises ``McpError``,
        ``McpProtocolError`` when ``content`` is there but not a list (the specification's
        array of blocks), or ``isError`` is no boolean's spelling; cancelling the caller cancels
        the call."""
        result = await self.peer.request(
            "tools/call",
            {"name": tool, "arguments": dict(arguments)},
            timeout=timeout,
            setting="call_timeout",
        )
        content = result.get("content")
        if content is not None and not isinstance(content, list):
            raise McpProtocolError(
                f"MCP server {self.server!r} answered tools/call {said(repr(tool))} with "
                f"content that is {_json_kind(content)}, not a list of blocks",
                server=self.server,
            )
        flag = result.get("isError")
        if (failed := _error_flag(flag)) is None:
            raise McpProtocolError(
                f"MCP server {self.server!r} answered tools/call {said(repr(tool))} with "
                f"isError {said(repr(flag), 40)}, not true or false",
                server=self.server,
            )
        return {**result, "isError": failed}

    async def aclose(self) -> None:
        """Shut the server down (see the transport's ``aclose``)."""
        await self.peer.aclose()

    def _notification(self, method: str, params: Message) -> None:
        del params
        if method == "notifications/tools/list_changed":
            self._on_list_changed()


# isError's spellings the official SDK's client takes (pydantic's lax bool), as meant
_FLAGS = dict.fromkeys(("1", "on", "t", "true", "y", "yes"), True)
_FLAGS |= dict.fromkeys(("0", "off", "f", "false", "n", "no"), False)


def _error_flag(value: object) -> bool | None:
    """A result's ``isError`` as the official SDK's client reads it: a boolean, absent
    (false), 0 or 1, or a string such as ``"true"`` or ``"no"``; None for anything else.
    Read as ``is True`` alone, ``"true"`` or ``1`` made a failed call the model's success."""
    if value is None or isinstance(value, bool):
        return bool(value)
    if isinstance(value, int | float) and value in (0, 1):
        return bool(value)
    return _FLAGS.get(value.lower()) if isinstance(value, str) else None


def _json_kind(value: object) -> str:
    """What JSON value ``value`` is, as a message names it (not the value: a server's)."""
    kinds = ((bool, "a boolean"), (int | float, "a number"), (str, "a string"), (dict, "an object"))
    return next((name for kind, name in kinds if isinstance(value, kind)), "null")


def _cursor_digest(cursor: str) -> bytes:
    r"""A page cursor as the loop check holds it: its SHA-256, 32 bytes whatever its length
    (``surrogatepass``: JSON's lone ``\ud800`` may be in it)."""
    return hashlib.sha256(cursor.encode("utf-8", "surrogatepass")).digest()


def _kept_page(listed: list[Any]) -> list[tuple[Message, int]]:
    """The entries of one ``tools/list`` page as ``kept_entry`` keeps them (those that are
    objects with a string ``name``), each with its size in bytes of JSON."""
    kept = [
        kept_entry(entry)
        for entry in listed
        if isinstance(entry, dict) and isinstance(entry.get("name"), str)
    ]
    return [(entry, len(json.dumps(entry))) for entry in kept]
