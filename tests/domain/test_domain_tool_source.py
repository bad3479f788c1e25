"""A session with a tool source: tools taken at each run's start and before each model call,
problems recorded once, children asking the same source (``ManualToolSource``)."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

from domain_support import EchoTool

from rho_adapters.fakes import (
    FakeClock,
    ManualToolSource,
    MemoryExecutor,
    ScriptedModel,
    call,
    text,
    tools,
)
from rho_domain import events as ev
from rho_domain.agent import Agent
from rho_domain.config import AgentConfig
from rho_domain.loop.session import Session
from rho_domain.permissions import builtin_profile
from rho_domain.run import RunStatus
from rho_domain.tools.base import DANGEROUS, ToolContext, ToolHandler, ToolOutput, ToolPolicy
from rho_domain.tools.delegate import DelegateTool
from rho_domain.tools.registry import ToolRegistry
from rho_domain.tools.source import SourcedTools


class Served(ToolHandler):
    """A sourced tool; ``then`` runs when it is called (a server changing its list)."""

    parameters: Mapping[str, Any] = {"type": "object", "properties": {}}

    def __init__(self, name: str, then: Any = None, policy: ToolPolicy = DANGEROUS) -> None:
        self._name = name
        self._then = then
        self._policy = policy

    @property
    def name(self) -> str:
        return self._name

    @property
    def description(self) -> str:
        return f"{self._name} from a server"

    def policy_for(self, arguments: Mapping[str, Any]) -> ToolPolicy:
        return self._policy

    async def handle(self, arguments: Mapping[str, Any], ctx: ToolContext) -> ToolOutput:
        if self._then is not None:
            self._then()
        return ToolOutput(content=f"{self._name} ran")


def session_with(source: ManualToolSource, turns: list[Any], *, profile: str = "eval") -> Session:
    agent = Agent(
        config=AgentConfig(profile=profile),
        profile=builtin_profile(profile),
        registry=ToolRegistry([EchoTool(), DelegateTool()]),
        system_prompt="You are a test agent.",
    )
    return Session(
        agent,
        model=ScriptedModel(turns),
        executor=MemoryExecutor(),
        clock=FakeClock(),
        tool_source=source,
    )


def names(request: Any) -> list[str]:
    return [spec.name for spec in request.tools]


async def test_a_list_changed_by_a_call_reaches_the_next_model_call() -> None:
    source = ManualToolSource()
    late = Served("mcp__s__late")
    grow = Served("mcp__s__grow", then=lambda: source.serve([late]))
    source.serve([grow], instructions=("Tickets look like T-1.",))
    session = session_with(
        source, [tools(call("mcp__s__grow", {})), tools(call("mcp__s__late", {})), text("done")]
    )
    result = await session.run("grow")
    assert result.status is RunStatus.COMPLETED, result.error
    first, second, third = session.model.requests  # type: ignore[attr-defined]
    assert "mcp__s__grow" in names(first)
    assert first.system == "You are a test agent.\n\nTickets look like T-1."
    assert "mcp__s__late" in names(second)
    assert "mcp__s__grow" not in names(second)
    assert second.system == "You are a test agent."  # the new answer gave no instructions
    assert "delegate" in names(third)  # the agent's own tools stay
    assert source.asks == 4  # the run's start and each of the three model calls


async def test_a_problem_is_recorded_once_and_the_run_goes_on() -> None:
    source = ManualToolSource()
    source.serve(problems=("MCP server 'x' did not start within 0.5 s",))
    seen: list[ev.Event] = []
    session = session_with(source, [tools(call("echo", {"text": "a"})), text("done")])
    result = await session.run("go", on_event=seen.append)
    assert result.status is RunStatus.COMPLETED
    errors = [e for e in seen if isinstance(e, ev.ErrorOccurred)]
    assert [(e.error_type, e.message) for e in errors] == [
        ("ToolSourceError", "MCP server 'x' did not start within 0.5 s")
    ]


async def test_a_child_asks_the_same_source() -> None:
    source = ManualToolSource([Served("mcp__s__t")])
    session = session_with(
        source,
        [
            tools(call("delegate", {"instruction": "use t"})),
            tools(call("mcp__s__t", {})),
            text("child done"),
            text("parent done"),
        ],
    )
    result = await session.run("go")
    assert result.status is RunStatus.COMPLETED, result.error
    child_first = session.model.requests[1]  # type: ignore[attr-defined]
    assert "mcp__s__t" in names(child_first)
    assert "delegate" not in names(child_first)


async def test_a_waiting_sourced_call_is_judged_with_the_sources_tools_on_resume() -> None:
    source = ManualToolSource([Served("mcp__s__write")])
    session = session_with(
        source, [tools(call("mcp__s__write", {}, id="c1")), text("written")], profile="readonly"
    )
    waiting = await session.run("write")
    assert waiting.status is RunStatus.AWAITING_APPROVAL  # dangerous: asked under readonly
    session.resolve_approval("c1", True)
    done = await session.run()
    assert done.status is RunStatus.COMPLETED, done.error
    assert session.state.messages[-2].content == "mcp__s__write ran"  # type: ignore[union-attr]


class Stuck(ManualToolSource):
    """A source whose servers never finish starting."""

    async def current(self) -> SourcedTools:
        self.asks += 1
        await asyncio.Event().wait()
        raise AssertionError("unreachable")


async def test_a_cancel_while_the_source_starts_ends_the_run_at_once() -> None:
    session = session_with(Stuck(), [text("never")])
    run = asyncio.ensure_future(session.run("go"))
    await asyncio.sleep(0.05)
    session.cancel()
    result = await asyncio.wait_for(run, 30)  # a hang bound: the source never starts
    assert result.status is RunStatus.CANCELLED
    assert session.model.requests == []  # type: ignore[attr-defined]


async def test_a_source_that_raises_is_named_once_and_its_tools_stay() -> None:
    """Before: a caller's ToolSource whose ``current`` raised ended the run on its bare
    "ConnectionError: registry down", naming no source."""

    class Flaky(ManualToolSource):
        down = False

        async def current(self) -> SourcedTools:
            if self.down:
                raise ConnectionError("registry down")
            return await super().current()

    def went_down() -> None:
        source.down = True

    source = Flaky([Served("mcp__s__t", then=went_down)])
    session = session_with(
        source, [tools(call("mcp__s__t")), tools(call("mcp__s__t")), text("done")]
    )
    model = session.model
    seen: list[ev.Event] = []
    result = await session.run("go", on_event=seen.append)
    assert (result.status, result.error) == (RunStatus.COMPLETED, None)
    said = [e.message for e in seen if isinstance(e, ev.ErrorOccurred)]
    assert said == [
        "the tool source test_domain_tool_source.test_a_source_that_raises_is_named_once_and_"
        "its_tools_stay.<locals>.Flaky raised ConnectionError: registry down when asked for its "
        "tools; the run goes on with the tools it served before"
    ]
    assert isinstance(model, ScriptedModel)
    assert [names(r) for r in model.requests][-1].count("mcp__s__t") == 1


async def test_a_served_tool_whose_description_raises_is_named_and_the_list_kept() -> None:
    """Before: a served tool whose ``description`` raised was read bare by ``ToolShapes``
    when the source's list changed, and the run ended on "RuntimeError: catalogue gone",
    naming no tool and no source."""

    class Unreadable(Served):
        @property
        def description(self) -> str:
            raise RuntimeError("catalogue gone")

    def swap() -> None:
        source.serve([Unreadable("mcp__s__u")])

    source = ManualToolSource([Served("mcp__s__t", then=swap)])
    session = session_with(source, [tools(call("mcp__s__t")), text("done")])
    seen: list[ev.Event] = []
    result = await session.run("go", on_event=seen.append)
    assert (result.status, result.error) == (RunStatus.COMPLETED, None)
    assert [e.message for e in seen if isinstance(e, ev.ErrorOccurred)] == [
        "the tool source rho_adapters.fakes.tool_source.ManualToolSource served a tool that "
        "cannot be shown to the model (tool 'mcp__s__u': reading Unreadable.description raised "
        "RuntimeError: catalogue gone while listing the tools for the model; the model is "
        "shown each tool's description and parameters, so they must stay readable); the run "
        "goes on with the tools it served before"
    ]
    assert isinstance(session.model, ScriptedModel)
    assert names(session.model.requests[-1]).count("mcp__s__t") == 1
