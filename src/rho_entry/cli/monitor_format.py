"""One readable line per trace event, for ``rho-agent monitor watch``.

Works on the raw JSON of a trace line (no decoding into domain types), so it shows lines of any
format version and never fails: an unreadable line is shown as such. The line shows control and
invisible characters the model wrote as escapes (``terminal_text.visible``): the terminal never
obeys them (``--json`` prints the trace lines exactly).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping
from typing import Any

from rho_entry.cli.terminal_text import visible

PREVIEW = 200


def _cut(text: Any, limit: int = PREVIEW) -> str:
    flat = " ".join(str(text or "").split())
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."


def _get(d: Mapping[str, Any], key: str) -> Any:
    """A field to show: ``?`` when the line lacks it or holds null, never Python's ``None``."""
    value = d.get(key)
    return "?" if value is None else value


def _also(*parts: Any) -> str:
    """`` (a, b)`` of the parts that are there; nothing when none is."""
    shown = [str(p) for p in parts if p not in (None, "")]
    return f" ({', '.join(shown)})" if shown else ""


def _tokens(usage: Any) -> str:
    if not isinstance(usage, Mapping):
        return ""
    cost = usage.get("cost_usd")
    text = f"in {usage.get('input_tokens') or 0} out {usage.get('output_tokens') or 0}"
    return text + (f" ${cost:.4f}" if isinstance(cost, int | float) else "")


def _message(d: Mapping[str, Any]) -> str:
    m = d.get("message") or {}
    role = _get(m, "role")
    if role == "assistant":
        calls = ", ".join(str(_get(c, "name")) for c in m.get("tool_calls") or [])
        return f"assistant: {_cut(m.get('text'))}" + (f" [calls: {calls}]" if calls else "")
    if role == "tool":
        mark = "error" if m.get("is_error") else "ok"
        return f"result {_get(m, 'tool_name')} ({mark}): {_cut(m.get('content'))}"
    origin = m.get("origin") or "user"
    return (
        f"{role} ({origin}): {_cut(m.get('content'))}"
        if origin != "user"
        else f"user: {_cut(m.get('content'))}"
    )


def _call(d: Mapping[str, Any]) -> str:
    c = d.get("call") or {}
    return f"{_get(c, 'name')} {_cut(c.get('arguments'))}"


_FORMATS: dict[str, Callable[[Mapping[str, Any]], str]] = {
    "run_start": lambda d: f"run started: {_cut(d.get('prompt'), 120)}",
    "run_end": lambda d: (
        f"run ended: {_get(d, 'status')}{_also(_tokens(d.get('usage')))}"
        + (f" error: {_cut(d.get('error'))}" if d.get("error") else "")
    ),
    "message": _message,
    "llm_start": lambda d: (
        f"model call #{_get(d, 'call_index')} to {_get(d, 'model')} "
        f"(~{_get(d, 'context_tokens')} tokens)"
    ),
    "llm_end": lambda d: (
        f"model answered in {d.get('duration') or 0:.2f}s"
        f"{_also(_tokens(d.get('usage')), d.get('finish_reason'))}"
    ),
    "tool_start": lambda d: f"tool {_call(d)}",
    "tool_end": lambda d: (
        f"tool {_get(d, 'tool_name')} {'failed' if d.get('is_error') else 'ok'}"
        f" in {d.get('duration') or 0:.2f}s"
    ),
    "tool_blocked": lambda d: f"blocked ({_get(d, 'by')}): {_call(d)}: {_cut(d.get('reason'))}",
    "approval_requested": lambda d: f"waiting for approval: {_call(d)}",
    "approval_resolved": lambda d: (
        f"approval {'granted' if d.get('approved') else 'refused'} for {_get(d, 'tool_name')}"
    ),
    "compact_start": lambda d: (
        f"compacting ({_get(d, 'trigger')}): {_get(d, 'tokens_before')} tokens"
    ),
    "compact": lambda d: (
        f"compacted ({_get(d, 'trigger')}): {_get(d, 'tokens_before')} -> "
        f"{_get(d, 'tokens_after')} tokens"
    ),
    "usage": lambda d: f"usage: {_tokens(d.get('usage'))}",
    "interruption": lambda d: f"{_get(d, 'reason')} {d.get('detail') or ''}".rstrip(),
    "directive": lambda d: f"directive #{_get(d, 'offset')}: {_cut(d.get('text'))}",
    "error": lambda d: f"error {_get(d, 'error_type')}: {_cut(d.get('message'))}",
    "trace": lambda d: f"trace {_get(d, 'name')}: {_cut(d.get('message'))}",
    "listener_error": lambda d: (
        f"listener {_get(d, 'listener')} failed on {_get(d, 'event_kind')}: "
        f"{_get(d, 'error_type')}: {_cut(d.get('message'))}"
    ),
    "hook": lambda d: (
        f"hook {_get(d, 'hook')} ({_get(d, 'point')}) {_get(d, 'outcome')}"
        f"{': ' + _cut(d.get('reason')) if d.get('reason') else ''}"
    ),
}


def format_event(line: bytes) -> str:
    """``HH:MM:SS  text`` for one trace line."""
    try:
        data = json.loads(line)
    except (ValueError, RecursionError):
        return f"??:??:??  (unreadable line, {len(line)} bytes)"
    if not isinstance(data, dict):
        return f"??:??:??  {_cut(data)}"
    stamp = _stamp(data.get("at"))
    kind = str(data.get("kind"))
    render = _FORMATS.get(kind)
    try:
        return visible(f"{stamp}  {render(data) if render else kind}", newlines=False)
    except (AttributeError, TypeError, ValueError):
        return visible(f"{stamp}  {kind}", newlines=False)


def _stamp(at: object) -> str:
    """``HH:MM:SS`` of a line's time, or ``?`` when it holds none a clock can show (a string,
    NaN, an infinity, a year past 9999: another writer's line, which raised out of watch)."""
    if not isinstance(at, int | float):
        return "?"
    try:
        return time.strftime("%H:%M:%S", time.localtime(at))
    except (ValueError, OverflowError, OSError):
        return "?"
