"""Approval: the pure policy in every mode, and the loop's fail-closed behaviour."""

from __future__ import annotations

import attrs
import pytest
from domain_support import EchoTool, WriteNoteTool, make_session

from rho_adapters.fakes import (
    MemoryExecutor,
    MemorySessionStore,
    ScriptedApprover,
    ScriptedModel,
    call,
    text,
    tools,
)
from rho_domain.approval import Allowed, Denied, RequiresApproval, decide
from rho_domain.errors import SessionStateError
from rho_domain.loop.session import Session
from rho_domain.messages import ToolResultMessage
from rho_domain.permissions import ApprovalMode, PermissionProfile, builtin_profile
from rho_domain.ports.approver import ApprovalAnswer
from rho_domain.run import RunStatus
from rho_domain.state import State
from rho_domain.tools.base import DANGEROUS, READ_ONLY

ECHO = call("echo", {"text": "hi"})
WRITE = call("write", {"path": "a.txt", "content": "x"})


def profile(mode: ApprovalMode, **fields: object) -> PermissionProfile:
    return PermissionProfile(name="p", approval=mode, **fields)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("mode", "tool_call", "policy", "expected"),
    [
        (ApprovalMode.ALL, ECHO, READ_ONLY, RequiresApproval),
        (ApprovalMode.DANGEROUS, ECHO, READ_ONLY, Allowed),
        (ApprovalMode.DANGEROUS, WRITE, DANGEROUS, RequiresApproval),
        (ApprovalMode.NONE, WRITE, DANGEROUS, Allowed),
    ],
)
def test_policy_per_mode(mode, tool_call, policy, expected) -> None:  # type: ignore[no-untyped-def]
    assert isinstance(decide(profile(mode), tool_call, policy), expected)


def test_granular_mode_asks_the_named_tools_and_every_dangerous_call() -> None:
    # The list adds questions; it never removes one: a tool it forgets (a custom or MCP tool)
    # still asks when its handler declares the call dangerous, as under DANGEROUS.
    granular = profile(ApprovalMode.GRANULAR, approval_required_tools=frozenset({"echo"}))
    assert decide(granular, ECHO, READ_ONLY) == RequiresApproval(
        "the 'p' profile asks before 'echo'"
    )
    assert decide(granular, WRITE, DANGEROUS) == RequiresApproval(
        "'write' can change things outside the conversation"
    )
    assert decide(granular, call("grep", {"pattern": "x"}), READ_ONLY) == Allowed()


def test_denied_tools_are_denied_even_with_auto_approve() -> None:
    denied = profile(ApprovalMode.NONE, denied_tools=frozenset({"write"}))
    assert isinstance(decide(denied, WRITE, DANGEROUS, auto_approve=True), Denied)


def test_dangerous_patterns_ask_even_for_tools_approved_always() -> None:
    rm = call("bash", {"command": "rm -rf build"})
    p = profile(ApprovalMode.GRANULAR, approval_required_tools=frozenset())
    assert isinstance(decide(p, rm, DANGEROUS, always_allowed={"bash"}), RequiresApproval)
    assert isinstance(decide(p, rm, DANGEROUS, auto_approve=True), Allowed)
    assert isinstance(decide(profile(ApprovalMode.NONE), rm, DANGEROUS), Allowed)


@pytest.mark.parametrize(
    ("command", "patterns"),
    [
        ("RM -RF build", ("rm -rf",)),  # the arguments in capitals
        ("Drop Table users", ("drop table",)),
        ("rm -rf build", ("RM -RF",)),  # the profile's pattern in capitals
    ],
)
def test_dangerous_patterns_match_whatever_the_case(
    command: str, patterns: tuple[str, ...]
) -> None:
    shout = call("bash", {"command": command})
    p = profile(
        ApprovalMode.GRANULAR, approval_required_tools=frozenset(), dangerous_patterns=patterns
    )
    decision = decide(p, shout, DANGEROUS, always_allowed={"bash"})
    assert decision == RequiresApproval(
        f"the arguments contain the dangerous pattern {patterns[0]!r}"
    )


BASH_LS = call("bash", {"command": "ls"})


