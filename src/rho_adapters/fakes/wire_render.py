"""A scripted reply as the bytes an OpenAI-compatible server sends.

``render_events`` gives a streamed reply's SSE events, ``render_stream`` the same with the
reply's faults applied (as network pieces: bytes, a ``Stall``, a ``Drop``), ``render_json`` a
non-streamed completion and ``render_error`` an error body: pure functions of a ``Reply``
(``fakes.wire``). ``WireTransport`` and ``LoopbackServer`` send what they return.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import attrs

from rho_adapters.fakes.wire import Reply
from rho_domain.value_methods import value_eq, value_hash, value_repr


@attrs.frozen
class Stall:
    """A pause in a rendered body; ``seconds=None`` waits for the client's read timeout."""

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    seconds: float | None = None


@attrs.frozen
class Drop:
    """The connection breaks here."""

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash


Piece = bytes | Stall | Drop


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
