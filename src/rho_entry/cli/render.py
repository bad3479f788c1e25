"""Showing session events in a terminal (JSON lines for scripts: ``cli/json_render.py``).

TerminalRenderer: assistant text streams to stdout as it arrives; everything else (tool
signatures and result previews, notices, the usage line, the spinner) goes to stderr, so
``rho-agent "task" > answer.md`` captures just the answer. Colour only when stderr is a
terminal and NO_COLOR is unset. JsonRenderer: one JSON object per event on stdout.

What the model wrote never drives the terminal: notices (tool signatures, result previews,
errors, reasoning) show control and invisible characters as escapes
(``terminal_text.visible``), and so does the answer when stdout is a terminal; an answer
redirected to a file or a pipe, ``--output FILE`` and ``--json`` keep the exact text.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from typing import Any, TextIO

from rho_domain import events as ev
from rho_domain.messages import AssistantMessage, ToolCall, Usage
from rho_domain.run import RunResult
from rho_domain.run_status import RunStatus
from rho_entry.cli.answer_endings import (
    after_rejection,
    empty_answer_warning,
    ending_warning,
    told_the_model,
)
from rho_entry.cli.spinner import Spinner
from rho_entry.cli.terminal_text import visible

_CODES = {"dim": "2", "bold": "1", "red": "31", "green": "32", "yellow": "33", "cyan": "36"}


class Style:
    """ANSI styling that turns itself off (NO_COLOR, not a terminal)."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled

    def __call__(self, text: str, *styles: str) -> str:
        """``text`` wrapped in the ANSI codes of ``styles`` (unchanged when colour is off)."""
        if not self.enabled or not styles:
            return text
        codes = ";".join(_CODES[s] for s in styles)
        return f"\x1b[{codes}m{text}\x1b[0m"


def signature(call: ToolCall, *, limit: int | None = 120) -> str:
    """``bash(ls -la)`` or ``read(path='a.py', offset=10)``; cut to ``limit`` characters."""
    try:
        arguments: Any = json.loads(call.arguments or "{}")
    except json.JSONDecodeError:
        arguments = call.arguments
    if isinstance(arguments, Mapping):
        if (
            call.name == "bash"
            and isinstance(arguments.get("command"), str)
            and len(arguments) == 1
        ):
            inner = arguments["command"]
        else:
            inner = ", ".join(f"{k}={_value(v)}" for k, v in arguments.items())
    else:
        inner = str(arguments)
    text = f"{call.name}({inner})"
    if limit is not None and len(text) > limit:
        return text[: limit - 1] + "…"
    return text


