"""Helpers for the model adapter tests: build SSE bodies, run a model, collect events."""

from __future__ import annotations

import json
import random
from typing import Any

from rho_adapters.fakes import WireTransport
from rho_adapters.fakes.clock import FakeClock
from rho_adapters.fakes.wire import Reply, raw_reply
from rho_adapters.model import (
    ClientPool,
    ModelEndpoint,
    OpenAIChatModel,
    RetryPolicy,
    resolve_provider,
)
from rho_domain.messages import UserMessage
from rho_domain.model import (
    ModelRequest,
    ReasoningChunk,
    RefusalChunk,
    StreamEvent,
    StreamFinished,
    TextChunk,
    ToolCallReady,
    UsageReport,
)


def data(obj: Any) -> bytes:
    return b"data: " + json.dumps(obj).encode() + b"\n\n"


def chunk(delta: dict[str, Any] | None = None, finish: str | None = None, **top: Any) -> bytes:
    """One chat.completion.chunk event for choice 0."""
    body = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "model": "m", **top}
    if "choices" not in top:
        body["choices"] = [{"index": 0, "delta": delta or {}, "finish_reason": finish}]
    return data(body)


DONE = b"data: [DONE]\n\n"


def request(**kw: Any) -> ModelRequest:
    kw.setdefault("model", "m")
    kw.setdefault("system", "sys")
    kw.setdefault("messages", (UserMessage("hi"),))
    return ModelRequest(**kw)


def make_model(
    *replies: Reply | bytes, provider: str | None = None, **kw: Any
) -> tuple[OpenAIChatModel, WireTransport, FakeClock]:
    clock = kw.pop("clock", None) or FakeClock()
    items = [raw_reply(r) if isinstance(r, bytes) else r for r in replies]
    transport = WireTransport(items, clock=clock)
    kw.setdefault("retry", RetryPolicy(max_retries=2))
    endpoint = ModelEndpoint(
        base_url=kw.pop("base_url", "http://fake.test/v1"),
        api_key=kw.pop("api_key", "sk-test"),
        **{k: kw.pop(k) for k in ("key_variable", "headers", "timeouts", "retry") if k in kw},
    )
    model = OpenAIChatModel(
        model="m",
        endpoint=endpoint,
        provider=resolve_provider(provider, kw.pop("profile_url", None)) if provider else None,
        http=ClientPool(transport=transport),
        clock=clock,
        rng=random.Random(7),
        **kw,
    )
    return model, transport, clock


async def collect(model: Any, req: ModelRequest | None = None) -> list[StreamEvent]:
    return [e async for e in model.stream(req or request())]


async def run_body(*pieces: bytes, provider: str | None = None) -> list[StreamEvent]:
    """Stream exactly these network chunks through a fresh model."""
    model, _, _ = make_model(raw_reply(*pieces), provider=provider)
    try:
        return await collect(model)
    finally:
        await model.aclose()


def text_of(events: list[StreamEvent]) -> str:
    return "".join(e.text for e in events if isinstance(e, TextChunk))


def reasoning_of(events: list[StreamEvent]) -> str:
    return "".join(e.text for e in events if isinstance(e, ReasoningChunk))


def refusal_of(events: list[StreamEvent]) -> str:
    return "".join(e.text for e in events if isinstance(e, RefusalChunk))


def calls_of(events: list[StreamEvent]) -> list[tuple[str, str, str]]:
    return [
        (e.call.id, e.call.name, e.call.arguments) for e in events if isinstance(e, ToolCallReady)
    ]


def usage_of(events: list[StreamEvent]) -> Any:
    reports = [e.usage for e in events if isinstance(e, UsageReport)]
    assert len(reports) == 1
    return reports[0]


def finish_of(events: list[StreamEvent]) -> str | None:
    finished = [e for e in events if isinstance(e, StreamFinished)]
    assert len(finished) == 1
    assert events[-1] is finished[0]
    return finished[0].finish_reason
