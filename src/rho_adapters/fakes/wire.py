"""A wire-level fake of an OpenAI-compatible server: real HTTP semantics, scripted answers.

``WireTransport`` (``rho_adapters.fakes``; defined in ``fakes.wire_transport``) is an
``httpx.AsyncBaseTransport``: hand it to a model through its HTTP seam,
``OpenAIChatModel(http=ClientPool(transport=...))`` (or to any httpx client), and each request
gets the next scripted ``Reply``, rendered (``fakes.wire_render``) as an SSE stream when the
request asked for ``stream: true`` and as one JSON completion otherwise.
``LoopbackServer`` (``rho_adapters.fakes.loopback``) serves the same replies over a real socket.
This module holds the script: the replies, their faults and the rules.

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

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal

import attrs

from rho_domain.messages import ToolCall
from rho_domain.value_methods import value_eq, value_hash, value_repr

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

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

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


@attrs.frozen(kw_only=True)
class Reply:
    """One scripted answer. ``deltas``: how many text deltas (0 = one per word).
    ``usage``: ``(prompt_tokens, completion_tokens)``, or None to send no usage.
    ``raw``: exact network chunks to send instead of rendering (framing tests).
    ``error_body``: the exact JSON of an error answer (default: the OpenAI envelope)."""

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

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

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

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
