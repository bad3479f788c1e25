"""Text tables of telemetry for ``rho-agent stats`` (no I/O: lines in, lines out)."""

from __future__ import annotations

from collections.abc import Sequence

from rho_domain.messages import Usage
from rho_domain.telemetry import RunStats, SessionStats

SESSIONS_HEADER = (
    f"{'ID':<14} {'RUNS':>4} {'TURNS':>5} {'TOOLS':>5} {'IN':>8} {'OUT':>8} {'CACHED':>8} "
    f"{'COST':>10} {'MODEL s':>8} {'TOOL s':>8}  MODEL"
)
TURNS_HEADER = (
    f"  {'#':>3} {'MODEL':<20} {'FIRST s':>8} {'TOTAL s':>8} {'IN':>8} {'OUT':>7} {'CACHED':>7} "
    f"{'REASON':>7} {'COST':>10} {'RETRY':>5} {'QUEUED s':>8} FINISH"
)
TOOLS_HEADER = f"  {'TOOL':<16} {'CALL':<14} {'OUTCOME':<10} {'SECONDS':>8} {'BYTES':>9} APPROVAL"


def cost_text(usage: Usage) -> str:
    """``$0.001234``, ``-`` when no price is known; ``~`` marks estimated tokens."""
    if usage.cost_usd is None:
        return "-"
    return f"{'~' if usage.estimated else ''}${usage.cost_usd:.6f}"


def _seconds(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def format_sessions(stats: Sequence[SessionStats]) -> list[str]:
    """One line per session (``--all``), then a total line; no sessions: no lines."""
    if not stats:
        return []
    lines = [SESSIONS_HEADER]
    total = Usage()
    for one in stats:
        total = total + one.usage
        models = sorted({t.model for t in one.turns if t.model})
        lines.append(
            f"{one.session_id[:14]:<14} {len(one.runs):>4} {len(one.turns):>5} "
            f"{len(one.tools):>5} {one.usage.input_tokens:>8} {one.usage.output_tokens:>8} "
            f"{one.usage.cached_tokens:>8} {cost_text(one.usage):>10} "
            f"{one.model_time:>8.2f} {one.tool_time:>8.2f}  {','.join(models)}"
        )
    lines.append(
        f"{'total':<14} {'':>4} {'':>5} {'':>5} {total.input_tokens:>8} "
        f"{total.output_tokens:>8} {total.cached_tokens:>8} {cost_text(total):>10}"
    )
    return lines


def format_session(stats: SessionStats) -> list[str]:
    """The session's totals, then each run with its model calls and tool calls."""
    usage = stats.usage
    lines = [
        f"session {stats.session_id}: {len(stats.runs)} run(s), {len(stats.turns)} model "
        f"call(s), {len(stats.tools)} tool call(s), {stats.errors} error event(s)",
        f"tokens: {usage.input_tokens} in ({usage.cached_tokens} cached), "
        f"{usage.output_tokens} out ({usage.reasoning_tokens} reasoning); cost "
        f"{cost_text(usage)}; model time {stats.model_time:.3f} s, tool time "
        f"{stats.tool_time:.3f} s",
    ]
    for run in stats.runs:
        lines.extend(_run_lines(run))
    return lines


def _run_lines(run: RunStats) -> list[str]:
    lines = [
        "",
        f"run {run.run_id or '(before any run)'}: {run.status or 'not ended'}, "
        f"{_seconds(run.duration)} s, {run.usage.total_tokens} tokens, cost {cost_text(run.usage)}",
    ]
    if run.turns:
        lines.append(TURNS_HEADER)
    for turn in run.turns:
        u = turn.usage
        lines.append(
            f"  {turn.call_index:>3} {turn.model[:20]:<20} {_seconds(turn.first_output_after):>8} "
            f"{_seconds(turn.duration):>8} {u.input_tokens:>8} {u.output_tokens:>7} "
            f"{u.cached_tokens:>7} {u.reasoning_tokens:>7} {cost_text(u):>10} "
            f"{turn.retries:>5} {_seconds(turn.queue_wait):>8} {turn.finish_reason or '-'}"
        )
    if run.tools:
        lines.append(TOOLS_HEADER)
    for tool in run.tools:
        lines.append(
            f"  {tool.name[:16]:<16} {tool.call_id[:14]:<14} {tool.outcome:<10} "
            f"{_seconds(tool.duration):>8} {tool.output_bytes:>9} {tool.approval or '-'}"
            + (f"  MCP server {tool.server}" if tool.server else "")
        )
    return lines
