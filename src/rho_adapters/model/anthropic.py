"""AnthropicModel: the ChatModel for the Anthropic Messages API (streamed events).

Maps the system prompt to ``system``, assistant tool calls to ``tool_use`` blocks and tool
results to ``tool_result`` blocks in user turns; streams ``message_start``,
``content_block_start/delta/stop`` (text, thinking with its ``signature_delta``,
``redacted_thinking``, ``input_json_delta``), ``message_delta``
(stop reason and cumulative usage), ``ping`` (ignored) and ``error`` events into the same domain
events as the OpenAI adapter, with the same retry, timeout and error rules. Stop reasons are
reported in the OpenAI vocabulary (``tool_use`` → ``tool_calls``, ``max_tokens`` → ``length``).

Extended thinking: each ``thinking`` / ``redacted_thinking`` block is kept whole, signature
included (``ThinkingReady``), and sent back unchanged at the start of its assistant turn
(blocks that came between tool calls, interleaved thinking, after those calls) whenever the
request has thinking on: the API refuses a tool-use turn whose thinking was dropped or
altered. With thinking off they are left out (the API ignores them in earlier turns and
refuses them in a final one). Thinking is left off inside a tool loop whose calls were made
without it (``thinking_can_start``), as the API asks.

Structured output: a request with an ``output_schema`` offers one more tool, ``final_answer``,
whose input is the answer (an answer that is not an object is wrapped as ``{"answer": ...}``),
and forces tool use (``any``; the final tool itself on a call that may not use tools), except
with thinking on, where the API allows only ``auto``. The model's ``final_answer`` call is
streamed back as the turn's text (its JSON), not as a tool call: the loop reads it as the final
answer and checks it against the schema.
"""

from __future__ import annotations

import json
import random
from collections.abc import AsyncGenerator, AsyncIterator, Mapping
from typing import Any

import attrs

from rho_adapters.model._errors import (
    error_from_response,
    explain,
    map_httpx_errors,
    stream_error,
)
from rho_adapters.model._http import Attempt, Endpoint, with_retries
from rho_adapters.model.chunks import loads
from rho_adapters.model.endpoint import Http, ModelEndpoint
from rho_adapters.model.openai_request import RequestDefaults, effective
from rho_adapters.model.retry import jitter_rng, server_delay
from rho_adapters.model.sse import SSEDecoder
from rho_domain.errors import ModelError, ModelProtocolError, TruncatedStream
from rho_domain.messages import (
    AssistantMessage,
    Message,
    ThinkingBlock,
    ToolCall,
    ToolResultMessage,
    Usage,
)
from rho_domain.model import (
    ModelRequest,
    ReasoningChunk,
    StreamEvent,
    StreamFinished,
    TextChunk,
    ThinkingReady,
    ToolCallChunk,
    ToolCallReady,
    UsageReport,
)
from rho_domain.ports.clock import Clock
from rho_domain.ports.model import ChatModel

ANTHROPIC_BASE_URL = "https://api.anthropic.com"
DEFAULT_MAX_TOKENS = 8192
_THINKING_BUDGET = {"low": 2048, "medium": 8192, "high": 16384, "xhigh": 32000, "max": 32000}
_STOP_REASONS = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "max_tokens": "length",
    "tool_use": "tool_calls",
    "refusal": "content_filter",
}