@pytest.mark.parametrize(
    ("p", "tool_call", "always", "expected"),
    [
        (
            profile(ApprovalMode.NONE, denied_tools=frozenset({"bash"})),
            BASH_LS,
            set(),
            Denied("the 'p' profile does not allow the 'bash' tool"),
        ),
        (
            profile(ApprovalMode.ALL),
            BASH_LS,
            {"bash"},
            Allowed("approved for the rest of the session"),
        ),
        (
            profile(ApprovalMode.ALL),
            BASH_LS,
            set(),
            RequiresApproval("the 'p' profile asks before every tool call"),
        ),
        (
            profile(ApprovalMode.DANGEROUS),
            BASH_LS,
            set(),
            RequiresApproval("'bash' can change things outside the conversation"),
        ),
        (  # a dangerous call says so first, named or not (the developer's words as before)
            profile(ApprovalMode.GRANULAR, approval_required_tools=frozenset({"bash"})),
            BASH_LS,
            set(),
            RequiresApproval("'bash' can change things outside the conversation"),
        ),
        (
            profile(ApprovalMode.GRANULAR, approval_required_tools=frozenset({"read"})),
            BASH_LS,
            set(),
            RequiresApproval("'bash' can change things outside the conversation"),
        ),
        (
            profile(ApprovalMode.GRANULAR, approval_required_tools=frozenset({"read"})),
            BASH_LS,
            {"bash"},
            Allowed("approved for the rest of the session"),
        ),
    ],
)
def test_each_decision_says_why(  # type: ignore[no-untyped-def]
    p, tool_call, always, expected
) -> None:
    # The reasons reach the model (denials) and the person asked (approvals), word for word.
    assert decide(p, tool_call, DANGEROUS, always_allowed=always) == expected


def test_unknown_tools_and_invalid_arguments_pass_to_the_registry() -> None:
    assert isinstance(decide(profile(ApprovalMode.ALL), ECHO, None), Allowed)


def test_builtin_profiles_ask_what_the_seeds_say() -> None:
    readonly, developer = builtin_profile("readonly"), builtin_profile("developer")
    assert isinstance(decide(readonly, WRITE, DANGEROUS), RequiresApproval)
    assert isinstance(decide(readonly, ECHO, READ_ONLY), Allowed)
    assert isinstance(decide(developer, WRITE, DANGEROUS), RequiresApproval)
    assert isinstance(decide(builtin_profile("eval"), WRITE, DANGEROUS), Allowed)
    assert builtin_profile("unrestricted") == builtin_profile("eval")


def test_builtin_profiles_read_risk_from_the_handler_not_from_a_name_list() -> None:
    """A new tool needs no entry in permissions.py: its policy decides."""
    deploy = call("deploy", {"target": "prod"})
    for name in ("readonly", "developer"):
        assert isinstance(decide(builtin_profile(name), deploy, DANGEROUS), RequiresApproval)
        assert isinstance(decide(builtin_profile(name), deploy, READ_ONLY), Allowed)


async def test_approved_call_runs_and_rejected_call_ends_the_run() -> None:
    executor = MemoryExecutor()
    approver = ScriptedApprover([True])
    session = make_session(
        [tools(WRITE), text("done")],
        tools=[WriteNoteTool()],
        profile="developer",
        approver=approver,
        executor=executor,
    )
    assert (await session.run("go")).status is RunStatus.COMPLETED
    assert executor.files == {"a.txt": b"x"}
    assert approver.requests[0].arguments == {"path": "a.txt", "content": "x"}

    rejecting = make_session(
        [tools(attrs.evolve(WRITE, id="w1"), attrs.evolve(WRITE, id="w2")), text("never")],
        tools=[WriteNoteTool()],
        profile="developer",
        approver=ScriptedApprover([False]),
    )
    result = await rejecting.run("go")
    assert result.status is RunStatus.COMPLETED  # the run waits for the user's next words
    results = [m for m in rejecting.state.messages if isinstance(m, ToolResultMessage)]
    assert ["rejected" in results[0].content, "rejected an earlier" in results[1].content] == [
        True,
        True,
    ]
    assert rejecting.model.remaining == 1  # type: ignore[attr-defined]


async def test_always_approves_the_tool_for_the_rest_of_the_session() -> None:
    approver = ScriptedApprover([ApprovalAnswer(approved=True, always=True)])
    session = make_session(
        [tools(attrs.evolve(WRITE, id="1")), tools(attrs.evolve(WRITE, id="2")), text("ok")],
        tools=[WriteNoteTool()],
        profile="developer",
        approver=approver,
    )
    assert (await session.run("go")).status is RunStatus.COMPLETED
    assert len(approver.requests) == 1


async def test_no_approver_fails_closed_then_resolve_and_run_continues() -> None:
    executor = MemoryExecutor()
    session = make_session(
        [tools(ECHO, WRITE), text("all done")],
        tools=[EchoTool(), WriteNoteTool()],
        profile="developer",
        executor=executor,
    )
    result = await session.run("go")
    assert result.status is RunStatus.AWAITING_APPROVAL
    assert [p.call.id for p in result.pending] == [WRITE.id]
    assert executor.files == {}  # never "no callback means everything runs"
    with pytest.raises(SessionStateError):
        session.resolve_approval("nope", True)
    session.resolve_approval(WRITE.id, True)
    resumed = await session.run()
    assert resumed.status is RunStatus.COMPLETED
    assert resumed.text == "all done"
    assert executor.files == {"a.txt": b"x"}


