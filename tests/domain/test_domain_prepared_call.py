"""A tool call is parsed and validated once (issue 25, item 6): the policy, the approval, the
approver, the registry and the handler all read one ``PreparedCall``.

Before, the raw argument text was parsed up to four times (the policy, the profile's pattern
check, the approver's request, the dispatch) and validated twice; now ``registry.prepare``
does both once, and the objects the readers get are the same objects.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

from rho_adapters.fakes import (
    FakeClock,
    MemoryExecutor,
    ScriptedApprover,
    ScriptedModel,
    call,
    text,
    tools,
)
from rho_domain import events as ev
from rho_domain.agent import Agent
from rho_domain.config import AgentConfig
from rho_domain.loop.session import Session
from rho_domain.messages import ToolCall, ToolResultMessage
from rho_domain.permissions import ApprovalMode, builtin_profile
from rho_domain.tools.base import DANGEROUS, ToolContext, ToolHandler, ToolOutput, ToolPolicy
from rho_domain.tools.registry import ToolRegistry


class Recorder(ToolHandler):
    """A dangerous tool that records the arguments objects its policy and handler get."""

    name = "note"
    description = "Write a note."
    parameters: Mapping[str, Any] = {
        "type": "object",
        "properties": {"count": {"type": "integer"}, "text": {"type": "string"}},
        "required": ["text"],
    }

    def __init__(self) -> None:
        self.judged: list[Mapping[str, Any]] = []
        self.handled: list[Mapping[str, Any]] = []

    def policy_for(self, arguments: Mapping[str, Any]) -> ToolPolicy:
        self.judged.append(arguments)
        return DANGEROUS

    async def handle(self, arguments: Mapping[str, Any], ctx: ToolContext) -> ToolOutput:
        self.handled.append(arguments)
        return ToolOutput(content=f"noted {arguments['count']}")


def _session(handler: Recorder, model: ScriptedModel, approver: ScriptedApprover) -> Session:
    profile = attrs.evolve(
        builtin_profile("developer"),
        approval=ApprovalMode.DANGEROUS,
        dangerous_patterns=("rm -rf",),
    )
    agent = Agent(
        config=AgentConfig(), profile=profile, registry=ToolRegistry([handler]), system_prompt=""
    )
    return Session(
        agent, model=model, executor=MemoryExecutor(), clock=FakeClock(), approver=approver
    )


async def test_the_policy_the_approver_and_the_handler_read_one_preparation() -> None:
    handler = Recorder()
    approver = ScriptedApprover(default=True)
    # "count" arrives as a string: coerced once, and the handler gets the coerced value
    model = ScriptedModel([tools(call("note", {"text": "hi", "count": "3"})), text("done")])
    session = _session(handler, model, approver)
    events: list[ev.Event] = []
    result = await session.run("note it", on_event=events.append)
    assert result.text == "done"
    assert len(handler.judged) == 1
    assert handler.handled == [{"text": "hi", "count": 3}]
    assert handler.handled[0] is handler.judged[0]  # the same validated object, not a re-parse
    (asked,) = approver.requests
    assert dict(asked.arguments) == {"text": "hi", "count": "3"}  # decoded, as the model sent
    # the trace keeps the model's raw text byte for byte
    started = next(e for e in events if isinstance(e, ev.ToolStarted))
    assert started.call.arguments == '{"text": "hi", "count": "3"}'


async def test_the_profiles_patterns_are_matched_on_the_prepared_values() -> None:
    """A JSON escape hides nothing from the pattern check: it reads the decoded value."""
    handler = Recorder()
    approver = ScriptedApprover(default=False)
    escaped = ToolCall("c1", "note", '{"text": "rm \\u002drf /", "count": 1}')
    model = ScriptedModel([tools(escaped), text("ok")])
    session = _session(handler, model, approver)
    session.state.always_allowed.add("note")  # "always" does not cover a dangerous pattern
    await session.run("go")
    assert [r.reason for r in approver.requests] == [
        "the arguments contain the dangerous pattern 'rm -rf'"
    ]
    assert handler.handled == []  # rejected: never ran


def test_prepare_says_why_a_call_cannot_run() -> None:
    registry = ToolRegistry([Recorder()])
    unknown = registry.prepare(ToolCall("1", "nope", "{}"))
    assert unknown.handler is None
    assert unknown.policy is None
    assert unknown.problem == "Unknown tool 'nope'. Available tools: note."
    broken = registry.prepare(ToolCall("2", "note", '{"text": '))
    assert broken.decoded is None
    assert broken.problem is not None
    assert broken.problem.startswith("Tool 'note': arguments are not valid JSON")
    wrong = registry.prepare(ToolCall("3", "note", '{"count": 1}'))
    assert wrong.decoded == {"count": 1}
    assert wrong.arguments is None
    assert wrong.policy is None
    assert wrong.problem is not None
    assert "text" in wrong.problem
    assert wrong.problem.endswith("Fix the arguments and call again.")
    fine = registry.prepare(ToolCall("4", "note", '{"text": "a", "count": "2"}'))
    assert (fine.problem, fine.arguments) == (None, {"text": "a", "count": 2})
    assert fine.policy is DANGEROUS


async def test_a_call_that_cannot_run_is_answered_with_the_preparations_words() -> None:
    handler = Recorder()
    model = ScriptedModel([tools(ToolCall("c1", "note", '{"count": 1}')), text("ok")])
    session = _session(handler, model, ScriptedApprover(default=True))
    await session.run("go")
    (result,) = [m for m in session.state.messages if isinstance(m, ToolResultMessage)]
    assert result.is_error
    assert result.content == registry_problem(ToolCall("c1", "note", '{"count": 1}'))
    assert handler.handled == []


def registry_problem(tool_call: ToolCall) -> str | None:
    return ToolRegistry([Recorder()]).prepare(tool_call).problem


class _Where(ToolHandler):
    """A read-only tool whose policy records the thread that judged it."""

    name = "where"
    description = "Say where."
    parameters: Mapping[str, Any] = {
        "type": "object",
        "properties": {"text": {"type": "string"}},
        "required": ["text"],
    }

    def __init__(self) -> None:
        self.threads: list[int] = []

    def policy_for(self, arguments: Mapping[str, Any]) -> ToolPolicy:
        import threading

        self.threads.append(threading.get_ident())
        return ToolPolicy(read_only=True)

    async def handle(self, arguments: Mapping[str, Any], ctx: ToolContext) -> ToolOutput:
        return ToolOutput(content="here")


async def test_a_short_batch_is_prepared_on_the_loop_and_a_long_one_in_a_thread() -> None:
    import json
    import threading

    from rho_domain.tools.registry import INLINE_ARGUMENT_CHARS

    handler = _Where()
    registry = ToolRegistry([handler])
    short = ToolCall(id="c1", name="where", arguments=json.dumps({"text": "a"}))
    long_text = "x" * INLINE_ARGUMENT_CHARS
    long = ToolCall(id="c2", name="where", arguments=json.dumps({"text": long_text}))
    (first,) = await registry.prepare_all([short])
    (second,) = await registry.prepare_all([long])
    assert first.policy is not None
    assert first.policy.read_only
    assert second.policy is not None
    assert second.policy.read_only
    loop_thread = threading.get_ident()
    # The short one was judged here, on the loop; the long one (a 40 KB SQL statement's
    # check takes a tenth of a second) in a worker thread.
    assert handler.threads[0] == loop_thread
    assert handler.threads[1] != loop_thread


async def test_arguments_two_parsers_read_apart_are_refused_before_anyone_judges_them() -> None:
    """``{"text": "ls", "text": "rm -rf /"}`` ran with its last key (Python's reading) while
    a hook, a log reader or a human shown the raw text may take the first; ``NaN`` reached the
    handler as a float no JSON writer (an MCP server's request) can send."""
    registry = ToolRegistry([Recorder()])
    twice = registry.prepare(ToolCall("1", "note", '{"text": "ls", "text": "rm -rf /"}'))
    assert (twice.decoded, twice.policy) == (None, None)
    assert twice.problem == (
        "Tool 'note': arguments are ambiguous JSON (two parsers may read them differently): "
        "the text gives the key 'text' twice: send each key once. Fix the arguments and "
        "call again."
    )
    nan = registry.prepare(ToolCall("2", "note", '{"text": "a", "count": NaN}'))
    assert nan.problem is not None
    assert "holds NaN, which is not a JSON number" in nan.problem
    # an object sent as a string is coerced by the same one reading: it stays a string
    nested = ToolRegistry([_Nested()]).prepare(
        ToolCall("3", "nested", '{"options": "{\\"mode\\": \\"a\\", \\"mode\\": \\"b\\"}"}')
    )
    assert nested.arguments is None
    assert nested.problem is not None
    assert "options must be object" in nested.problem
    handler = Recorder()
    model = ScriptedModel(
        [tools(ToolCall("c1", "note", '{"text": "a", "text": "b", "count": 1}')), text("ok")]
    )
    approver = ScriptedApprover(default=True)
    await _session(handler, model, approver).run("go")
    assert (handler.handled, approver.requests) == ([], [])


class _Nested(ToolHandler):
    name = "nested"
    description = "Take options."
    parameters: Mapping[str, Any] = {
        "type": "object",
        "properties": {"options": {"type": "object"}},
    }

    def policy_for(self, arguments: Mapping[str, Any]) -> ToolPolicy:
        return ToolPolicy(read_only=True)

    async def handle(self, arguments: Mapping[str, Any], ctx: ToolContext) -> ToolOutput:
        return ToolOutput(content="ok")