def messages_body(request: ModelRequest) -> dict[str, Any]:
    """The JSON body for ``POST /v1/messages`` (streaming)."""
    max_tokens = request.max_output_tokens or DEFAULT_MAX_TOKENS
    body: dict[str, Any] = {"model": request.model, "stream": True}
    if request.system:
        body["system"] = request.system
    budget = _THINKING_BUDGET.get(request.reasoning_effort or "")
    if budget and not thinking_can_start(request.messages):
        budget = None
    body["messages"] = wire_messages(request.messages, thinking=bool(budget))
    if request.output_schema is not None:
        _with_final_tool(body, request, thinking=bool(budget))
    elif request.tools:
        body["tools"] = [
            {"name": t.name, "description": t.description, "input_schema": dict(t.parameters)}
            for t in request.tools
        ]
        if request.tool_choice is not None or request.parallel_tool_calls is False:
            kind = {"required": "any", None: "auto"}.get(request.tool_choice, request.tool_choice)
            choice: dict[str, Any] = (
                {"type": kind}
                if kind in ("auto", "any", "none")
                else {"type": "tool", "name": kind}
            )
            if request.parallel_tool_calls is False and kind != "none":
                choice["disable_parallel_tool_use"] = True
            body["tool_choice"] = choice
    if budget:
        body["thinking"] = {"type": "enabled", "budget_tokens": budget}
        max_tokens = max(max_tokens, budget + 4096)  # the budget must fit under max_tokens
    elif request.temperature is not None:
        body["temperature"] = request.temperature  # not allowed together with thinking
    body["max_tokens"] = max_tokens
    if request.service_tier in ("auto", "standard_only"):
        body["service_tier"] = request.service_tier
    return body


def thinking_can_start(messages: tuple[Message, ...]) -> bool:
    """False inside a tool loop whose calls were made without thinking (a session that turns
    ``--reasoning-effort`` on when resumed mid-loop, or a turn another model wrote): the API
    refuses thinking there ("a final assistant message must start with a thinking block")
    and says to disable it; it starts again with the next user message."""
    for message in reversed(messages):
        if isinstance(message, AssistantMessage):
            return not message.tool_calls or bool(message.thinking)
        if not isinstance(message, ToolResultMessage):
            return True  # the user spoke after the last calls: a new turn
    return True


FINAL_TOOL = "final_answer"


def _with_final_tool(body: dict[str, Any], request: ModelRequest, *, thinking: bool) -> None:
    """Tools and choice for a request whose answer has a schema (see the module docstring)."""
    schema = request.output_schema or {}
    tools = [
        {"name": t.name, "description": t.description, "input_schema": dict(t.parameters)}
        for t in request.tools
        if t.name != FINAL_TOOL
    ]
    tools.append(
        {
            "name": FINAL_TOOL,
            "description": "Give your final answer: call this once, when you have finished, "
            "with the answer as its input, instead of answering in text.",
            "input_schema": final_input_schema(schema),
        }
    )
    body["tools"] = tools
    choice: dict[str, Any]
    if thinking:
        choice = {"type": "auto"}  # the API refuses a forced tool with thinking on
    elif request.tool_choice == "none" or len(tools) == 1:
        choice = {"type": "tool", "name": FINAL_TOOL}
    elif request.tool_choice in (None, "auto", "required"):
        choice = {"type": "any"}
    else:
        choice = {"type": "tool", "name": request.tool_choice}
    if request.parallel_tool_calls is False:
        choice["disable_parallel_tool_use"] = True
    body["tool_choice"] = choice


def final_input_schema(schema: Mapping[str, Any]) -> dict[str, Any]:
    """The final tool's input schema: the answer's own when it is an object (tool inputs must
    be), else ``{"answer": schema}``."""
    if schema.get("type") == "object":
        return dict(schema)
    wrapped: dict[str, Any] = {
        "type": "object",
        "properties": {"answer": {k: v for k, v in schema.items() if k not in _ROOT_ONLY}},
        "required": ["answer"],
    }
    for key in _ROOT_ONLY & schema.keys():
        wrapped[key] = schema[key]  # $ref targets stay at the root
    return wrapped


_ROOT_ONLY = frozenset({"$defs", "definitions", "$schema", "$id"})


