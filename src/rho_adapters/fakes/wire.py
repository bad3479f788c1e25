"""A wire-level fake of an OpenAI-compatible server: real HTTP semantics, scripted answers.

``WireTransport`` is an ``httpx.AsyncBaseTransport``: hand it to a model through its HTTP seam,
``OpenAIChatModel(http=ClientPool(transport=...))`` (or to any httpx client), and each request
gets the next scripted ``Reply``, rendered as an SSE stream when the request asked for
``stream: true`` and as one JSON completion otherwise.
``LoopbackServer`` (``rho_adapters.fakes.loopback``) serves the same replies over a real socket.

Build replies with ``text_reply``, ``tool_reply``, ``http_error`` or ``raw_reply`` (exact bytes,
for framing tests), and inject faults with ``cut``, ``garbage``, ``stall`` and ``stream_error``::

    transport = WireTransport([
        http_error(429, "slow down", retry_after=2),
        tool_reply(call("list", {"path": "."})),
        text_reply("Done.", deltas=50, faults=(cut(after=10),)),
    ])

``transport.requests`` records every request body (parsed JSON) for assertions.

``rules`` make answers depend on the request, the way a real server's validation does: each
rule sees an ``Exchange`` (method, path, body) and returns a ``Reply`` or None; the first
answer wins, before the script is used (``fakes.llama_cpp_python`` has the rules of one real
server). A request no rule answers that is not a POST to ``.../chat/completions`` (a client
probing ``/props`` or ``/v1/models``) gets a 404 and is recorded in ``other_requests``.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable, Iterable, Mapping, Sequence
from typing import Any, Literal

import attrs
import httpx

from rho_domain.messages import ToolCall
from rho_domain.ports.clock import Clock

FaultKind = Literal["cut", "drop", "garbage", "stall", "error"]


class WireScriptExhausted(RuntimeError):
    """A request arrived after the last scripted reply."""


@attrs.frozen(kw_only=True)
class Fault:
    """A failure injected after ``after`` SSE events of a streamed reply.

    ``cut``: the body ends cleanly (no finish, no [DONE]); ``drop``: the connection breaks;
    ``garbage``: a non-JSON data event, then the stream continues; ``stall``: nothing more is
    sent (``seconds=None``: until the client's read timeout fires); ``error``: a mid-stream
    ``{"error": ...}`` event, then the stream ends.
    """

    kind: FaultKind
    after: int = 0
    seconds: float | None = None
    message: str = "the model failed mid-stream"


def cut(after: int = 0) -> Fault:
    """Fault: the body ends cleanly after ``after`` events (no finish, no [DONE])."""
    return Fault(kind="cut", after=after)


def drop(after: int = 0) -> Fault:
    """Fault: the connection breaks after ``after`` events."""
    return Fault(kind="drop", after=after)


def garbage(after: int = 0) -> Fault:
    """Fault: a non-JSON data event after ``after`` events, then the stream continues."""
    return Fault(kind="garbage", after=after)


def stall(after: int = 0, seconds: float | None = None) -> Fault:
    """Fault: nothing more after ``after`` events (``seconds=None``: past the read timeout)."""
    return Fault(kind="stall", after=after, seconds=seconds)


def stream_error(after: int = 0, message: str = "the model failed mid-stream") -> Fault:
    """Fault: a mid-stream ``{"error": ...}`` event after ``after`` events, then the end."""
    return Fault(kind="error", after=after, message=message)


@attrs.frozen
class Stall:
    """A pause in a rendered body; ``seconds=None`` waits for the client's read timeout."""

    seconds: float | None = None


@attrs.frozen
class Drop:
    """The connection breaks here."""


Piece = bytes | Stall | Drop


@attrs.frozen(kw_only=True)
class Reply:
    """One scripted answer. ``deltas``: how many text deltas (0 = one per word).
    ``usage``: ``(prompt_tokens, completion_tokens)``, or None to send no usage.
    ``raw``: exact network chunks to send instead of rendering (framing tests).
    ``error_body``: the exact JSON of an error answer (default: the OpenAI envelope)."""

    text: str = ""
    reasoning: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    deltas: int = 0
    usage: tuple[int, int] | None = (10, 5)
    finish_reason: str | None = None
    status: int = 200
    error: str = ""
    error_body: Mapping[str, Any] | None = None
    headers: Mapping[str, str] = attrs.field(factory=dict)
    faults: tuple[Fault, ...] = ()
    raw: tuple[bytes, ...] | None = None
    model: str = "fake-model"


@attrs.frozen(kw_only=True)
class Exchange:
    """One request as a rule sees it; ``body`` is the parsed JSON (``{}`` for none)."""

    method: str
    path: str
    body: Mapping[str, Any]

    @property
    def is_chat(self) -> bool:
        """Whether this is a chat completion request (not a probe or a tokenizer call)."""
        return self.method == "POST" and self.path.endswith("/chat/completions")


Rule = Callable[[Exchange], "Reply | None"]


def answer(rules: Sequence[Rule], exchange: Exchange) -> Reply | None:
    """The first rule's answer, or None."""
    for rule in rules:
        if (reply := rule(exchange)) is not None:
            return reply
    return None


def call(name: str, arguments: Mapping[str, Any] | str = "{}", call_id: str = "") -> ToolCall:
    """A tool call for ``tool_reply``; arguments as a mapping or raw (possibly bad) JSON."""
    args = arguments if isinstance(arguments, str) else json.dumps(dict(arguments))
    return ToolCall(id=call_id or f"call_{name}", name=name, arguments=args)


def text_reply(text: str, *, deltas: int = 0, **kw: Any) -> Reply:
    """A reply answering ``text`` in ``deltas`` pieces (0: one per word)."""
    return Reply(text=text, deltas=deltas, **kw)


def tool_reply(*calls: ToolCall, text: str = "", **kw: Any) -> Reply:
    """A reply that calls ``calls`` (with optional text before them)."""
    return Reply(text=text, tool_calls=calls, **kw)


def http_error(
    status: int, message: str = "error", *, retry_after: float | None = None, **kw: Any
) -> Reply:
    """A reply that is an HTTP error ``status`` (with Retry-After when given)."""
    headers = dict(kw.pop("headers", {}))
    if retry_after is not None:
        headers["retry-after"] = f"{retry_after:g}"
    return Reply(status=status, error=message, headers=headers, **kw)


def raw_reply(*chunks: bytes, status: int = 200, **kw: Any) -> Reply:
    """Send these exact network chunks as the body of a 200 event-stream."""
    return Reply(raw=chunks, status=status, **kw)


def _split(text: str, deltas: int) -> list[str]:
    if not text:
        return []
    if deltas <= 0:
        words = text.split(" ")
        return [w + " " for w in words[:-1]] + [words[-1]]
    size, extra = divmod(len(text), deltas)
    out, pos = [], 0
    for i in range(deltas):
        n = size + (1 if i < extra else 0)
        out.append(text[pos : pos + n])
        pos += n
    return [p for p in out if p]


def _chunk(reply: Reply, delta: Mapping[str, Any], finish: str | None = None) -> bytes:
    body = {
        "id": "chatcmpl-fake",
        "object": "chat.completion.chunk",
        "created": 0,
        "model": reply.model,
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }
    return b"data: " + json.dumps(body, separators=(",", ":")).encode() + b"\n\n"


def _finish_reason(reply: Reply) -> str:
    return reply.finish_reason or ("tool_calls" if reply.tool_calls else "stop")


def render_events(reply: Reply) -> list[bytes]:
    """The SSE events of a streamed reply, faults not applied."""
    events = [_chunk(reply, {"role": "assistant", "content": ""})]
    events += [_chunk(reply, {"reasoning": p}) for p in _split(reply.reasoning, 0)]
    events += [_chunk(reply, {"content": p}) for p in _split(reply.text, reply.deltas)]
    for i, c in enumerate(reply.tool_calls):
        head = {"index": i, "id": c.id, "type": "function"}
        events.append(_chunk(reply, {"tool_calls": [{**head, "function": {"name": c.name}}]}))
        args = c.arguments
        for part in (args[: len(args) // 2], args[len(args) // 2 :]):
            frag = {"index": i, "function": {"arguments": part}}
            events.append(_chunk(reply, {"tool_calls": [frag]}))
    events.append(_chunk(reply, {}, _finish_reason(reply)))
    if reply.usage is not None:
        usage = {"prompt_tokens": reply.usage[0], "completion_tokens": reply.usage[1]}
        usage["total_tokens"] = reply.usage[0] + reply.usage[1]
        body = {"id": "chatcmpl-fake", "choices": [], "usage": usage}
        events.append(b"data: " + json.dumps(body).encode() + b"\n\n")
    events.append(b"data: [DONE]\n\n")
    return events


def render_stream(reply: Reply) -> list[Piece]:
    """The body of a streamed reply as network pieces, with the faults applied."""
    if reply.raw is not None:
        return list(reply.raw)
    events: list[Piece] = list(render_events(reply))
    for fault in sorted(reply.faults, key=lambda f: -f.after):
        at = min(fault.after, len(events))
        if fault.kind == "garbage":
            events.insert(at, b"data: {this is not json\n\n")
        elif fault.kind == "cut":
            events = events[:at]
        elif fault.kind == "drop":
            events = [*events[:at], Drop()]
        elif fault.kind == "stall":
            events = [*events[:at], Stall(fault.seconds), *events[at:]]
            if fault.seconds is None:
                events = events[: at + 1]
        else:
            error = {"error": {"message": fault.message, "type": "server_error", "code": 500}}
            events = [*events[:at], b"data: " + json.dumps(error).encode() + b"\n\n"]
    return events


def render_json(reply: Reply) -> bytes:
    """A non-streamed completion for the same reply."""
    message: dict[str, Any] = {"role": "assistant", "content": reply.text or None}
    if reply.reasoning:
        message["reasoning"] = reply.reasoning
    if reply.tool_calls:
        message["tool_calls"] = [
            {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
            for c in reply.tool_calls
        ]
    body: dict[str, Any] = {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "model": reply.model,
        "choices": [{"index": 0, "message": message, "finish_reason": _finish_reason(reply)}],
    }
    if reply.usage is not None:
        body["usage"] = {"prompt_tokens": reply.usage[0], "completion_tokens": reply.usage[1]}
    return json.dumps(body).encode()


def render_error(reply: Reply) -> bytes:
    """The JSON error body of an error reply, in the OpenAI shape."""
    if reply.error_body is not None:
        return json.dumps(dict(reply.error_body)).encode()
    return json.dumps(
        {"error": {"message": reply.error, "type": "fake_error", "param": None, "code": None}}
    ).encode()


class _Body(httpx.AsyncByteStream):
    def __init__(self, pieces: list[Piece], read_timeout: float | None, clock: Clock | None):
        self._pieces, self._timeout, self._clock = pieces, read_timeout, clock

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for piece in self._pieces:
            if isinstance(piece, Drop):
                raise httpx.RemoteProtocolError("peer closed connection (injected drop)")
            if isinstance(piece, Stall):
                wait = piece.seconds if piece.seconds is not None else self._timeout
                await self._sleep(wait if wait is not None else 3600.0)
                if piece.seconds is None or (self._timeout and piece.seconds >= self._timeout):
                    raise httpx.ReadTimeout("no data within the read timeout (injected stall)")
                continue
            yield piece

    async def _sleep(self, seconds: float) -> None:
        if self._clock is not None:
            await self._clock.sleep(seconds)
        else:
            await asyncio.sleep(seconds)


class WireTransport(httpx.AsyncBaseTransport):
    """Answers each request with the next reply. ``clock`` makes stalls instant and
    deterministic (a FakeClock advances by the client's read timeout, then the read times out).
    ``repeat=True`` cycles the script forever (benchmarks)."""

    def __init__(
        self,
        replies: Iterable[Reply],
        *,
        clock: Clock | None = None,
        repeat: bool = False,
        rules: Sequence[Rule] = (),
    ) -> None:
        self.replies = list(replies)
        self.rules = list(rules)
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.urls: list[str] = []
        self.other_requests: list[str] = []
        self._clock, self._repeat, self._next = clock, repeat, 0

    def next_reply(self) -> Reply:
        """The next scripted reply; ``WireScriptExhausted`` when none is left."""
        if self._next >= len(self.replies):
            if not self._repeat or not self.replies:
                raise WireScriptExhausted(f"no reply scripted for request {self._next + 1}")
            self._next = 0
        reply = self.replies[self._next]
        self._next += 1
        return reply

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        """Answer one request from the script (recorded in ``requests``)."""
        body = json.loads(await request.aread() or b"{}")
        exchange = Exchange(method=request.method, path=request.url.path, body=body)
        reply = answer(self.rules, exchange)
        if not exchange.is_chat:
            self.other_requests.append(f"{request.method} {request.url.path}")
            if reply is None:
                return httpx.Response(404, json={"detail": "Not Found"})
        else:
            self.requests.append(body)
            self.headers.append(dict(request.headers))
            self.urls.append(str(request.url))
        reply = reply or self.next_reply()
        headers = dict(reply.headers)
        if reply.status >= 400:
            headers.setdefault("content-type", "application/json")
            return httpx.Response(reply.status, headers=headers, content=render_error(reply))
        if reply.raw is None and not body.get("stream"):
            headers.setdefault("content-type", "application/json")
            return httpx.Response(reply.status, headers=headers, content=render_json(reply))
        headers.setdefault("content-type", "text/event-stream")
        timeout = request.extensions.get("timeout", {}).get("read")
        stream = _Body(render_stream(reply), timeout, self._clock)
        return httpx.Response(reply.status, headers=headers, stream=stream)
