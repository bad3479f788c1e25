"""delegate: child agents share ports, inherit approval, stop with their parent."""

from __future__ import annotations

import asyncio
import gc
import weakref

from domain_support import EchoTool, SlowTool, WriteNoteTool, make_session

from rho_adapters.fakes import (
    MemoryExecutor,
    MemorySessionStore,
    ScriptedApprover,
    call,
    text,
    tools,
)
from rho_domain.messages import AssistantMessage, ToolResultMessage, UserMessage
from rho_domain.run import RunStatus
from rho_domain.tools.delegate import DelegateTool


async def test_child_answers_and_is_stored_under_its_parent() -> None:
    store = MemorySessionStore()
    session = make_session(
        [
            tools(call("delegate", {"instruction": "count files"})),
            text("3 files"),
            text("The sub-agent says 3 files."),
        ],
        tools=[EchoTool(), DelegateTool()],
        store=store,
    )
    result = await session.run("how many files?")
    assert result.status is RunStatus.COMPLETED
    delegated = session.state.messages[2]
    assert isinstance(delegated, ToolResultMessage)
    assert delegated.content == "3 files"
    child_request = session.model.requests[1]  # type: ignore[attr-defined]
    assert [s.name for s in child_request.tools] == ["echo"]  # no delegate: one level only
    assert child_request.messages == (UserMessage("count files"),)
    children = [i for i in await store.list() if i.parent_id == session.id]
    assert len(children) == 1
    assert children[0].status == "completed"


async def test_full_context_excludes_the_delegating_turn() -> None:
    session = make_session(
        [
            text("noted"),
            tools(call("delegate", {"instruction": "go", "full_context": True})),
            text("child done"),
            text("parent done"),
        ],
        tools=[DelegateTool()],
    )
    await session.run("remember 42")
    await session.run("now delegate")
    child_messages = session.model.requests[2].messages  # type: ignore[attr-defined]
    assert child_messages[:3] == (
        UserMessage("remember 42"),
        AssistantMessage(text="noted"),
        UserMessage("now delegate"),
    )
    assert child_messages[-1] == UserMessage("go")
    assert not any(isinstance(m, AssistantMessage) and m.tool_calls for m in child_messages)


async def test_child_tool_calls_go_through_the_parents_approver() -> None:
    approver, executor = ScriptedApprover([False]), MemoryExecutor()
    session = make_session(
        [
            tools(call("delegate", {"instruction": "write it"})),
            tools(call("write", {"path": "x", "content": "y"})),
            text("child wrote"),
            text("ok"),
        ],
        tools=[WriteNoteTool(), DelegateTool()],
        profile="developer",
        approver=approver,
        executor=executor,
    )
    result = await session.run("go")
    # developer asks for write (not for delegate); the child asks the same human
    assert [r.call.name for r in approver.requests] == ["write"]
    assert result.status is RunStatus.COMPLETED
    assert executor.files == {}  # the child's write was rejected by the human


async def test_cancelling_the_parent_cancels_the_child() -> None:
    slow = SlowTool()
    store = MemorySessionStore()
    session = make_session(
        [tools(call("delegate", {"instruction": "wait"})), tools(call("slow"))],
        tools=[slow, DelegateTool()],
        store=store,
    )
    task = asyncio.create_task(session.run("go"))
    await slow.started.wait()
    session.cancel()
    assert (await task).status is RunStatus.CANCELLED
    assert slow.cancelled
    child = next(i for i in await store.list() if i.parent_id == session.id)
    assert child.status == "cancelled"


async def test_a_failing_child_is_an_error_result_for_the_parent() -> None:
    from rho_adapters.fakes import Turn
    from rho_domain.errors import ServerError

    session = make_session(
        [
            tools(call("delegate", {"instruction": "x"})),
            Turn(text="half", error=ServerError("overloaded", status=503)),
            text("parent continues"),
        ],
        tools=[EchoTool(), DelegateTool()],
    )
    result = await session.run("go")
    assert result.status is RunStatus.COMPLETED
    assert result.text == "parent continues"
    delegated = session.state.messages[2]
    assert isinstance(delegated, ToolResultMessage)
    assert delegated.is_error
    assert "status error" in delegated.content
    assert "overloaded" in delegated.content


async def test_a_finished_session_is_freed_by_its_reference_count_not_the_collector() -> None:
    session = make_session([text("done")], tools=[EchoTool(), DelegateTool()])
    await session.run("hello")
    await session.close()
    gone = weakref.ref(session)
    gc.disable()  # a session left in a reference cycle would wait for the collector
    try:
        del session
        assert gone() is None
    finally:
        gc.enable()