def wire_messages(messages: tuple[Message, ...], *, thinking: bool = False) -> list[dict[str, Any]]:
    """Domain messages → alternating user/assistant turns with content blocks; with
    ``thinking``, each assistant turn's thinking blocks go back as they came."""
    out: list[dict[str, Any]] = []
    for message in messages:
        if isinstance(message, AssistantMessage):
            blocks = _assistant_blocks(message, thinking=thinking)
            if blocks:
                out.append({"role": "assistant", "content": blocks})
            continue
        if isinstance(message, ToolResultMessage):
            block: dict[str, Any] = {
                "type": "tool_result",
                "tool_use_id": message.call_id,
                "content": message.content,
            }
            if message.is_error:
                block["is_error"] = True
        else:
            block = {"type": "text", "text": message.content}
        # Tool results and the user's next words share one user turn (roles must alternate).
        if out and out[-1]["role"] == "user":
            out[-1]["content"].append(block)
        else:
            out.append({"role": "user", "content": [block]})
    return out


def _assistant_blocks(message: AssistantMessage, *, thinking: bool) -> list[dict[str, Any]]:
    """The turn's blocks: the thinking that came first, the text, then each tool call followed
    by the thinking that came after it (interleaved thinking), the order the model wrote."""
    kept = message.thinking if thinking else ()
    blocks = [_thinking_block(b) for b in kept if b.after_calls == 0]
    if message.text:
        blocks.append({"type": "text", "text": message.text})
    for done, c in enumerate(message.tool_calls, start=1):
        blocks.append({"type": "tool_use", "id": c.id, "name": c.name, "input": _input(c)})
        blocks.extend(_thinking_block(b) for b in kept if b.after_calls == done)
    return blocks


def _thinking_block(block: ThinkingBlock) -> dict[str, Any]:
    if block.kind == "redacted_thinking":
        return {"type": "redacted_thinking", "data": block.data}
    return {"type": "thinking", "thinking": block.thinking, "signature": block.signature}


def _input(call: ToolCall) -> dict[str, Any]:
    try:
        value = json.loads(call.arguments or "{}")
    except ValueError:
        value = None
    # tool_use.input must be an object; keep malformed arguments visible to the model.
    return value if isinstance(value, dict) else {"_unparsed_arguments": call.arguments}


@attrs.define
class _Block:
    kind: str
    position: int = 0
    id: str = ""
    name: str = ""
    json: list[str] = attrs.field(factory=list)  # tool input, or thinking text
    signature: str = ""
    data: str = ""  # a redacted_thinking block's encrypted reasoning


