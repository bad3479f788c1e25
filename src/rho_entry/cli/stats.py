"""``rho-agent stats [ID|--all] [--json] [--dir DIR | --store URL]``: telemetry of stored
sessions, read from their traces.

``session_stats(ref)`` is the library function (the same numbers as the command); the numbers
come from ``rho_domain.telemetry.session_telemetry`` over the session's events only, read
through the store's ``SessionCatalog`` (files, or PostgreSQL with ``--store``).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rho_domain.errors import RhoError, SessionNotFound, StoredPastBound, TraceFormatError
from rho_domain.messages import Usage
from rho_domain.ports.session_control import SessionCatalog
from rho_domain.telemetry import SessionStats, session_telemetry
from rho_entry.cli.terminal_text import visible
from rho_entry.config.stores import close_store_sync, run_sync
from rho_entry.usage import UsageParser, parsed


def session_stats(
    ref: str = "latest", directory: str | Path | None = None, *, store: str | None = None
) -> SessionStats:
    """The telemetry of one stored session (id, unique prefix, ``latest`` or a directory).

    ``directory`` is a rho-agent home or sessions directory; ``store`` a store URL (default:
    ``$RHO_AGENT_STORE``, else the environment's config directory). Raises
    ``SessionNotFound`` (a ``StoreError``) for an unknown id.
    """
    catalog = _catalog(directory, store)
    try:
        return run_sync(_stats_of(catalog, ref))
    finally:
        close_store_sync(catalog)  # a PostgreSQL catalog's share of the pool


def all_session_stats(
    directory: str | Path | None = None, *, store: str | None = None
) -> tuple[tuple[SessionStats, ...], tuple[str, ...]]:
    """The telemetry of every stored session, newest first, and why each session left out
    was: its stored data unreadable (a malformed trace line, a trace past its bound) or the
    session gone since the listing. One such session failed the whole command before, so
    no other session's stats were shown."""
    catalog = _catalog(directory, store)

    async def every() -> tuple[tuple[SessionStats, ...], tuple[str, ...]]:
        shown: list[SessionStats] = []
        left_out: list[str] = []
        for info in await catalog.sessions(limit=1_000_000):
            try:
                shown.append(await _stats_of(catalog, info.id))
            except (TraceFormatError, StoredPastBound, SessionNotFound) as exc:
                left_out.append(f"session {info.id} left out: {exc}")
        return tuple(shown), tuple(left_out)

    try:
        return run_sync(every())
    finally:
        close_store_sync(catalog)


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
    parser.add_argument("--store", metavar="URL", help="the session store (as rho-agent --store)")
    ns = parsed(parser, argv)
    if isinstance(ns, int):
        return ns
    from rho_entry.cli.stats_format import format_session, format_sessions

    try:
        if ns.all:
            many, left_out = all_session_stats(ns.dir, store=ns.store)
            for why in left_out:  # the others' stats are still shown; the total is theirs
                print(visible(f"rho-agent stats: {why}"), file=sys.stderr)
            out = (
                json.dumps([stats_to_dict(s) for s in many])
                if ns.json
                else "\n".join(format_sessions(many))
            )
        else:
            one = session_stats(ns.id, ns.dir, store=ns.store)
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


async def _stats_of(catalog: SessionCatalog, ref: str) -> SessionStats:
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a torn last line is skipped; stats are still right
        record, events = await catalog.recording(ref)
    return session_telemetry(events, session_id=record.id)


def _catalog(directory: str | Path | None, flag: str | None) -> SessionCatalog:
    from rho_entry.cli.monitor import sessions_root
    from rho_entry.config.settings import environment
    from rho_entry.config.stores import choose_operator, store_setting

    env = environment()
    url, origin = store_setting(flag, env)
    if url is None or directory is not None:
        url = str(sessions_root(None if directory is None else str(directory)))
        origin = "--dir" if directory is not None else origin
    return choose_operator(url, env, origin=origin).sessions
