"""What an OpenAI-compatible server is and how much it holds: ``OpenAIChatModel``'s
``ContextMeter``.

``ServerMeter`` asks the server once what it is (``detect.probe``; callers arriving while the
probe is out wait for its answer) and adopts the matching provider row; it knows the context
window (from the probe, or learned from an overflow error) and counts a request's tokens with
the server's tokenizer endpoint where it has one, else with a ``TokenMeter`` (a
characters-per-token ratio learned from the counts the server reports). An empty answer to a
request near the window is taken as an overflow (``_overflow_or``). ``OpenAIChatModel`` is a
``ServerMeter`` and sets the attributes declared here in its ``__init__``.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Mapping
from typing import Any

import attrs

from rho_adapters.model._errors import map_httpx_errors
from rho_adapters.model._http import Endpoint, Timeouts
from rho_adapters.model.detect import ServerFacts, probe, server_root
from rho_adapters.model.openai_read import EmptyStream
from rho_adapters.model.openai_request import tool_choice_of
from rho_adapters.model.providers import PROVIDERS, Provider, for_model
from rho_adapters.model.tokens import TokenMeter, framing_tokens, prompt_text
from rho_domain.errors import ContextLengthExceeded, ModelError
from rho_domain.model import ModelRequest
from rho_domain.ports.model import ContextMeter

_NEAR_WINDOW = 0.9  # an empty answer to a request this close to the window is an overflow


class ServerMeter(ContextMeter):
    """The ``ContextMeter`` of a Chat Completions server, and what the model learns of it."""

    model: str
    provider: Provider
    base_url: str
    timeouts: Timeouts
    meter: TokenMeter
    facts: ServerFacts | None  # None until the server was asked (``detect=True``)
    window: int | None  # the server's context window, once known
    _endpoint: Endpoint
    _asking: asyncio.Future[None] | None  # the probe out now (``_detect``)

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
        path = self.provider.tokenize_path
        if not path:
            return self.meter.estimate(self._as_read(request))
        request = self._as_read(request)
        text = prompt_text(request)
        body: dict[str, Any] = {"model": request.model or self.model}
        body["input" if path.startswith("/extras") else "content"] = text
        if self.provider.name == "vllm":
            body = {"model": body["model"], "prompt": text}
        try:
            with map_httpx_errors():
                async with self._endpoint.slot() as client:
                    response = await client.post(
                        server_root(self.base_url) + path,
                        json=body,
                        headers=self._endpoint.request_headers,
                        timeout=self.timeouts.for_tier(None),
                    )
            data = response.json() if response.status_code == 200 else None
        except (ModelError, ValueError):
            data = None
        count = data.get("count") if isinstance(data, Mapping) else None
        if count is None and isinstance(data, Mapping) and isinstance(data.get("tokens"), list):
            count = len(data["tokens"])
        if not isinstance(count, int):
            return self.meter.estimate(self._as_read(request))
        self.meter.learn_text(len(text), count)
        return count + framing_tokens(request)

    async def _detect(self) -> None:
        """Ask the server once what it is (``detect.probe``), even if the probe fails. A
        caller arriving while the probe is out waits for its answer (a run asks for the
        window ahead, beside its start, and its first call must not go out without it); a
        probe cancelled midway is asked again by the next caller."""
        while self.facts is None:
            asking = self._asking
            if asking is not None:
                await asyncio.shield(asking)  # the asker's, not ours to cancel
                continue
            self._asking = asking = asyncio.get_running_loop().create_future()
            try:
                facts = ServerFacts()
                with contextlib.suppress(ModelError):
                    facts = await self._endpoint.remembered(
                        f"probe {self.base_url}", self._probe, keep=lambda found: found.answered
                    )
                self._adopt(facts)
            finally:
                self._asking = None
                asking.set_result(None)

    def _adopt(self, facts: ServerFacts) -> None:
        self.facts = facts
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

    async def _probe(self) -> ServerFacts:
        async with self._endpoint.slot() as client:
            return await probe(client, self.base_url, headers=self._endpoint.request_headers)

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
