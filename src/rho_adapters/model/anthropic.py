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

This module is the HTTP exchange (URL, headers, retries, errors); the body it sends is
``anthropic_request.messages_body`` and the events it reads are assembled by
``anthropic_read.Assembler``.
"""

from __future__ import annotations

import random
from collections.abc import AsyncGenerator, AsyncIterator
from typing import Any

import attrs

from rho_adapters.model._errors import explain
from rho_adapters.model._http import Endpoint
from rho_adapters.model.answer_limits import AnswerWatch
from rho_adapters.model.anthropic_read import Assembler
from rho_adapters.model.anthropic_request import FINAL_TOOL, messages_body
from rho_adapters.model.bodies import body_chunks
from rho_adapters.model.chunks import loads
from rho_adapters.model.endpoint import Http, ModelEndpoint
from rho_adapters.model.openai_request import RequestDefaults, effective
from rho_adapters.model.refusals import not_an_answer
from rho_adapters.model.retry import jitter_rng
from rho_adapters.model.retrying import Attempt, with_retries
from rho_adapters.model.sse import SSEDecoder
from rho_domain.errors import ModelError, ModelProtocolError, TruncatedStream
from rho_domain.header_names import headers_over
from rho_domain.model import ModelRequest, StreamEvent
from rho_domain.ports.clock import Clock
from rho_domain.ports.model import ChatModel

ANTHROPIC_BASE_URL = "https://api.anthropic.com"


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
        self._key = endpoint.api_key  # hidden from the errors (``explain``)
        base = (endpoint.base_url or ANTHROPIC_BASE_URL).rstrip("/")
        self.url = base + ("/messages" if base.endswith("/v1") else "/v1/messages")
        self.defaults = defaults or RequestDefaults()
        self.retry = endpoint.retry
        self.timeouts = endpoint.timeouts
        self.limits = endpoint.limits
        if clock is None:
            from rho_adapters.clock import SystemClock

            clock = SystemClock()
        self.clock = clock
        self._rng = rng or jitter_rng()
        headers = {
            "anthropic-version": "2023-06-01",
            "accept": "text/event-stream",
            "accept-encoding": "gzip, deflate",  # what is read a bounded piece at a time
        }
        if endpoint.api_key:
            headers["x-api-key"] = endpoint.api_key
        headers = headers_over(headers, endpoint.headers)
        proxy = endpoint.proxies.for_url(base)
        self._endpoint = Endpoint(
            headers, http=http, pool_key=base, proxy=proxy, trust=endpoint.proxies.trust
        )

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
                key=self._key,
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
        assembler = Assembler(
            final_tool=FINAL_TOOL if schema is not None else "",
            wrapped=schema is not None and schema.get("type") != "object",
            max_calls=self.limits.max_tool_calls,
        )
        try:
            async with self._endpoint.post_stream(
                self.url, body, timeout, state, head_seconds=self.limits.max_seconds
            ) as response:
                watch = AnswerWatch(
                    timeout.read, limits=self.limits, url=self.url, started=state.started
                )
                refused = await not_an_answer(response, watch, now=self.clock.now())
                if refused is not None:
                    raise refused
                decoder = SSEDecoder()
                async for raw in body_chunks(response):
                    sses = decoder.feed(raw)
                    if any(sse.event != "ping" for sse in sses):
                        watch.heard(len(raw))
                    else:  # pings, comments or part of an event, for too long: ModelTimeout
                        watch.quiet(len(raw))
                    for sse in sses:
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
