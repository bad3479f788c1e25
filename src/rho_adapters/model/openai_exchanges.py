"""The HTTP exchanges of an ``OpenAIChatModel``: each one request to the server and its reading.

``attempt_events`` posts one Chat Completions body and reads the answer into domain events: a
response that is not an answer is refused (``refusals.not_an_answer``), the SSE stream or the
whole JSON body is read by ``openai_read``, then come the assembled ``ToolCallReady`` events,
one ``UsageReport`` (the server's, or the meter's estimate marked ``estimated``) and one
``StreamFinished``. ``tokenizer_count`` asks the server's tokenizer endpoint, in the
provider's shape, for a prompt's count; ``server_facts`` asks the server what it is
(``detect.probe``). None of them retries, resends or explains an error: what to send again,
and what a failure teaches, is the model's (``openai_chat``).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, Mapping
from typing import TYPE_CHECKING, Any

from rho_adapters.model._errors import map_httpx_errors
from rho_adapters.model.answer_limits import BODY_WAIT, STREAM_WAIT, AnswerLimits, AnswerWatch
from rho_adapters.model.bodies import small_json
from rho_adapters.model.chunks import ChunkAssembler
from rho_adapters.model.counts import token_count
from rho_adapters.model.detect import ServerFacts, probe, server_root
from rho_adapters.model.openai_read import read_stream, read_whole
from rho_adapters.model.refusals import not_an_answer
from rho_domain.errors import ModelError
from rho_domain.messages import Usage
from rho_domain.model import StreamFinished, UsageReport

if TYPE_CHECKING:
    from rho_adapters.model._http import Endpoint, Timeouts
    from rho_adapters.model.core_client import RequestTimeout
    from rho_adapters.model.providers import Provider
    from rho_adapters.model.retrying import Attempt
    from rho_adapters.model.tokens import TokenMeter
    from rho_domain.model import ModelRequest, StreamEvent
    from rho_domain.ports.clock import Clock


async def attempt_events(
    endpoint: Endpoint,
    url: str,
    body: Mapping[str, Any],
    state: Attempt,
    *,
    streaming: bool,
    timeout: RequestTimeout,
    limits: AnswerLimits,
    clock: Clock,
    model: str,
    key: str | None,
    meter: TokenMeter,
    as_read: ModelRequest,
) -> AsyncGenerator[StreamEvent, None]:
    """The events of one POST of ``body`` to ``url`` through ``endpoint`` (``state`` is the
    retry loop's attempt), read as a stream when ``streaming``, else as one JSON response for
    ``model``, against ``limits`` from ``timeout``'s read time on.

    Raises ``ModelError`` (its ``partial_text`` the text assembled before the failure) for a
    refused response or a broken read; ``key`` is kept out of what the errors quote. ``meter``
    learns from the server's prompt count of ``as_read`` (the request as the model reads it),
    and estimates the usage when the server reports none."""
    assembler = ChunkAssembler(max_calls=limits.max_tool_calls)
    try:
        async with endpoint.post_stream(
            url, body, timeout, state, head_seconds=limits.max_seconds
        ) as response:
            watch = AnswerWatch(
                timeout.read,
                limits=limits,
                url=url,
                started=state.started,
                waited=STREAM_WAIT if streaming else BODY_WAIT,
            )
            refused = await not_an_answer(response, watch, now=clock.now())
            if refused is not None:
                raise refused
            if streaming:
                async for event in read_stream(response, assembler, url, watch, key=key):
                    yield event
            else:
                for event in await read_whole(response, assembler, url, model, watch):
                    yield event
    except ModelError as exc:
        exc.partial_text = exc.partial_text or assembler.partial_text
        raise
    for event in assembler.finish():
        yield event
    if assembler.usage is not None and assembler.usage.input_tokens:
        meter.learn(as_read, assembler.usage.input_tokens)
    usage = assembler.usage or Usage(
        input_tokens=meter.estimate(as_read),
        output_tokens=meter.estimate_chars(assembler.response_chars()),
        estimated=True,
    )
    yield UsageReport(usage)
    reason = assembler.finish_reason or "stop"
    yield StreamFinished("length" if assembler.arguments_cut else reason)


async def tokenizer_count(
    endpoint: Endpoint,
    base_url: str,
    provider: Provider,
    model: str,
    text: str,
    timeouts: Timeouts,
) -> int | None:
    """The count the tokenizer of ``base_url``'s server (at ``provider.tokenize_path``, asked
    as ``provider`` expects) gives for ``model``'s prompt ``text`` (its ``count``, or the
    length of its ``tokens``); None when it gives none: an error, a status other than 200, a
    body that is not such JSON, or no whole answer within ``timeouts.idle``. Never raises a
    ``ModelError``: a count is a hint, and the caller estimates without one."""
    path = provider.tokenize_path
    body: dict[str, Any] = {"model": model}
    body["input" if path.startswith("/extras") else "content"] = text
    if provider.name == "vllm":
        body = {"model": model, "prompt": text}
    try:
        # bounded in size and, as a whole, in time: the server chooses what it sends
        with map_httpx_errors():
            async with endpoint.slot() as client, asyncio.timeout(timeouts.idle):
                data, _ = await small_json(
                    client,
                    "POST",
                    server_root(base_url) + path,
                    json=body,
                    headers=endpoint.request_headers,
                    timeout=timeouts.for_tier(None),
                )
    except (ModelError, TimeoutError):
        return None
    if not isinstance(data, Mapping):
        return None
    count = token_count(data.get("count"))
    if count is None and isinstance(data.get("tokens"), list):
        count = len(data["tokens"])
    return count


async def server_facts(endpoint: Endpoint, base_url: str, timeouts: Timeouts) -> ServerFacts:
    """What the server at ``base_url`` says it is (``detect.probe``), asked through
    ``endpoint`` and waiting no longer than ``timeouts.idle``."""
    async with endpoint.slot() as client:
        return await probe(
            client,
            base_url,
            headers=endpoint.request_headers,
            timeout=timeouts.idle,  # --timeout 3: the probe waits no longer either
        )