class _Assembler:
    def __init__(self, *, final_tool: str = "", wrapped: bool = False) -> None:
        self.final_tool, self.wrapped = final_tool, wrapped
        self.text: list[str] = []
        self.blocks: dict[int, _Block] = {}
        self.calls = 0
        self.stop_reason: str | None = None
        self.done = False
        self.usage: dict[str, int] = {}

    @property
    def partial_text(self) -> str:
        return "".join(self.text)

    def feed(self, name: str, data: Any) -> list[StreamEvent]:
        if not isinstance(data, Mapping):
            raise ModelProtocolError(f"unexpected event data: {str(data)[:200]}")
        kind = data.get("type") or name
        if kind == "error" or name == "error":
            raise stream_error(data, partial_text=self.partial_text)
        if kind == "message_start":
            self._usage((data.get("message") or {}).get("usage"))
        elif kind == "content_block_start":
            return self._start(int(data.get("index") or 0), data.get("content_block") or {})
        elif kind == "content_block_delta":
            return self._delta(int(data.get("index") or 0), data.get("delta") or {})
        elif kind == "message_delta":
            self.stop_reason = (data.get("delta") or {}).get("stop_reason") or self.stop_reason
            self._usage(data.get("usage"))
        elif kind == "message_stop":
            self.done = True
        return []  # ping, content_block_stop and unknown events carry nothing to show

    def _start(self, index: int, block: Mapping[str, Any]) -> list[StreamEvent]:
        kind = str(block.get("type") or "")
        if kind == "tool_use" and self.final_tool and block.get("name") == self.final_tool:
            self.blocks[index] = _Block("final_answer")  # its input is the answer: text
            return []
        if kind == "tool_use":
            self.blocks[index] = _Block(
                kind, self.calls, str(block.get("id") or ""), str(block.get("name") or "")
            )
            self.calls += 1
            b = self.blocks[index]
            return [ToolCallChunk(index=b.position, call_id=b.id, name=b.name)]
        # A thinking block's position counts the calls before it (interleaved thinking).
        self.blocks[index] = _Block(
            kind,
            self.calls,
            signature=str(block.get("signature") or ""),
            data=str(block.get("data") or ""),
        )
        initial = block.get("text") if kind == "text" else block.get("thinking")
        return self._delta(index, {"type": f"{kind}_delta", kind: initial}) if initial else []

    def _delta(self, index: int, delta: Mapping[str, Any]) -> list[StreamEvent]:
        kind = delta.get("type")
        if kind == "text_delta" and delta.get("text"):
            self.text.append(delta["text"])
            return [TextChunk(delta["text"])]
        if kind == "thinking_delta" and delta.get("thinking"):
            self.blocks.setdefault(index, _Block("thinking", self.calls)).json.append(
                delta["thinking"]
            )
            return [ReasoningChunk(delta["thinking"])]
        if kind == "signature_delta":
            block = self.blocks.setdefault(index, _Block("thinking", self.calls))
            block.signature += str(delta.get("signature") or "")
            return []
        if kind == "input_json_delta" and self.blocks.get(index, _Block("")).kind == "final_answer":
            self.blocks[index].json.append(str(delta.get("partial_json") or ""))
            return []
        if kind == "input_json_delta":
            block = self.blocks.setdefault(index, _Block("tool_use", position=self.calls))
            part = str(delta.get("partial_json") or "")
            if part:
                block.json.append(part)
                return [ToolCallChunk(index=block.position, arguments_delta=part)]
        return []  # citations_delta: nothing the loop shows

    def _usage(self, usage: Any) -> None:
        if isinstance(usage, Mapping):
            self.usage.update({k: v for k, v in usage.items() if isinstance(v, int)})

    def finish(self) -> list[StreamEvent]:
        ready: list[StreamEvent] = [
            ThinkingReady(
                ThinkingBlock(
                    kind="redacted_thinking" if block.kind == "redacted_thinking" else "thinking",
                    thinking="".join(block.json),
                    signature=block.signature,
                    data=block.data,
                    after_calls=block.position,
                )
            )
            for _, block in sorted(self.blocks.items())
            if block.kind in ("thinking", "redacted_thinking")
        ]
        ready.extend(self._final_answer())
        for block in sorted(self.blocks.values(), key=lambda b: b.position):
            if block.kind == "tool_use":
                arguments = "".join(block.json).strip() or "{}"
                ready.append(
                    ToolCallReady(ToolCall(id=block.id, name=block.name, arguments=arguments))
                )
        u = self.usage
        cached = u.get("cache_read_input_tokens", 0)
        ready.append(
            UsageReport(
                Usage(
                    input_tokens=u.get("input_tokens", 0)
                    + cached
                    + u.get("cache_creation_input_tokens", 0),
                    output_tokens=u.get("output_tokens", 0),
                    cached_tokens=cached,
                    estimated=not u,
                )
            )
        )
        reason = self.stop_reason or "stop"
        if reason == "tool_use" and not any(b.kind == "tool_use" for b in self.blocks.values()):
            reason = "end_turn"  # only the final tool was called: the turn answered
        ready.append(StreamFinished(_STOP_REASONS.get(reason, reason)))
        return ready

    def _final_answer(self) -> list[StreamEvent]:
        """The final tool's input as the turn's text (unwrapped when it was wrapped)."""
        out: list[StreamEvent] = []
        for _, block in sorted(self.blocks.items()):
            if block.kind != "final_answer":
                continue
            text = "".join(block.json).strip() or "{}"
            if self.wrapped:
                value = loads(text) if text.startswith("{") else None
                if isinstance(value, dict) and "answer" in value:
                    text = json.dumps(value["answer"])
            self.text.append(text)
            out.append(TextChunk(text))
        return out


