"""Code plugged into the loop that raises ``SystemExit`` or ``GeneratorExit`` fails as its
``Exception`` would: the run goes on (a tool's result, a listener ignored, a hook failing
closed) or ends ``error`` naming it (an approver); the event loop and the session go on.

Before, a tool handler's ``SystemExit`` (``sys.exit``, argparse or click on bad arguments)
left ``Session.run`` with the call answered "cancelled by the user"; an approver's, raised in
the task its answer is awaited in, left the event loop itself, so ``asyncio.run`` ended there
(a server's every session with it); a listener's and an async hook's left the run.
``KeyboardInterrupt`` (a second Ctrl+C) and cancellation still stop what runs.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

import pytest
from domain_support import WriteNoteTool, make_session

from rho_adapters.fakes import MemoryExecutor, MemorySessionStore, call, text, tools
from rho_domain import events as ev
from rho_domain.hooks import BeforeToolCall, Hooks
from rho_domain.messages import ToolResultMessage
from rho_domain.ports.approver import ApprovalAnswer, ApprovalRequest, Approver
from rho_domain.run import RunStatus
from rho_domain.tools.base import READ_ONLY, ToolContext, ToolHandler, ToolOutput, ToolPolicy


class ExitingTool(ToolHandler):
    name = "exiting"
    description = "Raise what it was given."
    parameters: Mapping[str, Any] = {"type": "object", "properties": {}}

    def __init__(self, exc: BaseException) -> None:
        self.exc = exc

    def policy_for(self, arguments: Mapping[str, Any]) -> ToolPolicy:
        return READ_ONLY

    async def handle(self, arguments: Mapping[str, Any], ctx: ToolContext) -> ToolOutput:
        raise self.exc


class ExitingApprover(Approver):
    async def decide(self, request: ApprovalRequest) -> ApprovalAnswer:
        raise SystemExit(2)


def _results(session: Any) -> dict[str, str]:
    return {
        m.call_id: m.content for m in session.state.messages if isinstance(m, ToolResultMessage)
    }


async def test_a_plugged_in_exit_is_that_codes_failure_not_the_processes() -> None:
    exiting = [tools(call("exiting", {}, id="t1")), text("went on")]
    for exc in (SystemExit(2), GeneratorExit()):
        tool = make_session(exiting, tools=[ExitingTool(exc)])
        assert (await tool.run("tool")).status is RunStatus.COMPLETED
        said = _results(tool)["t1"]
        assert f"the tool 'exiting' raised {type(exc).__name__}(" in said
        assert "would have ended the process" in said

    write = [tools(call("write", {"path": "a", "content": "b"}, id="w1")), text("went on")]
    asked = make_session(write, tools=[WriteNoteTool()], profile="developer")
    asked.set_approver(ExitingApprover())
    ended = await asked.run("approver")
    assert ended.status is RunStatus.ERROR
    assert "the approver test_plugged_exits.ExitingApprover raised SystemExit(2)" in str(
        ended.error
    )

    async def exiting_hook(value: BeforeToolCall) -> None:
        raise SystemExit(3)

    hooked = make_session(write, tools=[WriteNoteTool()], hooks=Hooks(before_tool=[exiting_hook]))
    assert (await hooked.run("hook")).status is RunStatus.COMPLETED
    assert "raised SystemExit(3)" in _results(hooked)["w1"]  # refused: the hook failed closed

    seen: list[ev.Event] = []

    def exiting_listener(event: ev.Event) -> None:
        seen.append(event)
        if isinstance(event, ev.RunStarted):
            raise SystemExit(4)

    heard = make_session([text("heard")])
    assert (await heard.run("listener", on_event=exiting_listener)).text == "heard"
    failed = [e for e in seen if isinstance(e, ev.ListenerFailed)]
    assert len(failed) == 1
    assert "raised SystemExit(4)" in str(failed[0])


async def test_a_second_ctrl_c_in_a_tool_still_stops_the_run_and_says_so() -> None:
    """Before, the run's end recorded status ``error`` with no message at all (a
    ``KeyboardInterrupt`` was neither the failure it records nor a cancel)."""
    store = MemorySessionStore()
    session = make_session(
        [tools(call("exiting", {}, id="t1"))], tools=[ExitingTool(KeyboardInterrupt())], store=store
    )
    with pytest.raises(KeyboardInterrupt):
        await session.run("tool")
    assert asyncio.get_running_loop().is_running()
    ended = session.last_result
    assert ended is not None
    assert ended.status is RunStatus.ERROR
    assert ended.error is not None
    assert ended.error.startswith("KeyboardInterrupt: the run was interrupted")
    stored = [e for e in store.events(session.id) if isinstance(e, ev.RunEnded)]
    assert stored[-1].error == ended.error


class UnsayableError(Exception):
    """A plugged-in failure whose own message is a bug."""

    def __str__(self) -> str:
        raise ValueError("the __str__ broke")


class UnsayableExit(SystemExit):
    def __str__(self) -> str:
        raise ValueError("the __str__ broke")


async def test_a_failure_whose_message_raises_is_still_that_codes_failure() -> None:
    """Before, formatting the failure raised again inside the handler meant to contain it:
    the tool's ``UnsayableError`` ended the run ``error`` with "ValueError: the __str__
    broke", a hook's left the run, and a ``SystemExit`` subclass's was told as the tool's
    ``ValueError``. A message of megabytes is cut for the events that carry it."""
    unread = "(its message could not be read: ValueError in __str__)"
    for exc, expected in (
        (UnsayableError(), f"Tool 'exiting' failed unexpectedly: UnsayableError: {unread}"),
        (UnsayableExit(), "the tool 'exiting' raised UnsayableExit((its message could not be read"),
        (RuntimeError("x" * 100_000), "(100,000 characters in all)"),
    ):
        session = make_session(
            [tools(call("exiting", {}, id="t1")), text("went on")], tools=[ExitingTool(exc)]
        )
        assert (await session.run("tool")).status is RunStatus.COMPLETED
        assert expected in _results(session)["t1"]

    async def unsayable_hook(value: BeforeToolCall) -> None:
        raise UnsayableError

    write = [tools(call("write", {"path": "a", "content": "b"}, id="w1")), text("went on")]
    hooked = make_session(write, tools=[WriteNoteTool()], hooks=Hooks(before_tool=[unsayable_hook]))
    assert (await hooked.run("hook")).status is RunStatus.COMPLETED
    assert "UnsayableError: (its message could not be read" in _results(hooked)["w1"]

    seen: list[ev.Event] = []

    def unsayable_listener(event: ev.Event) -> None:
        seen.append(event)
        if isinstance(event, ev.RunStarted):
            raise UnsayableError

    heard = make_session([text("heard")])
    assert (await heard.run("listener", on_event=unsayable_listener)).text == "heard"
    failed = [e for e in seen if isinstance(e, ev.ListenerFailed)]
    assert failed[0].message.startswith("(its message could not be read")


class NonAnswers(Approver):
    """Answers what it was given, no ApprovalAnswer."""

    def __init__(self, answer: object) -> None:
        self.answer = answer

    async def decide(self, request: ApprovalRequest) -> ApprovalAnswer:
        return self.answer  # type: ignore[return-value]


class SyncApprover(Approver):
    def decide(self, request: ApprovalRequest) -> ApprovalAnswer:  # type: ignore[override]
        return ApprovalAnswer(approved=True)


async def test_an_approvers_non_answer_names_it_and_runs_nothing() -> None:
    """Before, an approver answering None or True ended the run with "AttributeError:
    'NoneType' object has no attribute 'approved'", naming nobody; a ``decide`` written
    without ``async`` ended it with a TypeError about ``await``."""
    write = [tools(call("write", {"path": "a", "content": "b"}, id="w1")), text("went on")]
    for answer in (None, True):
        said = type(answer).__name__
        executor = MemoryExecutor()
        asked = make_session(write, tools=[WriteNoteTool()], profile="developer", executor=executor)
        asked.set_approver(NonAnswers(answer))
        ended = await asked.run("approver")
        assert ended.status is RunStatus.ERROR
        assert ended.error == (
            f"ConfigError: the approver test_plugged_exits.NonAnswers answered {said}, not an "
            "ApprovalAnswer: its decide must return ApprovalAnswer(approved=True or False), "
            "or raise ApprovalInterrupt to leave the call pending"
        )
        assert not executor.files  # the call was not run
    synced = make_session(write, tools=[WriteNoteTool()], profile="developer")
    synced.set_approver(SyncApprover())
    assert (await synced.run("approver")).status is RunStatus.COMPLETED


class ClosingListener:
    """A listener told when its session closes; ``fails`` raises there."""

    def __init__(self, fails: BaseException | None = None) -> None:
        self.fails, self.closed = fails, 0

    def __call__(self, event: ev.Event) -> None:
        pass

    def session_closed(self) -> None:
        self.closed += 1
        if self.fails is not None:
            raise self.fails


async def test_a_listener_failing_at_close_leaves_the_others_told(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Before, the first listener whose ``session_closed`` raised left the ones after it
    untold (a tracer's session span never ended) and its error came out of ``close``."""
    failing, exiting, told = (
        ClosingListener(RuntimeError("broken")),
        ClosingListener(SystemExit(5)),
        ClosingListener(),
    )
    session = make_session([text("done")])
    session.journal.listeners.extend([failing, exiting, told])
    await session.run("go")
    await session.close()
    assert (failing.closed, exiting.closed, told.closed) == (1, 1, 1)
    said = [r.getMessage() for r in caplog.records if "when its session closed" in r.getMessage()]
    assert len(said) == 2
    assert said[0].endswith("RuntimeError: broken")
    assert "raised SystemExit(5), which would have ended the process" in said[1]