async def test_awaiting_approval_survives_a_restart_through_the_store() -> None:
    store = MemorySessionStore()
    first = make_session([tools(WRITE)], tools=[WriteNoteTool()], profile="developer", store=store)
    assert (await first.run("go")).status is RunStatus.AWAITING_APPROVAL
    await first.close()

    record, events = await store.open(first.id)
    state = State.from_events(events)
    assert [c.id for c in state.pending_calls] == [WRITE.id]
    executor = MemoryExecutor()
    second = Session(
        first.agent,
        model=ScriptedModel([text("finished")]),
        executor=executor,
        clock=first.clock,
        store=store,
        session_id=record.id,
        state=state,
        created=True,
    )
    second.resolve_approval(WRITE.id, approved=False)
    result = await second.run()
    assert result.status is RunStatus.COMPLETED
    assert executor.files == {}
    rejected = [m for m in second.state.messages if isinstance(m, ToolResultMessage)]
    assert "rejected" in rejected[-1].content
    replay = State.from_events(store.events(first.id))
    assert replay.messages == second.state.messages
    assert replay.pending_calls == ()


async def test_a_new_prompt_supersedes_unresolved_approvals() -> None:
    session = make_session([tools(WRITE), text("ok")], tools=[WriteNoteTool()], profile="developer")
    await session.run("go")
    result = await session.run("never mind, do something else")
    assert result.status is RunStatus.COMPLETED
    superseded = [m for m in session.state.messages if isinstance(m, ToolResultMessage)]
    assert "new message" in superseded[0].content


async def test_denied_call_is_reported_to_the_model_and_the_loop_continues() -> None:
    denying = attrs.evolve(builtin_profile("eval"), denied_tools=frozenset({"write"}))
    session = make_session(
        [tools(WRITE), text("understood")], tools=[WriteNoteTool()], profile=denying
    )
    result = await session.run("go")
    assert result.status is RunStatus.COMPLETED
    assert result.text == "understood"
    denied = session.state.messages[2]
    assert isinstance(denied, ToolResultMessage)
    assert "denied" in denied.content


async def test_auto_approve_in_config_skips_the_approver() -> None:
    approver = ScriptedApprover()
    session = make_session(
        [tools(WRITE), text("ok")],
        tools=[WriteNoteTool()],
        profile="developer",
        approver=approver,
        auto_approve=True,
    )
    assert (await session.run("go")).status is RunStatus.COMPLETED
    assert approver.requests == []


async def test_agent_is_reusable_definition() -> None:
    first = make_session([tools(ECHO), text("first done")], tools=[EchoTool()])
    agent = first.agent
    second = Session(
        agent,
        model=ScriptedModel([text("second done")]),
        executor=MemoryExecutor(),
        clock=first.clock,
    )
    assert (await first.run("one")).text == "first done"
    assert (await second.run("two")).text == "second done"
    # Each session keeps its own conversation; the shared definition holds none of it.
    assert [type(m).__name__ for m in first.state.messages] == [
        "UserMessage",
        "AssistantMessage",
        "ToolResultMessage",
        "AssistantMessage",
    ]
    assert [type(m).__name__ for m in second.state.messages] == [
        "UserMessage",
        "AssistantMessage",
    ]
    assert second.agent is agent
    request = agent.request(second.state.messages)
    assert request.system == "You are a test agent."
    assert [spec.name for spec in request.tools] == ["echo"]


async def test_an_answer_given_while_the_call_is_asked_about_holds() -> None:
    """A listener answering in the ``approval_requested`` event itself (``resolve_approval``),
    and an answer given while the approver still decides. Before: with no approver the run
    ended ``awaiting_approval`` on a call already answered; with one, the approver was asked
    anyway and its later "no" overrode the "yes" given first, both answers recorded."""
    for asks, in_event in ((False, True), (True, True), (True, False)):
        assert await _answers_kept(asks=asks, in_event=in_event) == [True], (asks, in_event)


async def _answers_kept(*, asks: bool, in_event: bool) -> list[bool]:
    """The answers recorded for a call answered "yes" by ``resolve_approval`` in the event
    (``in_event``) or while an approver (``asks``) that says "no" decides."""
    import asyncio

    from rho_domain import events as ev
    from rho_domain.ports.approver import ApprovalRequest, Approver

    class LateNo(Approver):
        async def decide(self, request: ApprovalRequest) -> ApprovalAnswer:
            if not in_event:
                asyncio.get_running_loop().call_soon(session.resolve_approval, "c1", True)
            for _ in range(3):  # the answer above comes in meanwhile
                await asyncio.sleep(0)
            return ApprovalAnswer(approved=False)

    def answer(event: ev.Event) -> None:
        if in_event and isinstance(event, ev.ApprovalRequested):
            session.resolve_approval("c1", True)

    store = MemorySessionStore()
    session = make_session(
        [tools(call("write", {"path": "a.txt", "content": "x"}, id="c1")), text("done")],
        tools=[WriteNoteTool()],
        profile="developer",
        approver=LateNo() if asks else None,
        store=store,
    )
    result = await session.run("go", on_event=answer)
    assert result.status is RunStatus.COMPLETED
    return [e.approved for e in store.events(session.id) if isinstance(e, ev.ApprovalResolved)]
