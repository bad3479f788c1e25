"""JSON-RPC 2.0 over any MCP transport: requests matched to responses, notifications out and in.

A transport hands every message it receives to ``RpcPeer.receive`` as text (a stdio line, an HTTP
body, an SSE event's data). What is not JSON-RPC is never fatal by itself: text that is not JSON (a
server printing to its stdout) is counted and skipped, a response without a ``result`` or ``error``
fails its own request with ``McpProtocolError``, so does an HTTP reply that ended without its
request's answer (``Transport.answers_in_reply``), a message of more than ``MAX_VALUES`` values is
not decoded (its request, unanswered, says so when it times out), and a response to no request is
skipped: one to a request we gave up on (its deadline, its caller's cancellation) is late, counted
in ``late``, never "could not be read" (a later timeout said so of it). A server's requests are
answered (``ping``; anything else "method not found": this client offers no capabilities) while
fewer than ``MAX_ANSWERS_WAITING`` answers wait to be sent; past that the request goes unanswered
(counted in ``unanswered``): a server that floods requests and reads nothing would otherwise have
each answer wait in memory. So an answer is small: its id is at most ``MAX_REQUEST_ID`` characters
(a request with another id is not JSON-RPC, counted and skipped) and the method it names is cut.
Every request has a deadline: past it, or when the caller is cancelled, the server is told
(``notifications/cancelled``) and the caller gets ``McpTimeout`` naming the setting, or its
cancellation (never of ``initialize``: ``UNCANCELLED``; ``STOPPED``: which, it cannot tell).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
from collections.abc import Awaitable, Callable

from rho_adapters.mcp.server_text import answerable_id, our_id, preview, said, values_at_most
from rho_adapters.mcp.transport import Message, Transport
from rho_domain.errors import McpError, McpProtocolError, McpTimeout

_METHOD_NOT_FOUND = -32601
# values one message may hold, counted before it is decoded from its commas, colons and
# brackets (an upper bound): decoded, a value costs 30 to 60 bytes where its text took 2 or
# 3 ('{},'), so the bytes a message may take bounded memory 20 times over
MAX_VALUES = 4_000_000
MAX_ANSWERS_WAITING = 64  # answers to a server's requests not yet sent (it reads slowly)
UNCANCELLED = frozenset({"initialize"})  # MCP: it "MUST NOT be cancelled by clients"
STOPPED = "rho-agent stopped the call (its run was cancelled or its tool_timeout passed)"


class RpcPeer:
    """The client side of one JSON-RPC connection to the MCP server ``server``."""

    def __init__(
        self,
        server: str,
        transport: Transport,
        on_notification: Callable[[str, Message], None],
        on_gone: Callable[[str], None] = lambda why: None,
    ) -> None:
        self.server = server
        self.transport = transport
        self.malformed = 0  # messages received that were not JSON-RPC
        self.unanswered = 0  # the server's requests dropped: too many answers waited
        self.late = 0  # answers to requests given up on (their deadline, a cancelled caller)
        self.last_malformed = ""
        self.gone: str | None = None  # why the server is gone, once it is
        self._on_notification = on_notification
        self._on_gone = on_gone
        self._ids = itertools.count(1)
        self._last_id = 0  # the id of the latest request sent: a lower one was ours
        self._pending: dict[int, asyncio.Future[Message]] = {}
        self._background: set[asyncio.Task[None]] = set()
        self._answering: set[asyncio.Task[None]] = set()  # answers not yet sent

    async def start(self) -> None:
        """Start the transport (see ``Transport.start``)."""
        await self.transport.start(self.receive, self.closed)

    async def request(
        self, method: str, params: Message | None, *, timeout: float, setting: str
    ) -> Message:
        """Send a request and return its ``result``. Raises ``McpError`` for the server's
        error answer or its exit, ``McpTimeout`` naming ``setting`` after ``timeout`` s,
        ``McpProtocolError`` for a malformed answer."""
        if self.gone is not None:
            raise McpError(
                f"MCP server {self.server!r} is not running: {self.gone}", server=self.server
            )
        request_id = self._last_id = next(self._ids)
        malformed = self.malformed  # what could not be read while this request waited
        future: asyncio.Future[Message] = asyncio.get_running_loop().create_future()
        self._pending[request_id] = future
        message: Message = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        try:
            async with asyncio.timeout(timeout):
                return await self._answered(message, future, malformed)
        except TimeoutError:
            self._cancel(method, request_id, f"no answer within {setting} ({timeout:g} s)")
            unread = self.unread_since(malformed)
            raise McpTimeout(
                f"MCP server {self.server!r} gave no answer to {method} within {timeout:g} s "
                f"(the {setting}; raise mcp_servers.{self.server}.{setting} if it is just slow)"
                f"{'; ' + unread if unread else ''}",
                server=self.server,
            ) from None
        except asyncio.CancelledError:
            self._cancel(method, request_id, STOPPED)
            raise
        finally:
            self._pending.pop(request_id, None)

    async def _answered(
        self, message: Message, future: asyncio.Future[Message], malformed: int
    ) -> Message:
        """Send ``message`` and return its answer, which may come while it is still being
        sent: over HTTP the answer is an event of the POST's stream, which a server may keep
        open after it; the answer ends the sending (its stream is closed). A reply that
        ended without the answer, where answers come in replies (``answers_in_reply``), is
        ``McpProtocolError`` at once: waiting would only reach the request's deadline.
        ``malformed``: the count of unreadable messages when the request began."""
        sending = asyncio.ensure_future(self.transport.send(message))
        try:
            await asyncio.wait((sending, future), return_when=asyncio.FIRST_COMPLETED)
            if not future.done():
                await sending  # its McpError; sent, the answer is still to come
            if not future.done() and self.transport.answers_in_reply:
                unread = self.unread_since(malformed)
                raise McpProtocolError(
                    f"MCP server {self.server!r} ended its reply to {message['method']} without "
                    "the answer (over HTTP a request is answered in the reply to its POST; "
                    f"rho-agent resumes no event stream){'; ' + unread if unread else ''}",
                    server=self.server,
                )
            return await future
        finally:
            if not sending.done():
                sending.cancel()
            with contextlib.suppress(asyncio.CancelledError, McpError):  # its end, retrieved
                await sending

    async def notify(self, method: str, params: Message | None = None) -> None:
        """Send a notification."""
        message: Message = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        await self.transport.send(message)

    def unread_since(self, count: int) -> str:
        """Why an answer may never have come: the messages received that could not be read
        since ``malformed`` was ``count``, and the last of them; "" when there were none."""
        unread = self.malformed - count
        if not unread:
            return ""
        return (
            f"it sent {unread} message(s) that could not be read meanwhile, the last: "
            f"{self.last_malformed}"
        )

    def receive(self, text: str) -> None:
        """Handle one message received, or a JSON array of them (``[]`` is none: unread)."""
        # a text of n characters holds at most n / 2 values ('0,0,...'): only a longer one
        # is counted (some 3 ms a MB, more than json takes on a plain text result)
        if len(text) > 2 * MAX_VALUES and (values := values_at_most(text)) > MAX_VALUES:
            self._malformed(f"a message of up to {values:,} values (at most {MAX_VALUES:,})")
            return
        try:
            value = json.loads(text)
        except (ValueError, RecursionError):  # nested too deep to decode: malformed too
            self._malformed(text)
            return
        items = (value or [None]) if isinstance(value, list) else [value]  # JSON-RPC 2.0
        if unread := sum(not self._one(item, text) for item in items):
            self._malformed(text, unread)

    def closed(self, why: str) -> None:
        """The server is gone: every waiting request fails with ``why``."""
        if self.gone is None:
            self.gone = why
            self._on_gone(why)
        for future in self._pending.values():
            if not future.done():
                future.set_exception(
                    McpError(f"MCP server {self.server!r} {why}", server=self.server)
                )

    async def aclose(self) -> None:
        """Close the transport and fail what still waits."""
        try:
            await self.transport.aclose()
        finally:
            self.closed("was shut down")
            for task in self._background:
                task.cancel()

    def _one(self, item: object, text: str) -> bool:
        """Handle one message; False: not JSON-RPC (``receive`` counts it, quoted once)."""
        if not isinstance(item, dict) or item.get("jsonrpc") != "2.0":
            return False
        if "method" in item:
            method = item["method"]
            params = item["params"] if isinstance(item.get("params"), dict) else {}
            if "id" in item and not answerable_id(item["id"]):
                return False  # an id we could not echo back at a bounded cost
            if "id" in item:
                self._answer(item["id"], method)
            elif isinstance(method, str):
                self._on_notification(method, params)
            return True
        ours = our_id(item.get("id")) and 0 < item["id"] <= self._last_id
        future = self._pending.get(item["id"]) if ours else None
        if future is None or future.done():
            if ours:
                self.late += 1  # read well: its request was given up on, or answered twice
            else:
                return False  # an answer to nothing we asked
        elif isinstance(error := item.get("error"), dict):
            future.set_exception(
                McpError(
                    f"MCP server {self.server!r} answered error {said(error.get('code'))}: "
                    f"{said(error.get('message', ''))}",
                    server=self.server,
                )
            )
        elif isinstance(item.get("result"), dict):
            future.set_result(item["result"])
        else:
            future.set_exception(
                McpProtocolError(
                    f"MCP server {self.server!r} sent a malformed JSON-RPC response (neither "
                    f"a result object nor an error): {preview(text)}",
                    server=self.server,
                )
            )
        return True

    def _answer(self, request_id: object, method: object) -> None:
        """Answer a server's request (``ping``, else method not found), unless too many
        answers wait; the answer is small (``answerable_id``, the method said cut)."""
        if len(self._answering) >= MAX_ANSWERS_WAITING:
            self.unanswered += 1
            return
        if method == "ping":
            reply: Message = {"jsonrpc": "2.0", "id": request_id, "result": {}}
        else:
            reply = {
                "jsonrpc": "2.0",
                "id": request_id,
                "error": {"code": _METHOD_NOT_FOUND, "message": f"{said(method, 100)} unsupported"},
            }
        self._later(lambda: self.transport.send(reply), answering=True)

    def _cancel(self, method: str, request_id: int, reason: str) -> None:
        if self.gone is None and method not in UNCANCELLED:
            params = {"requestId": request_id, "reason": reason}
            self._later(lambda: self.notify("notifications/cancelled", params))

    def _later(self, send: Callable[[], Awaitable[None]], *, answering: bool = False) -> None:
        """Send without making the caller wait (a cancelled caller must not wait at all).
        ``send`` makes the coroutine when the task runs: a task cancelled before its first
        turn leaves none unawaited. An ``answering`` send counts among the answers waiting."""

        async def run() -> None:
            with contextlib.suppress(McpError):  # the server is gone; nothing waits for this
                await send()

        task = asyncio.ensure_future(run())
        self._background.add(task)
        task.add_done_callback(self._background.discard)
        if answering:
            self._answering.add(task)
            task.add_done_callback(self._answering.discard)

    def _malformed(self, text: str, count: int = 1) -> None:
        # once a message, not an item: a 320 KB batch's 160,000 quotes took 2 s of CPU
        self.malformed += count
        self.last_malformed = preview(text)
