"""OpenAIChatModel: the ChatModel for every OpenAI-compatible Chat Completions server.

Hand-written on httpx: SSE bytes → ``SSEDecoder`` → JSON chunks → ``ChunkAssembler`` → domain
events. A stream ends with the assembled ``ToolCallReady`` events, one ``UsageReport`` (the
server's, or an estimate marked ``estimated``) and one ``StreamFinished``. Errors are raised as
``ModelError`` subclasses carrying the partial text; retries (``_http.with_retries``) happen only
before the first event reached the caller. Non-streaming mode (config ``stream=False``, or a
provider that cannot stream tools, or a server that rejected streaming with tools) yields the
same events from one JSON response.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
from collections.abc import AsyncGenerator, AsyncIterator, Mapping
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import attrs
import httpx

from rho_adapters.model._errors import error_from_response, map_httpx_errors
from rho_adapters.model._http import Attempt, ClientPool, Endpoint, Timeouts, with_retries
from rho_adapters.model.chunks import ChunkAssembler
from rho_adapters.model.openai_request import (
    RequestDefaults,
    build_body,
    effective,
    request_chars,
)
from rho_adapters.model.providers import Provider, resolve_provider
from rho_adapters.model.retry import RetryPolicy, server_delay
from rho_adapters.model.sse import SSEDecoder
from rho_domain.errors import BadRequest, ModelError, ModelProtocolError, TruncatedStream
from rho_domain.messages import Usage, estimate_tokens
from rho_domain.model import ModelRequest, StreamEvent, StreamFinished, UsageReport
from rho_domain.ports.clock import Clock
from rho_domain.ports.model import ChatModel

_DRAIN_SECONDS = 1.0


def chat_url(base_url: str) -> str:
    """``{base_url}/chat/completions``, keeping a query string (Azure's ``api-version``)."""
    parts = urlsplit(base_url)
    path = parts.path.rstrip("/")
    if not path.endswith("/chat/completions"):
        path += "/chat/completions"
    return urlunsplit((parts.scheme, parts.netloc, path, parts.query, ""))


class OpenAIChatModel(ChatModel):
    """A ChatModel speaking Chat Completions to ``base_url`` as the given provider expects.

    ``stream=None`` streams unless the provider cannot stream tools. ``transport`` or
    ``http_client`` replace the shared pooled client (tests, custom proxies); a passed
    ``http_client`` is never closed here.
    """

    def __init__(
        self,
        *,
        model: str,
        base_url: str | None = None,
        api_key: str | None = None,
        provider: Provider | None = None,
        defaults: RequestDefaults | None = None,
        stream: bool | None = None,
        clock: Clock | None = None,
        retry: RetryPolicy | None = None,
        timeouts: Timeouts | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
        http_client: httpx.AsyncClient | None = None,
        pool: ClientPool | None = None,
        headers: Mapping[str, str] | None = None,
        rng: random.Random | None = None,
    ) -> None:
        self.provider = provider or resolve_provider(None, base_url)
        self.model = model
        self.base_url = base_url or self.provider.default_base_url
        self.url = chat_url(self.base_url)
        self.defaults = defaults or RequestDefaults()
        self.stream_mode = stream
        self.retry = retry or RetryPolicy()
        self.timeouts = timeouts or Timeouts()
        if clock is None:
            from rho_adapters.clock import SystemClock

            clock = SystemClock()
        self.clock = clock
        self._rng = rng or random.Random()
        all_headers = {"accept": "text/event-stream, application/json"}
        if api_key:
            if self.provider.auth_header == "authorization":
                all_headers["authorization"] = f"Bearer {api_key}"
            else:
                all_headers[self.provider.auth_header] = api_key
        all_headers.update(headers or {})
        self._endpoint = Endpoint(
            all_headers,
            pool=pool,
            transport=transport,
            http_client=http_client,
            pool_key=self.base_url,
        )
        self._no_stream_tools = False  # learned: this server rejects streaming with tools

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        """See ``ChatModel.stream``. ``request.model`` empty means the configured model."""
        if not request.model:
            request = _with_model(request, self.model)
        request = effective(request, self.defaults)
        streamed = self._streaming(request)
        try:
            async for event in self._with_retries(request):
                yield event
        except BadRequest as exc:
            # The seeds' Cerebras fallback: a server that cannot stream tool calls says so
            # with a 400 naming "stream". Remember it and resend once without streaming.
            if not (streamed and request.tools and self.stream_mode is None):
                raise
            if "stream" not in str(exc).lower():
                raise
            self._no_stream_tools = True
            async for event in self._with_retries(request):
                yield event

    def _with_retries(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        return with_retries(
            lambda state: self._attempt(request, state),
            policy=self.retry,
            clock=self.clock,
            rng=self._rng,
        )

    async def aclose(self) -> None:
        """See ``ChatModel.aclose``."""
        await self._endpoint.aclose()

    def _streaming(self, request: ModelRequest) -> bool:
        if self.stream_mode is not None:
            return self.stream_mode
        cannot = self._no_stream_tools or not self.provider.stream_tools
        return not (request.tools and cannot)

    async def _attempt(
        self, request: ModelRequest, state: Attempt
    ) -> AsyncGenerator[StreamEvent, None]:
        streaming = self._streaming(request)
        body = build_body(request, self.provider, stream=streaming)
        timeout = self.timeouts.for_tier(request.service_tier)
        assembler = ChunkAssembler()
        client = self._endpoint.client()
        try:
            with map_httpx_errors(idle_timeout=timeout.read):
                async with client.stream("POST", self.url, json=body, timeout=timeout) as response:
                    state.headers = response.headers
                    if response.status_code >= 400:
                        await self._raise_status(response)
                    if streaming:
                        async for event in self._read_stream(response, assembler):
                            yield event
                    else:
                        for event in await self._read_whole(response, assembler):
                            yield event
        except ModelError as exc:
            exc.partial_text = exc.partial_text or assembler.partial_text
            raise
        for event in assembler.finish():
            yield event
        usage = assembler.usage or Usage(
            input_tokens=estimate_tokens(request_chars(request)),
            output_tokens=estimate_tokens(assembler.response_chars()),
            estimated=True,
        )
        yield UsageReport(usage)
        yield StreamFinished(assembler.finish_reason or "stop")

    async def _raise_status(self, response: httpx.Response) -> None:
        body = (await response.aread()).decode("utf-8", "replace")
        raise error_from_response(
            response.status_code,
            body,
            retry_after=server_delay(response.headers, self.clock.now()),
        )

    async def _read_stream(
        self, response: httpx.Response, assembler: ChunkAssembler
    ) -> AsyncIterator[StreamEvent]:
        decoder = SSEDecoder()
        done = False
        body = response.aiter_bytes()
        async for raw in body:
            for sse in decoder.feed(raw):
                if sse.data.startswith("[DONE]"):
                    done = True
                    break
                chunk = _parse(sse.data, assembler)
                if sse.event == "error" and not (isinstance(chunk, Mapping) and chunk.get("error")):
                    chunk = {"error": chunk}
                for event in assembler.feed(chunk):
                    yield event
            if done:
                await _drain(body)
                return
        for sse in decoder.flush():
            if sse.data.startswith("[DONE]"):
                return
            for event in assembler.feed(_parse(sse.data, assembler)):
                yield event
        if assembler.finish_reason is None:
            raise TruncatedStream(
                "the model stream ended without a finish_reason or [DONE]"
                + ("" if assembler.partial_text or assembler.has_calls else " (empty stream)"),
                partial_text=assembler.partial_text,
            )

    async def _read_whole(
        self, response: httpx.Response, assembler: ChunkAssembler
    ) -> list[StreamEvent]:
        raw = await response.aread()
        if not raw.strip():
            raise TruncatedStream("the model server answered 200 with an empty body")
        data = _parse(raw.decode("utf-8", "replace"), assembler)
        choices = data.get("choices") if isinstance(data, Mapping) else None
        if isinstance(choices, list):
            for choice in choices:
                calls = (
                    (choice.get("message") or {}).get("tool_calls")
                    if isinstance(choice, Mapping)
                    else None
                )
                for position, call in enumerate(calls or ()):
                    if isinstance(call, dict):
                        call.setdefault("index", position)
        events = assembler.feed(data)
        if assembler.finish_reason is None and not (assembler.partial_text or assembler.has_calls):
            raise TruncatedStream("the model response has no choices")
        return events


async def _drain(body: AsyncIterator[bytes]) -> None:
    """Read what follows [DONE] (the chunked-encoding terminator) so the connection goes back
    to the pool; a server that keeps the body open gets a short grace, then is dropped."""
    with contextlib.suppress(httpx.HTTPError, TimeoutError):
        async with asyncio.timeout(_DRAIN_SECONDS):
            async for _ in body:
                pass


def _parse(data: str, assembler: ChunkAssembler) -> Any:
    try:
        return json.loads(data)
    except ValueError as exc:
        raise ModelProtocolError(
            f"the model server sent a chunk that is not JSON: {data[:200]!r}",
            partial_text=assembler.partial_text,
        ) from exc


def _with_model(request: ModelRequest, model: str) -> ModelRequest:
    return attrs.evolve(request, model=model)
