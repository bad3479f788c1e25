"""FakeAnthropic: the Anthropic Messages API as an httpx transport, with the real API's rules.

Each ``POST /v1/messages`` is checked the way the real API checks it, and a request that
breaks a rule gets the real refusal: status 400 and
``{"type": "error", "error": {"type": "invalid_request_error", "message": ...}}`` with the
API's wording. Otherwise it is answered with the next scripted ``ClaudeReply``, streamed as
the real API streams (``message_start``, ``content_block_start/delta/stop`` with
``thinking_delta`` + ``signature_delta``, ``redacted_thinking``, ``input_json_delta``,
``message_delta``, ``message_stop``)::

    server = FakeAnthropic([
        ClaudeReply(think("I should list."), use(call("list", {"path": "."}))),
        ClaudeReply(think("Two files."), say("Two files.")),
    ])
    model = AnthropicModel(model="claude", api_key="k", transport=server)

The rules (those of extended thinking with tools):

- every ``thinking`` block sent back must carry the signature this server minted for exactly
  that text, and every ``redacted_thinking`` block data it minted ("Invalid `signature`");
- an assistant turn holding thinking blocks must start with one;
- with thinking on, the assistant turn that made the last tool calls (whose results end the
  request) must start with a thinking block;
- with thinking off, a final assistant turn may not hold thinking;
- thinking may not be on when ``tool_choice`` forces tool use;
- every ``tool_use`` must be answered by a ``tool_result`` in the next user turn.

``requests`` records every request body; ``refusals`` every refusal message sent.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Literal

import attrs
import httpx

from rho_domain.messages import ToolCall
from rho_domain.value_methods import value_eq, value_hash, value_repr

_KEY = b"fake-anthropic-signing-key"
_DOCS = "https://docs.claude.com/en/docs/build-with-claude/extended-thinking"


@attrs.frozen
class Block:
    """One content block of a scripted reply."""

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    kind: Literal["thinking", "redacted_thinking", "text", "tool_use"]
    text: str = ""
    call: ToolCall | None = None


def think(text: str) -> Block:
    """A thinking block (the server signs it)."""
    return Block("thinking", text)


def redacted(data: str = "encrypted-reasoning") -> Block:
    """A redacted_thinking block (its data is minted by the server)."""
    return Block("redacted_thinking", data)


def say(text: str) -> Block:
    """A text block."""
    return Block("text", text)


def use(call: ToolCall) -> Block:
    """A tool_use block."""
    return Block("tool_use", call=call)


class ClaudeReply:
    """One scripted response: its blocks in order; ``stop_reason`` is ``tool_use`` when a
    block calls a tool, else ``end_turn``."""

    def __init__(self, *blocks: Block) -> None:
        self.blocks = blocks

    @property
    def stop_reason(self) -> str:
        """``tool_use`` or ``end_turn``."""
        return "tool_use" if any(b.kind == "tool_use" for b in self.blocks) else "end_turn"


class FakeAnthropicExhausted(RuntimeError):
    """A request arrived after the last scripted reply."""


def signature(thinking: str) -> str:
    """The signature this fake mints for a thinking text (an HMAC: any change breaks it)."""
    return hmac.new(_KEY, thinking.encode(), hashlib.sha256).hexdigest()


def _redacted_data(text: str) -> str:
    return "redacted:" + hmac.new(_KEY, b"r" + text.encode(), hashlib.sha256).hexdigest()


class FakeAnthropic(httpx.AsyncBaseTransport):
    """Answers Messages API requests from a script, refusing what the real API refuses."""

    def __init__(self, replies: Iterable[ClaudeReply]) -> None:
        self.replies = list(replies)
        self.requests: list[dict[str, Any]] = []
        self.refusals: list[str] = []
        self._next = 0

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        """One request: a 400 refusal, or the next reply as an SSE stream."""
        body = json.loads(await request.aread() or b"{}")
        self.requests.append(body)
        if problem := refusal(body):
            self.refusals.append(problem)
            error = {"type": "invalid_request_error", "message": problem}
            return httpx.Response(400, json={"type": "error", "error": error})
        if self._next >= len(self.replies):
            raise FakeAnthropicExhausted(f"no reply scripted for request {self._next + 1}")
        reply = self.replies[self._next]
        self._next += 1
        return httpx.Response(
            200,
            headers={"content-type": "text/event-stream"},
            content=b"".join(render(reply, body.get("model", "claude"))),
        )


def refusal(body: Mapping[str, Any]) -> str | None:
    """The real API's refusal of this request body, or None when it is accepted."""
    thinking_on = (body.get("thinking") or {}).get("type") == "enabled"
    choice = (body.get("tool_choice") or {}).get("type")
    if thinking_on and choice in ("any", "tool"):
        return "Thinking may not be enabled when `tool_choice` forces tool use."
    messages: Sequence[Mapping[str, Any]] = body.get("messages") or ()
    for i, message in enumerate(messages):
        if problem := _turn_refusal(i, message, messages, thinking_on=thinking_on):
            return problem
    return None


