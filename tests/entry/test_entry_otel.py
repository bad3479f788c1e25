"""OpenTelemetry spans of a real session, captured with the SDK's in-memory exporter."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from obs_support import script
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode

from rho_adapters.extras import install_command
from rho_adapters.fakes import FakeClock, MemoryExecutor, ScriptedApprover, ScriptedModel
from rho_adapters.fakes.scripted_model import text
from rho_adapters.otel import CONTENT_CHARS
from rho_entry import Agent, AgentConfig, Session
from rho_entry.otel import instrument, traced


@pytest.fixture
def exporter() -> InMemorySpanExporter:
    return InMemorySpanExporter()


async def _run(
    exporter: InMemorySpanExporter,
    tmp_path: Path,
    prompt: str = "Write a page, then count files.",
    **options: object,
) -> str:
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    config = AgentConfig(model="gpt-4o", profile="developer", working_dir=str(tmp_path))
    async with Session(
        Agent(config),
        model=ScriptedModel(script()),
        executor=MemoryExecutor(),
        clock=FakeClock(start=1_000.0),
        approver=ScriptedApprover(default=True),
    ) as session:
        with traced(session, tracer_provider=provider, provider="openai", **options):
            result = await session.run(prompt)
    assert result.ok, result.error
    return session.id


def _one(spans: list[ReadableSpan], name: str) -> ReadableSpan:
    found = [s for s in spans if s.name == name]
    assert len(found) == 1, [s.name for s in spans]
    return found[0]


def attributes(span: ReadableSpan) -> dict[str, Any]:
    """The span's attributes (the SDK types them as optional; a finished span has them)."""
    assert span.attributes is not None
    return dict(span.attributes)


async def test_spans_follow_the_genai_conventions(
    exporter: InMemorySpanExporter, tmp_path: Path
) -> None:
    session_id = await _run(exporter, tmp_path)
    spans = list(exporter.get_finished_spans())
    session = _one(spans, "rho.session")
    runs = [s for s in spans if s.name == "invoke_agent rho-agent"]
    assert len(runs) == 2  # the parent's run and the child's
    parent_run = next(r for r in runs if r.parent and r.parent.span_id == session.context.span_id)
    assert attributes(parent_run)["gen_ai.operation.name"] == "invoke_agent"
    assert attributes(parent_run)["gen_ai.conversation.id"] == session_id
    assert attributes(parent_run)["rho.run.status"] == "completed"

    chats = [s for s in spans if s.name == "chat gpt-4o"]
    assert len(chats) == 4  # three parent calls, one child call
    first = min(chats, key=lambda s: s.start_time or 0)
    assert attributes(first)["gen_ai.operation.name"] == "chat"
    assert attributes(first)["gen_ai.request.model"] == "gpt-4o"
    assert attributes(first)["gen_ai.provider.name"] == "openai"
    assert attributes(first)["gen_ai.usage.input_tokens"] == 1000
    assert attributes(first)["gen_ai.usage.output_tokens"] == 100
    assert attributes(first)["gen_ai.usage.cache_read.input_tokens"] == 200
    assert tuple(attributes(first)["gen_ai.response.finish_reasons"]) == ("tool_calls",)
    assert attributes(first)["rho.usage.cost_usd"] > 0
    assert first.parent is not None
    assert first.parent.span_id == parent_run.context.span_id

    write = _one(spans, "execute_tool write")
    assert attributes(write)["gen_ai.operation.name"] == "execute_tool"
    assert attributes(write)["gen_ai.tool.name"] == "write"
    assert attributes(write)["gen_ai.tool.call.id"] == "call_w"
    assert "gen_ai.tool.call.arguments" not in attributes(write)  # content off by default
    read = _one(spans, "execute_tool read")
    assert read.status.status_code is StatusCode.ERROR

    # trace context reaches the child: its run nests under the parent's delegate call
    delegate = _one(spans, "execute_tool delegate")
    child_run = next(r for r in runs if r is not parent_run)
    assert child_run.parent is not None
    assert child_run.parent.span_id == delegate.context.span_id
    assert child_run.context.trace_id == session.context.trace_id
    assert (
        attributes(child_run)["gen_ai.conversation.id"]
        == attributes(delegate)["rho.child_session_id"]
    )
    assert {s.context.trace_id for s in spans} == {session.context.trace_id}
    # timed by the events' clock: the fake clock started at 1000 s
    assert session.start_time == 1_000 * 10**9


