"""``rho-agent stats [ID|--all] [--json]``: telemetry of stored sessions, read from their traces.

``session_stats(ref)`` is the library function (the same numbers as the command); the numbers
come from ``rho_domain.telemetry.session_telemetry`` over the session's trace.jsonl only.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rho_domain.errors import RhoError
from rho_domain.messages import Usage
from rho_domain.telemetry import SessionStats, session_telemetry
from rho_entry.terminal_text import visible
from rho_entry.usage import UsageParser


def session_stats(ref: str = "latest", directory: str | Path | None = None) -> SessionStats:
    """The telemetry of one stored session (id, unique prefix, ``latest`` or a directory).

    ``directory`` is a rho-agent home or sessions directory (default: the environment's).
    Raises ``SessionNotFound`` (a ``StoreError``) for an unknown id.
    """
    from rho_adapters.store.layout import resolve

    paths = resolve(_root(directory), ref)
    return _stats_of(paths.dir)


def all_session_stats(directory: str | Path | None = None) -> tuple[SessionStats, ...]:
    """The telemetry of every stored session, newest first."""
    from rho_adapters.store.layout import created_at, session_dirs

    dirs = sorted(session_dirs(_root(directory)), key=created_at, reverse=True)
    return tuple(_stats_of(paths.dir) for paths in dirs)


def stats_to_dict(stats: SessionStats) -> dict[str, Any]:
    """A JSON-ready dict of ``stats`` (the ``--json`` output), with derived totals."""
    import cattrs

    data: dict[str, Any] = cattrs.Converter().unstructure(stats)
    data["turn_count"] = len(stats.turns)
    data["tool_count"] = len(stats.tools)
    return data


def main(argv: Sequence[str]) -> int:
    """``rho-agent stats``: print telemetry; returns the exit code."""
    parser = UsageParser(
        prog="rho-agent stats",
        description="Telemetry of stored sessions: runs, model calls (latency, tokens, cost) "
        "and tool calls, computed from each session's trace.",
    )
    parser.add_argument("id", nargs="?", default="latest", help="session id, prefix or 'latest'")
    parser.add_argument("--all", action="store_true", help="every stored session, one line each")
    parser.add_argument("--json", action="store_true", help="JSON instead of a table")
    parser.add_argument("--dir", help="rho-agent home or sessions directory")
    try:
        ns = parser.parse_args(list(argv))
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else 1
    from rho_entry.cli.stats_format import format_session, format_sessions

    try:
        if ns.all:
            many = all_session_stats(ns.dir)
            out = (
                json.dumps([stats_to_dict(s) for s in many])
                if ns.json
                else "\n".join(format_sessions(many))
            )
        else:
            one = session_stats(ns.id, ns.dir)
            out = json.dumps(stats_to_dict(one)) if ns.json else "\n".join(format_session(one))
    except RhoError as exc:
        print(visible(f"rho-agent stats: {exc}"), file=sys.stderr)
        return 1
    if out:
        print(visible(out))  # tool names, call ids and models were chosen by a model or server
    return 0


def total_usage(stats: Sequence[SessionStats]) -> Usage:
    """The usage of several sessions added up."""
    total = Usage()
    for one in stats:
        total = total + one.usage
    return total


def _stats_of(directory: Path) -> SessionStats:
    import warnings

    from rho_adapters.store.trace import read_trace

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a torn last line is skipped; stats are still right
        events = read_trace(directory / "trace.jsonl").events
    return session_telemetry(events, session_id=directory.name)


def _root(directory: str | Path | None) -> Path:
    from rho_entry.cli.monitor import sessions_root

    return sessions_root(None if directory is None else str(directory))