def _turn_refusal(
    i: int, message: Mapping[str, Any], messages: Sequence[Mapping[str, Any]], *, thinking_on: bool
) -> str | None:
    content = message.get("content")
    blocks: list[Mapping[str, Any]] = content if isinstance(content, list) else []
    kinds = [str(b.get("type")) for b in blocks]
    if message.get("role") != "assistant":
        return None
    thinking = {"thinking", "redacted_thinking"}
    for j, block in enumerate(blocks):
        if block.get("type") == "thinking" and block.get("signature") != signature(
            str(block.get("thinking", ""))
        ):
            return f"messages.{i}.content.{j}: Invalid `signature` in `thinking` block"
        if block.get("type") == "redacted_thinking" and not str(block.get("data", "")).startswith(
            "redacted:"
        ):
            return f"messages.{i}.content.{j}: Invalid `data` in `redacted_thinking` block"
    if thinking & set(kinds) and kinds[0] not in thinking:
        return (
            f"messages.{i}.content.0: If an assistant message contains any thinking blocks, "
            f"the first block must be thinking or redacted_thinking. Found {kinds[0]}."
        )
    calls = [str(b.get("id")) for b in blocks if b.get("type") == "tool_use"]
    answer = messages[i + 1] if i + 1 < len(messages) else None
    answered = {
        str(b.get("tool_use_id"))
        for b in (answer or {}).get("content") or ()
        if isinstance(b, Mapping) and b.get("type") == "tool_result"
    }
    if calls and answer is not None and not set(calls) <= answered:
        return (
            f"messages.{i + 1}: `tool_use` ids were found without `tool_result` blocks "
            f"immediately after: {', '.join(sorted(set(calls) - answered))}. Each `tool_use` "
            "block must have a corresponding `tool_result` block in the next message."
        )
    last_turn = i == len(messages) - 2 and answered
    if thinking_on and calls and last_turn and (not kinds or kinds[0] not in thinking):
        return (
            f"messages.{i}.content.0.type: Expected `thinking` or `redacted_thinking`, but "
            f"found `{kinds[0] if kinds else 'nothing'}`. When `thinking` is enabled, a final "
            "`assistant` message must start with a thinking block (preceeding the lastmost "
            "set of `tool_use` and `tool_result` blocks). We recommend you include thinking "
            "blocks from previous turns. To avoid this requirement, disable `thinking`. "
            f"Please consult our documentation at {_DOCS}"
        )
    if not thinking_on and i == len(messages) - 1 and thinking & set(kinds):
        return (
            f"messages.{i}.content.0: When thinking is disabled, an `assistant` message in "
            "the final position cannot contain `thinking`. To use thinking blocks, enable "
            "`thinking` in your request."
        )
    return None


def _event(name: str, **data: Any) -> bytes:
    return f"event: {name}\ndata: {json.dumps({'type': name, **data})}\n\n".encode()


def render(reply: ClaudeReply, model: str) -> list[bytes]:
    """The reply as the API's SSE events."""
    start = {"id": "msg_fake", "type": "message", "role": "assistant", "content": []}
    usage = {"input_tokens": 10, "output_tokens": 1}
    out = [_event("message_start", message={**start, "model": model, "usage": usage})]
    for index, block in enumerate(reply.blocks):
        out.extend(_block_events(index, block))
    out.append(
        _event(
            "message_delta",
            delta={"stop_reason": reply.stop_reason, "stop_sequence": None},
            usage={"output_tokens": 20},
        )
    )
    out.append(_event("message_stop"))
    return out


def _block_events(index: int, block: Block) -> list[bytes]:
    start, delta, stop = "content_block_start", "content_block_delta", "content_block_stop"
    if block.kind == "redacted_thinking":
        data = {"type": "redacted_thinking", "data": _redacted_data(block.text)}
        return [_event(start, index=index, content_block=data), _event(stop, index=index)]
    if block.kind == "thinking":
        return [
            _event(start, index=index, content_block={"type": "thinking", "thinking": ""}),
            _event(delta, index=index, delta={"type": "thinking_delta", "thinking": block.text}),
            _event(
                delta,
                index=index,
                delta={"type": "signature_delta", "signature": signature(block.text)},
            ),
            _event(stop, index=index),
        ]
    if block.kind == "text":
        return [
            _event(start, index=index, content_block={"type": "text", "text": ""}),
            _event(delta, index=index, delta={"type": "text_delta", "text": block.text}),
            _event(stop, index=index),
        ]
    call = block.call or ToolCall(id="toolu_0", name="unknown")
    tool = {"type": "tool_use", "id": call.id, "name": call.name, "input": {}}
    return [
        _event(start, index=index, content_block=tool),
        _event(
            delta, index=index, delta={"type": "input_json_delta", "partial_json": call.arguments}
        ),
        _event(stop, index=index),
    ]
