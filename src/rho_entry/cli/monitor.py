"""``rho-agent monitor [DIR] [--store URL] ps|watch|cancel|pause|resume|directive|connect``:
watch and control sessions from another terminal (or host), through the store's catalog.

DIR is rho-agent's home or a sessions directory (default: the home's ``sessions``);
``--store URL`` (or ``$RHO_AGENT_STORE``) names another store, such as a shared PostgreSQL
(``rho_entry.config.stores``). IDs accept unique prefixes; an ambiguous prefix is an error that
lists the candidates. Exit codes: 0 ok, 1 error (unknown or ambiguous session, bad usage). Imports
stay light for the file store: no httpx, yaml or cattrs.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rho_domain.errors import RhoError
from rho_domain.ports.session_control import held_by_live_process
from rho_domain.ports.store import SessionInfo
from rho_domain.run import spelled_whole
from rho_entry.cli.monitor_parser import COMMANDS, command_parser, monitor_parser
from rho_entry.cli.session_json import active_seconds, info_dict, placement_line
from rho_entry.cli.terminal_text import json_visible, shell_word, visible
from rho_entry.config.home import expanded
from rho_entry.config.stores import (
    Operator,
    choose_operator,
    close_store_sync,
    run_sync,
    store_setting,
)
from rho_entry.usage import parsed


def sessions_root(directory: str | None) -> Path:
    """DIR as given (a home with ``sessions/`` inside, or a sessions directory), else the
    home from the environment."""
    if directory is None:
        from rho_entry.config.home import sessions_dir
        from rho_entry.config.settings import environment

        return sessions_dir(environment())
    path = expanded(directory)
    return path / "sessions" if (path / "sessions").is_dir() else path


def main(argv: Sequence[str], *, command: str | None = None, prog: str = "") -> int:
    """``rho-agent monitor [DIR] COMMAND``: returns the exit code. ``command`` given: ``argv``
    are that command's arguments alone, its usage and help titled ``prog``
    (``rho-agent kill``)."""
    args, flag = _store_flag(list(argv))
    directory = None
    if command is None and args and _names_a_directory(args):
        directory, args = args[0], args[1:]
    parser = monitor_parser() if command is None else command_parser(command, prog)
    namespace = parsed(parser, args)  # --help exits 0; a usage error 1, as documented
    if isinstance(namespace, int):
        return namespace
    try:
        directory = _directory_given(namespace, directory)
        from rho_entry.config.settings import environment

        url, origin = store_setting(flag, environment())
        if url is None or directory is not None:
            url, origin = str(sessions_root(directory)), "DIR" if directory else origin
        if namespace.command == "connect":
            from rho_entry.cli.connect import connect_main
            from rho_entry.config.stores import choose_store

            chosen = choose_store(url, environment(), origin=origin)
            try:
                return connect_main(chosen, namespace.words, wait=namespace.wait)
            finally:
                run_sync(chosen.aclose())  # its share of a PostgreSQL pool
        operator = choose_operator(url, environment(), origin=origin)
        try:
            return _dispatch(namespace, operator)
        finally:
            close_store_sync(operator.sessions)
    except RhoError as exc:
        print(visible(f"rho-agent monitor: {exc}"), file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 0


def _directory_given(namespace: argparse.Namespace, word: str | None) -> str | None:
    """DIR as the short forms take it (``ps DIR``, ``-d/--dir DIR``), else ``word``; two
    different ones are a usage error rather than one silently winning."""
    given = {getattr(namespace, name, None) for name in ("dir", "dir_word")} - {None}
    if len(given) > 1:
        raise RhoError(f"two directories given ({' and '.join(sorted(map(str, given)))}): give one")
    return str(given.pop()) if given else word


def _names_a_directory(args: list[str]) -> bool:
    """Whether the first word is DIR: not a command or an option, and either followed by a
    command or looking like a path. ``monitor bogus`` is then a bad command, not a DIR."""
    first = args[0]
    if first in COMMANDS or first.startswith("-"):
        return False
    return (len(args) > 1 and args[1] in COMMANDS) or "/" in first or os.path.isdir(first)


def _store_flag(args: list[str]) -> tuple[list[str], str | None]:
    """``--store URL`` (or ``--store=URL``) anywhere among the words, taken out."""
    for i, word in enumerate(args):
        if word == "--store" and i + 1 < len(args):
            return args[:i] + args[i + 2 :], args[i + 1]
        if word.startswith("--store="):
            return args[:i] + args[i + 1 :], word.split("=", 1)[1]
    return args, None


def _dispatch(ns: argparse.Namespace, op: Operator) -> int:
    sessions = op.sessions
    if ns.command == "ps":
        return _ps(op, as_json=ns.json, limit=ns.limit)
    if ns.command == "watch":
        whole = spelled_whole(run_sync(sessions.info(ns.id)).id)  # a short id bare: a prefix
        return watch(op, whole, as_json=ns.json, follow=not ns.once)
    if ns.command == "cancel":
        targets = (
            [
                i.id
                for i in run_sync(sessions.sessions(limit=10_000))
                if held_by_live_process(i.liveness)
            ]
            if ns.all
            else [_require_live(op, ns.id, "cancel")]
        )
        for session_id in targets:
            run_sync(sessions.request(spelled_whole(session_id), "cancel"))
            _say(f"cancel requested: {session_id}")
        if not targets:
            print("no live session to cancel")
        return 0
    session_id = run_sync(sessions.info(ns.id)).id
    whole = spelled_whole(session_id)  # handed back to the store: a short id bare is a prefix
    if ns.command in ("pause", "directive"):
        _require_live(op, whole, ns.command)
    if ns.command == "pause":
        run_sync(sessions.request(whole, "pause"))
        _say(f"paused: {session_id} (it waits before its next model call or tool)")
    elif ns.command == "resume":
        resumed = run_sync(sessions.request(whole, "resume"))
        _say(f"resumed: {session_id}" if resumed else f"{session_id} was not paused")
    else:
        offset = run_sync(sessions.add_directive(whole, " ".join(ns.text)))
        _say(f"directive #{offset} queued for {session_id} (applied before its next model call)")
    return 0


def _say(line: str) -> None:
    """Print one line naming a session: its id is a directory's name or a row another
    machine wrote, data like any field of it."""
    print(visible(line, newlines=False))


def _require_live(op: Operator, ref: str, command: str) -> str:
    """A signal to a session that no process drives would wait for the next ``--resume``
    and act there unasked (a pause left behind blocks it): refuse it instead. Returns the id."""
    info = run_sync(op.sessions.info(ref))
    if not held_by_live_process(info.liveness):
        raise RhoError(
            f"{command}: session {info.id} is not running ({info.liveness}); "
            f'continue it with `rho-agent --resume {shell_word(spelled_whole(info.id))} "..."`'
        )
    return info.id


def _ps(op: Operator, *, as_json: bool, limit: int) -> int:
    infos = run_sync(op.sessions.sessions(limit=limit))
    now = time.time()
    if as_json:
        rows = [info_dict(i, now) for i in infos]
        print(json.dumps(rows, indent=2))
        return 0
    if not infos:
        print(f"no sessions in {op.shown}")
        return 0
    header = f"{'ID':<14} {'STATUS':<18} {'LIVENESS':<10} {'MODEL':<20} {'ELAPSED':>8}  PROMPT"
    print(header)
    for info in infos:
        prompt = visible(" ".join(info.first_prompt.split()), newlines=False)
        prompt = prompt if len(prompt) <= 60 else prompt[:57] + "..."
        line = (
            f"{info.id:<14} {info.status:<18} {info.liveness:<10} {info.model[:20]:<20} "
            f"{_elapsed(info, now):>8}  {prompt}"
        )
        print(visible(line, newlines=False))  # every field comes from a session directory
        if (where := placement_line(info)) is not None:
            print(visible(where, newlines=False))
    return 0


def _elapsed(info: SessionInfo, now: float) -> str:
    seconds = int(active_seconds(info, now))
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}h{minutes:02d}m" if hours else f"{minutes}m{secs:02d}s"


def watch(op: Operator, session_id: str, *, as_json: bool, follow: bool = True) -> int:
    """Print the trace, then follow it while a process holds the session."""
    return run_sync(_watch(op, session_id, as_json=as_json, follow=follow))


async def _watch(op: Operator, session_id: str, *, as_json: bool, follow: bool) -> int:
    from rho_entry.cli.monitor_format import format_event

    catalog = op.sessions
    lines = catalog.follow(session_id) if follow else _once(op, session_id)
    async for line in lines:
        if line.data.strip():
            # JSON as stored, but printable: json_visible keeps the values
            text = line.data.decode(errors="replace")
            print(json_visible(text) if as_json else format_event(line.data))
        sys.stdout.flush()
        if getattr(sys.stdout, "broken", False):  # the reader went away (`... | head`)
            return 0
    return 0


async def _once(op: Operator, session_id: str) -> Any:
    for line in await op.sessions.trace(session_id):
        yield line
