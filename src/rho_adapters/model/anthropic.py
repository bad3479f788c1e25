"""AnthropicModel: the ChatModel for the Anthropic Messages API (streamed events).

Maps the system prompt to ``system``, assistant tool calls to ``tool_use`` blocks and tool
results to ``tool_result`` blocks in user turns; streams ``message_start``,
``content_block_start/delta/stop`` (text, thinking, ``input_json_delta``), ``message_delta``
(stop reason and cumulative usage), ``ping`` (ignored) and ``error`` events into the same domain
events as the OpenAI adapter, with the same retry, timeout and error rules. Stop reasons are
reported in the OpenAI vocabulary (``tool_use`` → ``tool_calls``, ``max_tokens`` → ``length``).
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
from rho_domain.messages import AssistantMessage, Message, ToolCall, ToolResultMessage, Usage
from rho_domain.model import (
    ModelRequest,
    ReasoningChunk,
    StreamEvent,
    StreamFinished,
    TextChunk,
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
    body["messages"] = wire_messages(request.messages)
    if request.tools:
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
    budget = _THINKING_BUDGET.get(request.reasoning_effort or "")
    if budget:
        body["thinking"] = {"type": "enabled", "budget_tokens": budget}
        max_tokens = max(max_tokens, budget + 4096)  # the budget must fit under max_tokens
    elif request.temperature is not None:
        body["temperature"] = request.temperature  # not allowed together with thinking
    body["max_tokens"] = max_tokens
    if request.service_tier in ("auto", "standard_only"):
        body["service_tier"] = request.service_tier
    return body


def wire_messages(messages: tuple[Message, ...]) -> list[dict[str, Any]]:
    """Domain messages → alternating user/assistant turns with content blocks."""
    out: list[dict[str, Any]] = []
    for message in messages:
        if isinstance(message, AssistantMessage):
            blocks: list[dict[str, Any]] = []
            if message.text:
                blocks.append({"type": "text", "text": message.text})
            blocks.extend(
                {"type": "tool_use", "id": c.id, "name": c.name, "input": _input(c)}
                for c in message.tool_calls
            )
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
    json: list[str] = attrs.field(factory=list)


class _Assembler:
    def __init__(self) -> None:
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
        if kind == "tool_use":
            self.blocks[index] = _Block(
                kind, self.calls, str(block.get("id") or ""), str(block.get("name") or "")
            )
            self.calls += 1
            b = self.blocks[index]
            return [ToolCallChunk(index=b.position, call_id=b.id, name=b.name)]
        self.blocks[index] = _Block(kind)
        initial = block.get("text") if kind == "text" else block.get("thinking")
        return self._delta(index, {"type": f"{kind}_delta", kind: initial}) if initial else []

    def _delta(self, index: int, delta: Mapping[str, Any]) -> list[StreamEvent]:
        kind = delta.get("type")
        if kind == "text_delta" and delta.get("text"):
            self.text.append(delta["text"])
            return [TextChunk(delta["text"])]
        if kind == "thinking_delta" and delta.get("thinking"):
            return [ReasoningChunk(delta["thinking"])]
        if kind == "input_json_delta":
            block = self.blocks.setdefault(index, _Block("tool_use", position=self.calls))
            part = str(delta.get("partial_json") or "")
            if part:
                block.json.append(part)
                return [ToolCallChunk(index=block.position, arguments_delta=part)]
        return []  # signature_delta, citations_delta: nothing the loop shows

    def _usage(self, usage: Any) -> None:
        if isinstance(usage, Mapping):
            self.usage.update({k: v for k, v in usage.items() if isinstance(v, int)})

    def finish(self) -> list[StreamEvent]:
        ready: list[StreamEvent] = []
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
        ready.append(StreamFinished(_STOP_REASONS.get(reason, reason)))
        return ready


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
        assembler = _Assembler()
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
