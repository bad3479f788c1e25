"""The ``rho-agent monitor`` command line: each command's arguments and help, the whole
``monitor`` parser, and one command's parser alone (``rho-agent ps`` and ``kill`` reuse them).
``--store`` is shown in help only: ``monitor._store_flag`` takes it out of the words first."""

from __future__ import annotations

import argparse
from collections.abc import Callable

from rho_entry.usage import UsageParser

COMMANDS = ("ps", "watch", "cancel", "pause", "resume", "directive", "connect")


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


def monitor_parser() -> argparse.ArgumentParser:
    """``rho-agent monitor [DIR] COMMAND ...``'s parser."""
    parser = UsageParser(
        prog="rho-agent monitor",
        # the commands on the usage line: argparse's "required: COMMAND" alone named none
        usage=f"%(prog)s [-h] [DIR] COMMAND ...\n       COMMAND: {', '.join(COMMANDS)}",
        description="Watch and control rho-agent sessions through their session directories "
        "(DIR: a rho-agent home or a sessions directory; default: the home's sessions).",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name, (text, add) in _COMMANDS.items():
        _add_store(command := sub.add_parser(name, help=text, description=text))
        add(command)
    return parser


def command_parser(command: str, prog: str) -> argparse.ArgumentParser:
    """``command``'s parser alone, as ``prog``. It takes the sessions directory as ``-d/--dir
    DIR`` (``dir``), as the reference implementation's ``ps DIR`` and ``cancel -d DIR`` did;
    ``ps`` also as its one positional word (``dir_word``)."""
    text, add = _COMMANDS[command]
    parser = UsageParser(prog=prog, description=text)
    _add_store(parser)
    parser.add_argument("-d", "--dir", help="rho-agent home or sessions directory")
    add(parser)
    if command == "ps":
        parser.add_argument("dir_word", nargs="?", metavar="DIR", help="same as --dir")
    parser.set_defaults(command=command)
    return parser


def _add_store(parser: argparse.ArgumentParser) -> None:
    # shown in -h only: ``_store_flag`` takes --store out of the words before they are parsed
    parser.add_argument("--store", metavar="URL", help="the session store (as rho-agent --store)")