async def test_content_is_recorded_only_when_asked(
    exporter: InMemorySpanExporter, tmp_path: Path
) -> None:
    await _run(exporter, tmp_path, capture_content=True)
    write = _one(list(exporter.get_finished_spans()), "execute_tool write")
    assert "<script>" in str(attributes(write)["gen_ai.tool.call.arguments"])
    assert "gen_ai.tool.call.result" in attributes(write)


async def test_recorded_content_is_cut_to_what_a_span_carries(
    exporter: InMemorySpanExporter, tmp_path: Path
) -> None:
    # before: the whole prompt (megabytes pasted) went into the run span's attribute (the
    # script's delegated child has a prompt of its own)
    prompt = "p" * (CONTENT_CHARS + 5_000)
    await _run(exporter, tmp_path, prompt=prompt, capture_content=True)
    recorded = {
        str(attributes(span)["rho.prompt"])
        for span in exporter.get_finished_spans()
        if str(attributes(span).get("rho.prompt", "")).startswith("p")
    }
    assert recorded == {"p" * CONTENT_CHARS + "... [5000 more characters cut]"}


def test_without_the_extra_nothing_imports_opentelemetry_and_instrument_names_it() -> None:
    code = (
        "import sys\n"
        "sys.modules['opentelemetry'] = None\n"  # as if the extra were not installed
        "from rho_entry import Agent, AgentConfig, Session\n"
        "from rho_adapters.fakes import ScriptedModel, text\n"
        "s = Session(Agent(AgentConfig()), model=ScriptedModel([text('hi')]))\n"
        "r = s.run_sync('hi')\n"
        "assert r.ok, r.error\n"
        "assert not [m for m in sys.modules if m.startswith('opentelemetry.')], 'imported'\n"
        "from rho_entry.otel import instrument\n"
        "from rho_domain.errors import MissingExtra\n"
        "try:\n"
        "    instrument(s)\n"
        "except MissingExtra as e:\n"
        "    print(e)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=False, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert install_command("otel") in done.stdout


async def test_closing_the_session_ends_its_span(
    exporter: InMemorySpanExporter, tmp_path: Path
) -> None:
    """Without ``traced``: ``instrument`` alone, and the session span is exported at close."""
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    session = Session(
        Agent(AgentConfig(model="gpt-4o", working_dir=str(tmp_path))),
        model=ScriptedModel([text("hi")]),
        executor=MemoryExecutor(),
    )
    instrument(session, tracer_provider=provider)
    assert (await session.run("hi")).ok
    names = [s.name for s in exporter.get_finished_spans()]
    assert "invoke_agent rho-agent" in names
    assert "rho.session" not in names  # still open: the session may run again
    await session.close()
    await session.close()  # idempotent: one session span
    assert [s.name for s in exporter.get_finished_spans()].count("rho.session") == 1


@pytest.mark.parametrize("trace_sessions", [True, False])
async def test_a_runtime_that_traces_records_each_sessions_spans(
    exporter: InMemorySpanExporter,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    trace_sessions: bool,
) -> None:
    """``create_runtime(trace=True)`` (what ``rho-agent serve`` uses) instruments every session
    it opens when the process has an SDK provider, and the span ends when the handle closes
    the session. Without ``trace``, nothing is recorded."""
    from opentelemetry import trace

    from rho_entry.runtime import close_runtime, create_runtime, dispatch_prompt, start_runtime

    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    monkeypatch.setattr(trace, "get_tracer_provider", lambda: provider)
    runtime = await start_runtime(
        create_runtime(
            AgentConfig(model="gpt-4o", working_dir=str(tmp_path)),
            trace=trace_sessions,
            model=ScriptedModel([text("one"), text("two")]),
            executor=MemoryExecutor(),
        )
    )
    handles = [await dispatch_prompt(runtime, "hi", new_session=True) for _ in range(2)]
    for handle in handles:
        assert (await handle).ok
    await close_runtime(runtime)
    names = [s.name for s in exporter.get_finished_spans()]
    if trace_sessions:
        assert names.count("rho.session") == 2
        assert names.count("invoke_agent rho-agent") == 2
    else:
        assert names == []
