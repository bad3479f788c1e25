"""Behaviour steps of a session, and the first step where two sessions differ.

A session's behaviour, as far as the harness decides it, is the sequence of: the tool calls
the model made (name and arguments), the policy decision on each (run, approval required,
blocked by the policy or by the user), each tool's result, and each final answer. ``steps``
reads that sequence from persisted events; ``first_divergence`` compares two of them. Used by
``rho_entry.replay`` to turn a recorded trace into a regression test.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Literal

import attrs

from rho_domain import events as ev
from rho_domain.messages import AssistantMessage
from rho_domain.value_methods import value_eq, value_hash, value_repr

StepKind = Literal["tool_call", "decision", "result", "answer"]


@attrs.frozen(kw_only=True)
class Step:
    """One observable decision.

    Attributes:
        index: 1 for the session's first step, then 2, 3, ...
        turn: Which model response (1 = the first of the session) the step belongs to.
        kind: ``tool_call`` (tool = name, detail = arguments), ``decision`` (``run``,
            ``approval required: ...``, ``blocked by policy: ...``, ``blocked by user: ...``),
            ``result`` (detail = the content the model reads, ``error: `` first for an error)
            or ``answer`` (detail = the final text of a turn without tool calls).
        tool: The tool's name (empty for an answer).
        call_id: The tool call's id (empty for an answer).
        detail: What was decided, as text.
    """

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    index: int
    turn: int
    kind: StepKind
    tool: str
    call_id: str
    detail: str

    def same_as(self, other: Step) -> bool:
        """True when both steps decide the same thing (index and turn aside)."""
        return (self.kind, self.tool, self.call_id, self.detail) == (
            other.kind,
            other.tool,
            other.call_id,
            other.detail,
        )

    def describe(self) -> str:
        """One line for a report."""
        where = f"step {self.index} (model turn {self.turn})"
        detail = self.detail if len(self.detail) <= 200 else self.detail[:197] + "..."
        return f"{where}: {self.kind} {self.tool} {detail}".replace("  ", " ")


@attrs.frozen(kw_only=True)
class Divergence:
    """The first step where a replay differs from its recording.

    ``what`` is one of: different tool call, different arguments, different policy decision,
    different tool result, different answer, the replay stopped early, the replay went further.
    ``expected`` (recorded) or ``actual`` (replayed) is None when one side has no such step.
    """

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    index: int
    what: str
    expected: Step | None
    actual: Step | None

    def describe(self) -> str:
        """A few lines saying where and how the replay diverged."""
        expected = self.expected.describe() if self.expected else "(nothing)"
        actual = self.actual.describe() if self.actual else "(nothing)"
        return f"{self.what} at step {self.index}\n  recorded: {expected}\n  replayed: {actual}"


def steps(events: Iterable[ev.Event]) -> tuple[Step, ...]:
    """The behaviour steps of ``events`` (persisted events in trace order)."""
    out: list[Step] = []
    turn = 0

    def add(kind: StepKind, tool: str, call_id: str, detail: str) -> None:
        out.append(
            Step(
                index=len(out) + 1, turn=turn, kind=kind, tool=tool, call_id=call_id, detail=detail
            )
        )

    for event in events:
        match event:
            case ev.MessageAdded(message=AssistantMessage() as message):
                turn += 1
                for call in message.tool_calls:
                    add("tool_call", call.name, call.id, call.arguments)
                if not message.tool_calls:
                    add("answer", "", "", message.text or message.refusal)
            case ev.ToolStarted(call=call):
                add("decision", call.name, call.id, "run")
            case ev.ApprovalRequested(call=call, reason=reason):
                add("decision", call.name, call.id, f"approval required: {reason}")
            case ev.ToolBlocked(call=call, by=by, reason=reason):
                add("decision", call.name, call.id, f"blocked by {by}: {reason}")
            case ev.ToolEnded(call_id=call_id, tool_name=name, content=content, is_error=err):
                add("result", name, call_id, ("error: " if err else "") + content)
    return tuple(out)


def first_divergence(recorded: Sequence[Step], replayed: Sequence[Step]) -> Divergence | None:
    """The first step where ``replayed`` differs from ``recorded``, or None."""
    for index in range(max(len(recorded), len(replayed))):
        expected = recorded[index] if index < len(recorded) else None
        actual = replayed[index] if index < len(replayed) else None
        if expected is not None and actual is not None and expected.same_as(actual):
            continue
        return Divergence(
            index=index + 1, what=_what(expected, actual), expected=expected, actual=actual
        )
    return None


def _what(expected: Step | None, actual: Step | None) -> str:
    if actual is None:
        return "the replay stopped early"
    if expected is None:
        return "the replay went further"
    if expected.kind == "tool_call" and actual.kind == "tool_call":
        same_call = (expected.tool, expected.call_id) == (actual.tool, actual.call_id)
        return "different arguments" if same_call else "different tool call"
    if "decision" in (expected.kind, actual.kind):
        return "different policy decision"
    if expected.kind == actual.kind == "result":
        return "different tool result"
    if expected.kind == actual.kind == "answer":
        return "different answer"
    return "different tool call"
