"""OpenAIChatModel: the ChatModel for every OpenAI-compatible Chat Completions server.

Hand-written on httpx: SSE bytes → ``SSEDecoder`` → JSON chunks → ``ChunkAssembler`` → domain
events (one request and its reading is ``openai_exchanges``, reading one response
``openai_read``; this module decides what is sent, and what is resent). A stream ends
with the assembled ``ToolCallReady`` events, one ``UsageReport`` (the server's, or an estimate
marked ``estimated``) and one ``StreamFinished``. Errors are raised as
``ModelError`` subclasses carrying the partial text; retries (``retrying.with_retries``) happen only
before the first event reached the caller. Non-streaming mode (config ``stream=False``, or a
provider that cannot stream tools, or a server that rejected streaming with tools) yields the
same events from one JSON response.

Real servers, end to end (issue 17): an empty 200 stream is resent once without streaming,
which turns it into the server's real answer (llama-cpp-python: a 400 context overflow, or
the tool call it could not stream); a local or unknown server is asked what it is
(``detect.probe``) before the first call; and the model is also a ``ContextMeter``: the
server's context window, and prompt token counts from its tokenizer endpoint or a
characters-per-token ratio learned from the counts it reports (``tokens.TokenMeter``).
"""

from __future__ import annotations

import random
from collections.abc import AsyncGenerator, AsyncIterator
from typing import TYPE_CHECKING

import attrs

from rho_adapters.model._errors import explain
from rho_adapters.model._http import Endpoint
from rho_adapters.model.detect import AskedOnce, ServerFacts
from rho_adapters.model.endpoint import Http, ModelEndpoint
from rho_adapters.model.openai_exchanges import attempt_events, server_facts, tokenizer_count
from rho_adapters.model.openai_read import EmptyStream
from rho_adapters.model.openai_request import (
    RequestDefaults,
    build_body,
    chat_headers,
    chat_url,
    effective,
    streams,
    tool_choice_of,
)
from rho_adapters.model.providers import PROVIDERS, Provider, for_model, resolve_provider
from rho_adapters.model.retry import jitter_rng
from rho_adapters.model.retrying import Attempt, with_retries
from rho_adapters.model.tokens import TokenMeter, framing_tokens, prompt_text
from rho_domain.errors import BadRequest, ContextLengthExceeded, ModelError
from rho_domain.model import ModelRequest
from rho_domain.ports.clock import Clock
from rho_domain.ports.model import ChatModel, ContextMeter

if TYPE_CHECKING:
    from rho_domain.model import StreamEvent


_NEAR_WINDOW = 0.9  # an empty answer to a request this close to the window is an overflow


