"""``rho-agent monitor [DIR] ps|watch|cancel|pause|resume|directive|connect``: watch and
control sessions from another terminal, through the files in their directories.

DIR is rho-agent's home or a sessions directory (default: the home's ``sessions``). IDs accept
unique prefixes; an ambiguous prefix is an error that lists the candidates. Exit codes: 0 ok,
1 error (unknown or ambiguous session, bad usage). Imports stay light: no httpx, yaml or cattrs.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from rho_adapters.store.confined import open_file
from rho_adapters.store.layout import SessionPaths, resolve
from rho_adapters.store.listing import list_sessions
from rho_adapters.store.signals import add_directive, request_cancel, request_pause, request_resume
from rho_domain.errors import RhoError
from rho_domain.ports.store import SessionInfo
from rho_entry.session_json import LIVE, active_seconds, info_dict
from rho_entry.terminal_text import json_visible, visible
from rho_entry.usage import UsageParser

COMMANDS = ("ps", "watch", "cancel", "pause", "resume", "directive", "connect")
WATCH_POLL_SECONDS = 0.25


def _add_ps(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="one JSON document")
    parser.add_argument(
        "--limit", type=int, default=50, metavar="N", help="at most N sessions, newest first (50)"
    )


def _add_watch(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("id", help="session id, unique prefix or latest")
    parser.add_argument(
        "--json", action="store_true", help="trace lines (invisible characters as JSON escapes)"
    )
    parser.add_argument("--once", action="store_true", help="print what is there and exit")


def _add_cancel(parser: argparse.ArgumentParser) -> None:
    target = parser.add_mutually_exclusive_group(required=True)
    target.add_argument("id", nargs="?", help="session id or unique prefix")
    target.add_argument("--all", action="store_true", help="every live session")


def _add_id(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("id", help="session id or unique prefix")


def _add_directive(parser: argparse.ArgumentParser) -> None:
    _add_id(parser)
    parser.add_argument("text", nargs="+", help="the instruction")


def _add_connect(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("words", nargs="+", metavar="ID|INSTRUCTION")
    parser.add_argument(
        "--wait", type=float, default=30.0, metavar="SECONDS", help="for a running session's answer"
    )


# command -> (its help, what adds its arguments); ``rho-agent ps`` and ``kill`` reuse them
_COMMANDS: dict[str, tuple[str, Callable[[argparse.ArgumentParser], None]]] = {
    "ps": ("list sessions: id, status, liveness, model, elapsed, prompt", _add_ps),
    "watch": ("follow a session's trace live", _add_watch),
    "cancel": ("stop a session at its next checkpoint", _add_cancel),
    "pause": ("pause before the next model call or tool", _add_id),
    "resume": ("lift a pause", _add_id),
    "directive": ("send an instruction to a session", _add_directive),
    "connect": (
        "start a coordinating agent with the context of sessions A B [C...] (running ones "
        "answer between steps; finished ones are read from their trace); a last argument "
        "that names no session is its first instruction",
        _add_connect,
    ),
}


def _parser() -> argparse.ArgumentParser:
    parser = UsageParser(
        prog="rho-agent monitor",
        usage="%(prog)s [-h] [DIR] COMMAND ...",
        description="Watch and control rho-agent sessions through their session directories "
        "(DIR: a rho-agent home or a sessions directory; default: the home's sessions).",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name, (text, add) in _COMMANDS.items():
        add(sub.add_parser(name, help=text, description=text))
    return parser


def _command_parser(command: str, prog: str) -> argparse.ArgumentParser:
    text, add = _COMMANDS[command]
    parser = UsageParser(prog=prog, description=text)
    add(parser)
    parser.set_defaults(command=command)
    return parser


def sessions_root(directory: str | None) -> Path:
    """DIR as given (a home with ``sessions/`` inside, or a sessions directory), else the
    home from the environment."""
    if directory is None:
        from rho_entry.config.home import sessions_dir
        from rho_entry.config.settings import environment

        return sessions_dir(environment())
    path = Path(directory).expanduser()
    return path / "sessions" if (path / "sessions").is_dir() else path


def main(argv: Sequence[str], *, command: str | None = None, prog: str = "") -> int:
    """``rho-agent monitor [DIR] COMMAND``: returns the exit code. ``command`` given: ``argv``
    are that command's arguments alone, its usage and help titled ``prog``
    (``rho-agent kill``)."""
    args = list(argv)
    directory = None
    if command is None and args and _names_a_directory(args):
        directory, args = args[0], args[1:]
    parser = _parser() if command is None else _command_parser(command, prog)
    try:
        namespace = parser.parse_args(args)
    except SystemExit as exc:  # --help exits 0; a usage error is 1, as documented (not 2)
        return 0 if exc.code == 0 else 1
    root = sessions_root(directory)
    try:
        return _dispatch(namespace, root)
    except RhoError as exc:
        print(visible(f"rho-agent monitor: {exc}"), file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 0


def _names_a_directory(args: list[str]) -> bool:
    """Whether the first word is DIR: not a command or an option, and either followed by a
    command or looking like a path. ``monitor bogus`` is then a bad command, not a DIR."""
    first = args[0]
    if first in COMMANDS or first.startswith("-"):
        return False
    return (len(args) > 1 and args[1] in COMMANDS) or "/" in first or Path(first).is_dir()


def _dispatch(ns: argparse.Namespace, root: Path) -> int:
    if ns.command == "ps":
        return _ps(root, as_json=ns.json, limit=ns.limit)
    if ns.command == "watch":
        return watch(resolve(root, ns.id), as_json=ns.json, follow=not ns.once)
    if ns.command == "cancel":
        targets = (
            [root / i.id for i in list_sessions(root, limit=10_000) if i.liveness in LIVE]
            if ns.all
            else [_require_live(resolve(root, ns.id), "cancel").dir]
        )
        for path in targets:
            request_cancel(path)
            print(f"cancel requested: {path.name}")
        if not targets:
            print("no live session to cancel")
        return 0
    if ns.command == "connect":
        from rho_entry.cli.connect import connect_main

        return connect_main(root, ns.words, wait=ns.wait)
    paths = resolve(root, ns.id)
    if ns.command in ("pause", "directive"):
        _require_live(paths, ns.command)
    if ns.command == "pause":
        request_pause(paths.dir)
        print(f"paused: {paths.id} (it waits before its next model call or tool)")
    elif ns.command == "resume":
        print(f"resumed: {paths.id}" if request_resume(paths.dir) else f"{paths.id} was not paused")
    else:
        offset = add_directive(paths.dir, " ".join(ns.text))
        print(f"directive #{offset} queued for {paths.id} (applied before its next model call)")
    return 0


def _require_live(paths: SessionPaths, command: str) -> SessionPaths:
    """A signal to a session that no process drives would wait for the next ``--resume``
    and act there unasked (a pause left behind blocks it): refuse it instead."""
    state = _liveness(paths)
    if state not in LIVE:
        raise RhoError(
            f"{command}: session {paths.id} is not running ({state}); "
            f'continue it with `rho-agent --resume {paths.id} "..."`'
        )
    return paths


def _ps(root: Path, *, as_json: bool, limit: int) -> int:
    infos = list_sessions(root, limit=limit)
    now = time.time()
    if as_json:
        rows = [info_dict(i, now) for i in infos]
        print(json.dumps(rows, indent=2))
        return 0
    if not infos:
        print(f"no sessions in {root}")
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
    return 0


def _elapsed(info: SessionInfo, now: float) -> str:
    seconds = int(active_seconds(info, now))
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}h{minutes:02d}m" if hours else f"{minutes}m{secs:02d}s"


def watch(paths: SessionPaths, *, as_json: bool, follow: bool = True) -> int:
    """Print the trace, then follow it until the session's process is gone."""
    from rho_entry.cli.monitor_format import format_event

    offset, pending = 0, b""
    while True:
        try:
            with open_file(paths.trace, "rb") as handle:  # never through a link
                handle.seek(offset)
                chunk = handle.read()
        except FileNotFoundError:
            chunk = b""
        offset += len(chunk)
        *lines, pending = (pending + chunk).split(b"\n")  # keep an incomplete line for later
        for line in lines:
            if line.strip():
                # JSON as stored, but printable: json_visible keeps the values
                text = line.decode(errors="replace")
                print(json_visible(text) if as_json else format_event(line))
        sys.stdout.flush()
        if getattr(sys.stdout, "broken", False):  # the reader went away (`... | head`)
            return 0
        if not follow or (not chunk and _liveness(paths) not in LIVE):
            return 0
        time.sleep(WATCH_POLL_SECONDS)


def _liveness(paths: SessionPaths) -> str:
    """running, paused, idle, stale, or the final status (``layout.liveness``), read now."""
    from rho_adapters.store.layout import liveness, read_meta

    return liveness(read_meta(paths), paused=paths.pause.exists(), now=time.time())
