"""Stuck loops: a model repeating a tool call that has nothing new to tell it.

A run is repeating when its last tool calls (counted across batches, since the user or an
operator last spoke) are, ``limit`` times in a row (``AgentConfig.repeat_limit``, default 3),
the same call or the same cycle of up to ``LONGEST_CYCLE`` calls (A, B, A, B...), each:

- the same call: the same tool with equal arguments (compared as parsed JSON, so key order and
  spacing do not matter) that got the same result (a command's run time aside:
  ``run_footer.without_run_time``); or
- the same failing call: the same tool failing with the same error, whatever its arguments
  (the error is compared without the argument values it quotes).

A call whose result changes (polling a build, waiting for a file) is not repeating: it is
learning something. The first time a streak reaches the limit, the model is told once, by a
user message of origin ``nudge`` (``note``): a user message, not a line added to the tool's
result, because models are trained to read tool output as data that may not give them orders,
and because the tool's result stays what the tool returned (the trace, replays and telemetry
compare results). If the streak goes on after the note, the run ends with status ``stuck``
and a message naming what repeated (``Repetition.describe``); a repeat of the same arguments
is refused before it runs.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

import attrs

from rho_domain.loop.journal import Journal
from rho_domain.loop.tally import RunTally
from rho_domain.messages import Message, ToolCall, ToolResultMessage, UserMessage
from rho_domain.tools.run_footer import without_run_time
from rho_domain.value_methods import value_eq, value_hash, value_repr

_SHOWN = 200  # characters of arguments or error quoted in a message
LONGEST_CYCLE = 3  # A, B, A, B... and A, B, C, A, B, C... repeat as surely as A, A, A


@attrs.frozen(kw_only=True)
class Repetition:
    """The streak of repeated calls that ends the history.

    ``cycle`` is what repeats, in order (one call, or a cycle of up to ``LONGEST_CYCLE``);
    ``call`` its last call; ``times`` how many times in a row; ``failing`` True when one call
    failed the same way each time (``error`` its text); ``noted`` True when the model was
    already told during this streak."""

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    call: ToolCall
    times: int
    failing: bool
    error: str = ""
    noted: bool = False
    cycle: tuple[ToolCall, ...] = ()

    def describe(self) -> str:
        """What repeated, for the user and the model."""
        if len(self.cycle) > 1:
            calls = ", then ".join(f"{c.name} {_cut(c.arguments)}" for c in self.cycle)
            return (
                f"the calls {calls} were repeated {self.times} times in a row with the same results"
            )
        if self.failing:
            return (
                f"the tool {self.call.name} failed {self.times} times in a row with the same "
                f"error: {_cut(self.error)}"
            )
        return (
            f"the tool {self.call.name} was called {self.times} times in a row with the same "
            f"arguments {_cut(self.call.arguments)} and got the same result"
        )

    def again(self, call: ToolCall) -> bool:
        """True when ``call`` is the streak's next call once more (same tool, equal
        arguments): its call, or the first of its cycle."""
        expected = self.cycle[0] if self.cycle else self.call
        return call.name == expected.name and _canonical(call) == _canonical(expected)


def note(repetition: Repetition) -> UserMessage:
    """The one message that tells the model it is repeating itself."""
    return UserMessage(
        f"[rho-agent] You are repeating yourself: {repetition.describe()}. Repeating it will "
        "not give a different answer. Use what you have learnt, try another approach, or give "
        "your final answer now. If the same call comes again, the run ends as stuck.",
        origin="nudge",
    )


def repetition(messages: Sequence[Message]) -> Repetition | None:
    """The streak of repeated calls at the end of ``messages``, or None when the last call
    repeats nothing (or has no result yet)."""
    entries: list[tuple[ToolCall, ToolResultMessage]] = []
    calls: dict[str, ToolCall] = {}
    noted_at = -1
    for message in messages:
        if isinstance(message, UserMessage):
            if message.origin == "nudge":
                noted_at = len(entries)
            else:  # the user, an operator or an output check spoke: a new start
                entries, noted_at = [], -1
        elif isinstance(message, ToolResultMessage):
            if (call := calls.pop(message.call_id, None)) is not None:
                entries.append((call, message))
        elif message.role == "assistant":
            calls.update((c.id, c) for c in message.tool_calls)
    if not entries:
        return None
    # The period that repeats most (the shortest on a tie): A, A, A is one call three times,
    # A, B, A, B, A, B a cycle of two, three times.
    times, period = max(
        (_span(entries, p) // p, -p) for p in range(1, min(LONGEST_CYCLE, len(entries)) + 1)
    )
    period = -period
    if times < 2:
        return None
    start = len(entries) - _span(entries, period)
    last_call, last_result = entries[-1]
    failing = (
        period == 1
        and last_result.is_error
        and any(_canonical(c) != _canonical(last_call) for c, _ in entries[start:])
    )
    return Repetition(
        call=last_call,
        times=times,
        failing=failing,
        error=last_result.content if failing else "",
        noted=noted_at > start,
        cycle=tuple(c for c, _ in entries[-period:]),
    )


def _span(entries: Sequence[tuple[ToolCall, ToolResultMessage]], period: int) -> int:
    """How many entries at the end repeat, each one like the one ``period`` after it."""
    span = period
    while span < len(entries) and _repeats(entries[-span - 1], entries[-span - 1 + period]):
        span += 1
    return span


def _repeats(
    earlier: tuple[ToolCall, ToolResultMessage], last: tuple[ToolCall, ToolResultMessage]
) -> bool:
    (call, result), (last_call, last_result) = earlier, last
    if call.name != last_call.name or result.is_error != last_result.is_error:
        return False
    if result.is_error:  # the same failure, whatever arguments its message quotes
        return _error_shape(call, result.content) == _error_shape(last_call, last_result.content)
    # a command's run time changes when nothing else did (a loaded machine): not news
    same = without_run_time(result.content) == without_run_time(last_result.content)
    return same and _canonical(call) == _canonical(last_call)


def _error_shape(call: ToolCall, error: str) -> str:
    """The error without the call's own arguments in it (errors quote what they were given:
    "no such file: a.txt", "Arguments were: {...}"), so that the same failure with other
    arguments compares equal."""
    try:
        parsed = json.loads(call.arguments or "{}")
    except (ValueError, RecursionError):
        parsed = None
    quoted = [call.arguments]
    if isinstance(parsed, dict):
        quoted += [v if isinstance(v, str) else json.dumps(v) for v in parsed.values()]
    # Short values ("0", "a") would also erase unrelated characters of the message.
    for value in sorted((q for q in quoted if len(q) >= 3), key=len, reverse=True):
        error = error.replace(value, "\u2026")
    return error


def _canonical(call: ToolCall) -> str:
    try:
        return json.dumps(json.loads(call.arguments or "{}"), sort_keys=True)
    except (ValueError, RecursionError):  # not JSON, or nested past the parser: as given
        return call.arguments


def _cut(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= _SHOWN else text[:_SHOWN] + "..."


async def before_batch(
    journal: Journal, tally: RunTally, calls: Sequence[ToolCall], limit: int | None
) -> bool:
    """True when the run must end ``stuck`` before ``calls`` run: the model was told it
    repeats a call and asks for the same call again. The calls are then answered "not run"."""
    if not limit:
        return False
    found = repetition(journal.state.messages)
    if found is None or not found.noted or found.failing or not found.again(calls[0]):
        return False
    # one call asked once more is one more time; a cycle has only begun its next round
    more = 1 if len(found.cycle) == 1 else 0
    repeated = attrs.evolve(found, call=calls[0], times=found.times + more)
    _stop(tally, repeated)
    await journal.answer_all(calls, f"[not run: the run ended as stuck: {repeated.describe()}.]")
    return True


async def after_batch(journal: Journal, tally: RunTally, limit: int | None) -> bool:
    """After a batch: tell the model once when its calls repeat ``limit`` times in a row;
    True (end the run ``stuck``) when the streak goes on after it was told."""
    if not limit:
        return False
    found = repetition(journal.state.messages)
    if found is None or found.times < limit:
        return False
    if found.noted:
        _stop(tally, found)
        return True
    await journal.message(note(found))
    return False


def _stop(tally: RunTally, found: Repetition) -> None:
    # Not an error event: nothing failed; run_end carries the status and this message.
    tally.reason = f"stuck: {found.describe()}"