def _is_terminal(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # a closed or unusual stream: not a terminal
        return False


def _value(value: Any) -> str:
    return repr(value) if isinstance(value, str) else json.dumps(value)


def usage_line(result: RunResult, context_tokens: int | None) -> str:
    """``context 1,234 · in 2,345 · out 67 · $0.0012`` (this run; session totals after)."""
    parts = []
    if context_tokens:
        parts.append(f"context {context_tokens:,}")
    parts.append(_tokens(result.usage))
    if result.session_usage != result.usage:
        parts.append(f"session {_tokens(result.session_usage)}")
    cost = result.session_usage.cost_usd
    if cost:
        parts.append(f"${cost:.4f}")
    estimated = " (estimated)" if result.usage.estimated else ""
    return " · ".join(parts) + estimated


def _tokens(usage: Usage) -> str:
    return f"in {usage.input_tokens:,} / out {usage.output_tokens:,}"


class TerminalRenderer:
    """Listener for ``Session(on_event=...)`` that draws the session on a terminal."""

    def __init__(
        self,
        *,
        out: TextIO | None = None,
        err: TextIO | None = None,
        color: bool = False,
        spinner: bool = False,
        quiet: bool = False,
        verbose: bool = False,
        preview_lines: int = 6,
    ) -> None:
        self.out, self.err = out or sys.stdout, err or sys.stderr
        self.style = Style(color)
        self.answer_on_terminal = _is_terminal(self.out)  # escaped there, exact elsewhere
        self.quiet, self.verbose, self.preview_lines = quiet, verbose, preview_lines
        self.spinner = Spinner(self.err, enabled=spinner and not quiet)
        self.context_tokens: int | None = None
        self._mid_line = False  # the last text written to stdout did not end a line
        self.errors_shown: list[str] = []  # "Type: message" of error events shown (no repeats)
        self._running: dict[str, str] = {}  # call id -> signature, of tools started, not ended
        self._parallel: set[str] = set()  # calls that ran beside another (their results follow)
        self._streamed = 0  # characters of answer text shown by the model call in progress
        self._reasoning = ""  # the last answer's reasoning
        self._rejected = False  # a call was rejected since the last model call

    def __call__(self, event: ev.Event) -> None:
        """Render one event (a session listener)."""
        if not isinstance(event, ev.LLMStarted | ev.UsageRecorded | ev.ToolCallDelta):
            self.spinner.stop()
        if isinstance(event, ev.UsageRecorded):
            self.context_tokens = event.prompt_tokens or self.context_tokens
        if event.kind in ("llm_start", "message"):
            self._rejected = after_rejection(self._rejected, event)
        # by its kind first: a run without errors never builds the error event's class
        error = event if event.kind == "error" and isinstance(event, ev.ErrorOccurred) else None
        if error is not None:
            self.errors_shown.append(f"{error.error_type}: {error.message}")
        if self.quiet:
            if error is not None:
                self.notice(f"error: {error.message}", "red")
            return
        handler = getattr(self, f"_on_{event.kind}", None)
        if handler is not None:
            handler(event)

    def notice(self, text: str, *styles: str) -> None:
        """A line on stderr (after ending any streamed text line)."""
        self.spinner.stop()
        self._end_line()
        self.err.write(self.style(visible(text), *styles) + "\n")
        self.err.flush()

    def finish(self, result: RunResult) -> None:
        """After a run: the final answer (quiet mode) and the usage line (when the run used
        tokens)."""
        self.spinner.stop()
        said = empty_answer_warning(result.text, 0, self._reasoning)
        if result.status is RunStatus.COMPLETED and not self._rejected and said is not None:
            self.notice(said, "yellow")  # not after a rejection: no answer to miss
        if self.quiet:
            if result.text:
                self.out.write(self._answer(result.text.rstrip("\n")) + "\n")
                self.out.flush()
            return
        self._end_line()
        if result.usage.total_tokens or result.usage.cost_usd:
            # A run that used nothing (its first call failed, or no model was called) gets
            # no "in 0 / out 0" line: after an error it read like a result.
            self.notice(usage_line(result, self.context_tokens), "dim")

    def _end_line(self) -> None:
        if self._mid_line:
            self.out.write("\n")
            self.out.flush()
            self._mid_line = False

    def _on_llm_start(self, event: ev.LLMStarted) -> None:
        self._streamed = 0
        self._reasoning = ""  # an answer recorded as nothing keeps none of the last one's
        self.spinner.start("thinking")
        if self.verbose:
            self.notice(f"· model call {event.call_index} ({event.context_tokens:,} tokens)", "dim")

    def _answer(self, text: str) -> str:
        return visible(text) if self.answer_on_terminal else text

    def _on_text_delta(self, event: ev.TextDelta) -> None:
        self._show_answer(event.text)

    def _show_answer(self, text: str) -> None:
        self.out.write(self._answer(text))
        self.out.flush()
        self._mid_line = not text.endswith("\n")
        self._streamed += len(text)

    def _on_reasoning_delta(self, event: ev.ReasoningDelta) -> None:
        if self.verbose:
            self.err.write(self.style(visible(event.text), "dim"))
            self.err.flush()

    def _on_tool_start(self, event: ev.ToolStarted) -> None:
        self.notice(f"● {signature(event.call)}", "cyan")
        self.spinner.start(visible(event.call.name, newlines=False))  # a name the model chose
        if self._running:
            self._parallel.update(self._running, {event.call.id})
        self._running[event.call.id] = signature(event.call)

    def _on_tool_end(self, event: ev.ToolEnded) -> None:
        started = self._running.pop(event.call_id, "")
        if event.call_id in self._parallel:
            # a parallel batch's results come after all its starts: say whose this is
            self._parallel.discard(event.call_id)
            self.notice(f"  {started}", "cyan")
        lines = event.content.rstrip("\n").splitlines() or ["(no output)"]
        shown = lines if self.verbose or self.preview_lines < 0 else lines[: self.preview_lines]
        style = ("red",) if event.is_error else ("dim",)
        for index, line in enumerate(shown):
            prefix = "  ⎿ " if index == 0 else "    "
            self.notice(prefix + line[:200], *style)
        hidden = len(lines) - len(shown)
        tail = f"… {hidden} more line{'s' if hidden != 1 else ''}, " if hidden > 0 else ""
        self.notice(f"    ({tail}{event.duration:.1f}s)", "dim")

    def _on_tool_blocked(self, event: ev.ToolBlocked) -> None:
        who = "rejected by you" if event.by == "user" else f"denied: {event.reason}"
        self.notice(f"✗ {signature(event.call)}: {who}", "yellow")

    def _on_approval_requested(self, event: ev.ApprovalRequested) -> None:
        if self.verbose:
            self.notice(f"? {signature(event.call)} needs approval: {event.reason}", "yellow")

    def _on_compact_start(self, event: ev.CompactStarted) -> None:
        self.notice(
            f"compacting the history ({event.trigger}, ~{event.tokens_before} tokens)", "dim"
        )

    def _on_compact(self, event: ev.Compacted) -> None:
        self.notice(
            f"compacted ({event.trigger}): {event.tokens_before:,} → {event.tokens_after:,} "
            f"tokens; {event.replaced_count} messages summarised",
            "dim",
        )

    def _on_interruption(self, event: ev.Interrupted) -> None:
        detail = f" ({event.detail})" if event.detail else ""
        if event.reason == "paused":
            detail += (
                ": waiting until `rho-agent monitor resume SESSION` lifts the pause "
                "(SESSION is the id in the header; Ctrl+C cancels)"
            )
        self.notice(f"{event.reason}{detail}", "yellow")

    def _on_message(self, event: ev.MessageAdded) -> None:
        message = event.message
        if isinstance(message, AssistantMessage) and len(message.text) > self._streamed:
            # A reader that fell behind the run (a remote client: the server drops a finished
            # call's deltas) gets the answer's message without the deltas it missed: show the
            # rest of the text from the message.
            self._show_answer(message.text[self._streamed :])
        if isinstance(message, AssistantMessage):
            self._streamed = 0
            self._reasoning = message.reasoning  # an answer's, said when it has no text
        if (said := told_the_model(message)) is not None:  # a nudge, a call cut at the limit
            self.notice(f"told the model: {said}", "yellow")

    def _on_directive(self, event: ev.DirectiveApplied) -> None:
        self.notice(f"directive from the operator: {event.text}", "yellow")

    def _on_error(self, event: ev.ErrorOccurred) -> None:
        self.notice(f"error: {event.error_type}: {event.message}", "red")

    def _on_trace(self, event: ev.TraceNoted) -> None:  # skipped, the run goes on
        self.notice(f"warning ({event.name}): {event.message}", "yellow")

    def _on_listener_error(self, event: ev.ListenerFailed) -> None:  # the run goes on
        self.notice(
            f"warning: event listener {event.listener} failed ({event.error_type}: "
            f"{event.message}); the run goes on",
            "yellow",
        )

    def _on_hook(self, event: ev.HookActed) -> None:
        what = event.outcome.replace("_", " ")
        why = f": {event.reason}" if event.reason else ""
        self.notice(f"hook {event.hook} ({event.point}) {what}{why}", "yellow")

    def _on_retry(self, event: ev.ModelRetrying) -> None:
        self.notice(event.message, "yellow")

    def _on_llm_end(self, event: ev.LLMEnded) -> None:
        if self.verbose:
            self.notice(f"· {event.duration:.1f}s, finish {event.finish_reason}", "dim")
        if (warning := ending_warning(event.finish_reason)) is not None:
            self.notice(warning, "yellow")