class AnthropicModel(ChatModel):
    """A ChatModel for ``POST {base_url}/v1/messages`` (``endpoint.base_url``, default
    Anthropic's); ``endpoint``, ``defaults``, ``http``, ``clock`` and ``rng`` as for
    ``OpenAIChatModel``."""

    def __init__(
        self,
        *,
        model: str,
        endpoint: ModelEndpoint | None = None,
        defaults: RequestDefaults | None = None,
        http: Http | None = None,
        clock: Clock | None = None,
        rng: random.Random | None = None,
    ) -> None:
        endpoint = endpoint if endpoint is not None else ModelEndpoint()
        self.endpoint = endpoint
        self.model = model
        self.key_variable = endpoint.key_variable
        self._has_key = bool(endpoint.api_key)
        base = (endpoint.base_url or ANTHROPIC_BASE_URL).rstrip("/")
        self.url = base + ("/messages" if base.endswith("/v1") else "/v1/messages")
        self.defaults = defaults or RequestDefaults()
        self.retry = endpoint.retry
        self.timeouts = endpoint.timeouts
        if clock is None:
            from rho_adapters.clock import SystemClock

            clock = SystemClock()
        self.clock = clock
        self._rng = rng or jitter_rng()
        headers = {"anthropic-version": "2023-06-01", "accept": "text/event-stream"}
        if endpoint.api_key:
            headers["x-api-key"] = endpoint.api_key
        headers.update(endpoint.headers)
        self._endpoint = Endpoint(headers, http=http, pool_key=base)

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        """See ``ChatModel.stream``."""
        if not request.model:
            request = attrs.evolve(request, model=self.model)
        request = effective(request, self.defaults)
        try:
            async for event in with_retries(
                lambda state: self._attempt(request, state),
                policy=self.retry,
                clock=self.clock,
                rng=self._rng,
            ):
                yield event
        except ModelError as exc:
            explain(
                exc,
                model=request.model,
                url=self.url,
                key_variable=self.key_variable,
                has_key=self._has_key,
                provider="anthropic",
            )
            raise

    async def aclose(self) -> None:
        """See ``ChatModel.aclose``."""
        await self._endpoint.aclose()

    async def _attempt(
        self, request: ModelRequest, state: Attempt
    ) -> AsyncGenerator[StreamEvent, None]:
        body = messages_body(request)
        timeout = self.timeouts.for_tier(request.service_tier)
        schema = request.output_schema
        assembler = _Assembler(
            final_tool=FINAL_TOOL if schema is not None else "",
            wrapped=schema is not None and schema.get("type") != "object",
        )
        try:
            with map_httpx_errors(idle_timeout=timeout.read):
                async with (
                    self._endpoint.slot(state) as client,
                    client.stream(
                        "POST",
                        self.url,
                        json=body,
                        headers=self._endpoint.request_headers,
                        timeout=timeout,
                    ) as response,
                ):
                    state.headers = response.headers
                    if response.status_code >= 400:
                        text = (await response.aread()).decode("utf-8", "replace")
                        raise error_from_response(
                            response.status_code,
                            text,
                            retry_after=server_delay(response.headers, self.clock.now()),
                        )
                    decoder = SSEDecoder()
                    async for raw in response.aiter_bytes():
                        for sse in decoder.feed(raw):
                            for event in assembler.feed(sse.event, _json(sse.data)):
                                yield event
                    for sse in decoder.flush():
                        for event in assembler.feed(sse.event, _json(sse.data)):
                            yield event
        except ModelError as exc:
            exc.partial_text = exc.partial_text or assembler.partial_text
            raise
        if not assembler.done and assembler.stop_reason is None:
            raise TruncatedStream(
                "the Anthropic stream ended without message_stop",
                partial_text=assembler.partial_text,
            )
        for event in assembler.finish():
            yield event


def _json(data: str) -> Any:
    try:
        return loads(data)
    except ValueError as exc:
        raise ModelProtocolError(
            f"the server sent an event that is not JSON: {data[:200]!r}"
        ) from exc