class OpenAIChatModel(ChatModel, ContextMeter):
    """A ChatModel speaking Chat Completions to ``endpoint`` as the given provider expects.

    ``endpoint`` (``ModelEndpoint``) is the server's URL (default: the provider's), key,
    extra headers, timeouts and retry policy. ``provider`` is its row of ``PROVIDERS`` (default:
    guessed from the URL's host), with the quirks ``MODEL_QUIRKS`` declares for ``model``.
    ``defaults`` are request options a ``ModelRequest``'s own values override. ``stream=None``
    or True streams where the provider can (tools under automatic choice cannot on
    llama-cpp-python); False never streams. ``http`` is where requests go: a ``ClientPool``
    (default ``SHARED_POOL``; ``ClientPool(transport=...)`` for tests and proxies) or the
    caller's ``httpx.AsyncClient`` (never closed here). ``detect=True`` asks the server what it
    is before the first call and adopts the matching provider row. ``clock`` and ``rng`` time
    and jitter the retries.
    """

    def __init__(
        self,
        *,
        model: str,
        endpoint: ModelEndpoint | None = None,
        provider: Provider | None = None,
        defaults: RequestDefaults | None = None,
        stream: bool | None = None,
        http: Http | None = None,
        clock: Clock | None = None,
        rng: random.Random | None = None,
        detect: bool = False,
    ) -> None:
        endpoint = endpoint if endpoint is not None else ModelEndpoint()
        self.endpoint = endpoint
        self.model = model
        self.provider = for_model(provider or resolve_provider(None, endpoint.base_url), model)
        self.key_variable = endpoint.key_variable
        self._has_key = bool(endpoint.api_key)
        self._key = endpoint.api_key  # hidden from the errors (``explain``)
        self.base_url = endpoint.base_url or self.provider.default_base_url
        self.url = chat_url(self.base_url)
        self.defaults = defaults or RequestDefaults()
        self.stream_mode = stream
        self.retry = endpoint.retry
        self.timeouts = endpoint.timeouts
        self.limits = endpoint.limits
        if clock is None:
            from rho_adapters.clock import SystemClock

            clock = SystemClock()
        self.clock = clock
        self._rng = rng or jitter_rng()
        proxy = endpoint.proxies.for_url(self.base_url)
        headers = chat_headers(endpoint.api_key, self.provider, endpoint.headers)
        self._endpoint = Endpoint(
            headers,
            http=http,
            pool_key=self.base_url,
            proxy=proxy,
            trust=endpoint.proxies.trust,
        )
        self._no_stream_tools = False  # learned: this server cannot stream with tools
        self.meter = TokenMeter()
        self.facts = AskedOnce(None if detect else ServerFacts())
        self.window: int | None = None  # the server's context window, once known

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        """See ``ChatModel.stream``. ``request.model`` empty means the configured model.

        One generator from the retries to the caller (every streamed delta passes each
        layer): the resends below, the overflow learned and the error explained are all
        handled here, not by a wrapping generator."""
        if not request.model:
            request = attrs.evolve(request, model=self.model)
        request = effective(request, self.defaults)
        try:
            await self._detect()
            streamed = self._streaming(request)
            try:
                async for event in self._with_retries(request, streamed):
                    yield event
            except EmptyStream as empty:
                # llama-cpp-python answers an overflow (07) or an automatic tool choice (13)
                # with an empty 200 stream; without streaming it says which (08, 14).
                if not streamed:
                    raise self._overflow_or(empty, request) from empty
                try:
                    async for event in self._with_retries(request, False):
                        yield event
                except EmptyStream as again:
                    raise self._overflow_or(again, request) from again
                if request.tools:
                    self._no_stream_tools = True
            except BadRequest as exc:
                # Cerebras's way: a server that cannot stream tool calls says so
                # with a 400 naming "stream". Remember it and resend once without streaming.
                if not (streamed and request.tools):
                    raise
                if "stream" not in str(exc).lower():
                    raise
                self._no_stream_tools = True
                async for event in self._with_retries(request, False):
                    yield event
        except ModelError as exc:
            if isinstance(exc, ContextLengthExceeded):
                self._learn_overflow(request, exc)
            explain(
                exc,
                model=request.model,
                url=self.url,
                key_variable=self.key_variable,
                has_key=self._has_key,
                key=self._key,
                provider=self.provider.name,
            )
            raise

    # ------------------------------------------------------------------ ContextMeter

    async def context_window(self) -> int | None:
        """See ``ContextMeter.context_window``: from the probe or an overflow error."""
        await self._detect()
        return self.window

    def estimate_tokens(self, request: ModelRequest) -> int:
        """See ``ContextMeter.estimate_tokens``."""
        return self.meter.estimate(self._as_read(request))

    async def count_tokens(self, request: ModelRequest) -> int:
        """See ``ContextMeter.count_tokens``: the server's tokenizer where it has one."""
        await self._detect()
        if not self.provider.tokenize_path:
            return self.meter.estimate(self._as_read(request))
        request = self._as_read(request)
        text = prompt_text(request)
        count = await tokenizer_count(
            self._endpoint,
            self.base_url,
            self.provider,
            request.model or self.model,
            text,
            self.timeouts,
        )
        if count is None:
            return self.meter.estimate(self._as_read(request))
        self.meter.learn_text(len(text), count)
        return count + framing_tokens(request)

    async def _detect(self) -> None:
        """Ask the server once what it is (``detect.AskedOnce``), even if the probe fails."""
        await self.facts.learn(
            lambda: self._endpoint.remembered(
                f"probe {self.base_url}",
                lambda: server_facts(self._endpoint, self.base_url, self.timeouts),
                keep=lambda found: found.answered,
            ),
            self._adopt,
        )

    def _adopt(self, facts: ServerFacts) -> None:
        if facts.provider in PROVIDERS:
            self.provider = for_model(
                attrs.evolve(
                    PROVIDERS[facts.provider],
                    default_base_url=self.provider.default_base_url,
                ),
                self.model,
            )
        if facts.context_window:
            self.window = facts.context_window

    def _as_read(self, request: ModelRequest) -> ModelRequest:
        """The request as the model reads it: without the tool schemas on a server that shows
        them only under a tool choice (llama-cpp-python), when none will be sent."""
        hidden = tool_choice_of(request, self.provider) in (None, "none")
        if request.tools and self.provider.tools_need_choice and hidden:
            return attrs.evolve(request, tools=())
        return request

    def _overflow_or(self, empty: EmptyStream, request: ModelRequest) -> ModelError:
        """An empty answer to a request near the known window is taken as an overflow."""
        tokens = self.meter.estimate(self._as_read(request)) + (request.max_output_tokens or 0)
        if not self.window or tokens < _NEAR_WINDOW * self.window:
            return empty
        return ContextLengthExceeded(
            f"{empty}; the request (~{tokens} tokens) is near the context window of "
            f"{self.window} tokens: taken as a context overflow",
            status=200,
            window=self.window,
            prompt_tokens=self.meter.estimate(self._as_read(request)),
        )

    def _learn_overflow(self, request: ModelRequest, exc: ContextLengthExceeded) -> None:
        if exc.window:
            self.window = exc.window
        if exc.prompt_tokens:
            self.meter.learn(self._as_read(request), exc.prompt_tokens)

    async def aclose(self) -> None:
        """See ``ChatModel.aclose``."""
        await self._endpoint.aclose()

    def _streaming(self, request: ModelRequest) -> bool:
        if self.stream_mode is False:
            return False
        if request.tools and self._no_stream_tools:
            return False
        return streams(request, self.provider)

    def _with_retries(self, request: ModelRequest, streaming: bool) -> AsyncIterator[StreamEvent]:
        return with_retries(
            lambda state: self._attempt(request, state, streaming),
            policy=self.retry,
            clock=self.clock,
            rng=self._rng,
        )

    def _attempt(
        self, request: ModelRequest, state: Attempt, streaming: bool
    ) -> AsyncGenerator[StreamEvent, None]:
        return attempt_events(
            self._endpoint,
            self.url,
            build_body(request, self.provider, stream=streaming),
            state,
            streaming=streaming,
            timeout=self.timeouts.for_tier(request.service_tier),
            limits=self.limits,
            clock=self.clock,
            model=self.model,
            key=self._key,
            meter=self.meter,
            as_read=self._as_read(request),
        )
