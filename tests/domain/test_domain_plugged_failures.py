"""What the user's code plugged into the loop raises is named, and loses nothing.

Before: a tool whose ``policy_for`` raised ended the run on its bare "KeyError: 'x'", the call
answered "[cancelled by the user...]"; a ``description`` or ``parameters`` that raised when
read again for a later model call ended the run on "RuntimeError: ...", naming no tool; an
approver (``approver=`` or ``approval_callback``) that raised ended the run on its bare
"ValueError: ...". And any error that ended a run mid-batch answered the calls it left
"cancelled by the user", which nobody had done.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from domain_support import EchoTool, make_session

from rho_adapters.fakes import MemorySessionStore, call, text, tools
from rho_domain import events as ev
from rho_domain.errors import StoreError
from rho_domain.messages import ToolResultMessage
from rho_domain.ports.approver import ApprovalAnswer, ApprovalRequest, Approver
from rho_domain.run import RunStatus
from rho_domain.tools.base import DANGEROUS, ToolOutput, ToolPolicy


class Judged(EchoTool):
    """An echo tool whose policy is ``judged`` (raised when it is an exception)."""

    judged: BaseException | ToolPolicy = DANGEROUS

    def policy_for(self, arguments: Mapping[str, Any]) -> ToolPolicy:
        if isinstance(self.judged, BaseException):
            raise self.judged
        return self.judged


def _results(session: Any) -> list[str]:
    return [m.content for m in session.state.messages if isinstance(m, ToolResultMessage)]


async def test_a_policy_that_raises_refuses_its_call_naming_the_tool() -> None:
    for raised in (KeyError("oops"), SystemExit(3)):
        tool = Judged()
        tool.judged = raised
        session = make_session([tools(call("echo", {"text": "x"})), text("done")], tools=[tool])
        result = await session.run("go")
        assert (result.status, result.error) == (RunStatus.COMPLETED, None)
        assert _results(session) == [
            f"Tool 'echo' was not run: judging the call, Judged.policy_for raised "
            f"{type(raised).__name__}: {raised} (a bug in the tool, not in the arguments)."
        ]


async def test_a_description_that_raises_later_ends_the_run_naming_the_tool() -> None:
    class Flaky(EchoTool):
        ran = False

        @property
        def description(self) -> str:  # type: ignore[override]
            if self.ran:
                raise RuntimeError("catalogue gone")
            return "echo"

        async def handle(self, arguments: Mapping[str, Any], ctx: Any) -> ToolOutput:
            self.ran = True
            return await super().handle(arguments, ctx)

    session = make_session([tools(call("echo", {"text": "x"})), text("done")], tools=[Flaky()])
    result = await session.run("go")
    assert result.status is RunStatus.ERROR
    assert result.error == (
        "ConfigError: tool 'echo': reading Flaky.description raised RuntimeError: catalogue "
        "gone while listing the tools for the model; the model is shown each tool's "
        "description and parameters, so they must stay readable"
    )
    assert _results(session) == ["x"]  # the call made before is kept


async def test_an_approver_that_raises_is_named_and_its_call_still_waits() -> None:
    class Broken(Approver):
        async def decide(self, request: ApprovalRequest) -> ApprovalAnswer:
            raise ValueError("pager down")

    session = make_session(
        [tools(call("echo", {"text": "x"}, id="c1")), text("done")],
        tools=[Judged()],
        profile="developer",
        approver=Broken(),
    )
    result = await session.run("go")
    assert (result.status, result.error_type) == (RunStatus.ERROR, "ApproverFailed")
    assert result.error == (
        "ApproverFailed: the approver test_domain_plugged_failures.test_an_approver_that_"
        "raises_is_named_and_its_call_still_waits.<locals>.Broken raised ValueError: pager "
        "down deciding on call c1 (echo); the call was not run and waits for a decision: fix "
        "the approver and resume the session, or answer the call (resolve_approval)"
    )
    assert [p.call.id for p in session.state.waiting_approvals()] == ["c1"]
    session.resolve_approval("c1", True)
    assert (await session.run()).status is RunStatus.COMPLETED
    assert _results(session) == ["x"]


async def test_an_error_mid_batch_answers_the_call_with_the_error_not_a_cancel() -> None:
    class FullDisk(MemorySessionStore):
        async def append(self, session_id: str, events: Sequence[ev.Event]) -> None:
            if any(isinstance(e, ev.ToolStarted) for e in events):
                raise StoreError("No space left on device")
            await super().append(session_id, events)

    session = make_session([tools(call("echo", {"text": "x"})), text("done")], store=FullDisk())
    result = await session.run("go")
    assert (result.status, result.error) == (RunStatus.ERROR, "StoreError: No space left on device")
    assert _results(session) == [
        "[stopped: the run ended on an error (StoreError: No space left on device) before this "
        "call's result was recorded; its effects, if any, are unknown.]"
    ]


async def test_a_cancelled_error_nobody_asked_for_is_the_plugged_codes_failure() -> None:
    """Before: a tool, a listener, a model or a tool source that raised ``CancelledError``
    although nothing cancelled it (it awaited a task something else had cancelled) let it
    out of ``Session.run``, as if the caller had been cancelled: ``asyncio.run`` ended there,
    with no result. Now it is that code's failure (``ExitRaised``), named, and a real cancel
    still cancels."""
    import asyncio

    from rho_adapters.fakes import ManualToolSource, ScriptedModel
    from rho_domain.tools.source import SourcedTools

    def unasked(*_: object) -> Any:
        raise asyncio.CancelledError("elsewhere")

    class Tool(EchoTool):
        handle = unasked  # type: ignore[assignment]

    class Model(ScriptedModel):
        stream = unasked  # type: ignore[assignment]

    class Source(ManualToolSource):
        async def current(self) -> SourcedTools:
            raise asyncio.CancelledError("elsewhere")

    said = "raised CancelledError(elsewhere) although nothing cancelled it (it awaited a task"
    turns = [tools(call("echo", {"text": "x"})), text("done")]
    session = make_session(turns, tools=[Tool()])
    seen: list[ev.Event] = []

    def listener(event: ev.Event) -> None:
        seen.append(event)
        unasked()

    result = await session.run("go", on_event=listener)
    assert result.status is RunStatus.COMPLETED
    assert _results(session)[0].startswith(
        f"Tool 'echo' failed: ExitRaised: the tool 'echo' {said}"
    )
    assert next(e.message for e in seen if isinstance(e, ev.ListenerFailed)).startswith(
        f"the listener test_domain_plugged_failures.test_a_cancelled_error_nobody_asked_for_"
        f"is_the_plugged_codes_failure.<locals>.listener {said}"
    )
    session = make_session(turns)
    session.model = Model([])
    result = await session.run("go")
    assert (result.status, result.error_type) == (RunStatus.ERROR, "ExitRaised")
    assert f".Model {said}" in (result.error or "")
    session = make_session(turns)
    session.tool_source = Source()
    seen = []
    result = await session.run("go", on_event=seen.append)
    assert result.status is RunStatus.COMPLETED
    assert f".Source {said}" in next(e.message for e in seen if isinstance(e, ev.ErrorOccurred))
