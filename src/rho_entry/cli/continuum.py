"""``rho-agent continuum``: build a PRD with developer sessions, each handing off to the next.

::

    rho-agent continuum PRD [-d DIR] [-m MODEL] [--service-tier T] [--base-url URL]
                            [--context-window N] [--budget-threshold F] [--max-sessions N]
                            [--test-cmd CMD] [--lint-cmd CMD] [--typecheck-cmd CMD]
                            [--branch NAME] [--resume] [--state FILE] [--store URL] [-y]

The loop is ``rho_entry.continuum.loop``'s (docs/continuum.md). Progress lines go to stderr.
Exit codes: 0 completed (the agent said PROJECT COMPLETE and the checks passed); 1 bad flags,
a failed session or git failure; 3 paused (sessions used up, or input needed without a
terminal): ``--resume`` goes on.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import uuid
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from rho_domain.errors import ConfigError, RhoError
from rho_entry.cli import exit_codes
from rho_entry.cli.terminal_text import visible
from rho_entry.usage import UsageParser, parsed

if TYPE_CHECKING:
    from rho_domain.config import AgentConfig
    from rho_domain.continuum.state import ContinuumState
    from rho_domain.ports.approver import Approver
    from rho_entry.continuum.loop import ContinuumPlan

_EXIT = {"completed": exit_codes.OK, "paused": exit_codes.LIMIT}
_CHECK_FLAGS = ("--test-cmd", "--lint-cmd", "--typecheck-cmd")


def build_parser() -> argparse.ArgumentParser:
    """The ``rho-agent continuum`` parser."""
    parser = UsageParser(
        prog="rho-agent continuum",
        description="Build what a PRD asks, one developer session after another, each "
        "committing its work and writing a handoff for the next.",
    )
    parser.add_argument("prd", help="the product requirements document (a text file)")
    parser.add_argument("-d", "--working-dir", default=".", help="the git repository (.)")
    parser.add_argument("-m", "--model", help="model id")
    parser.add_argument("--service-tier", metavar="TIER", help="e.g. flex, priority")
    parser.add_argument("--base-url", help="OpenAI-compatible endpoint")
    parser.add_argument("--provider", help="kind of server (see rho-agent --help)")
    parser.add_argument(
        "--context-window", type=int, default=400_000, metavar="N", help="tokens (400000)"
    )
    parser.add_argument(
        "--budget-threshold",
        type=float,
        default=0.7,
        metavar="F",
        help="share of the window after which a session is told to wrap up (0.7)",
    )
    parser.add_argument("--max-sessions", type=int, default=10, metavar="N", help="(10)")
    for flag in _CHECK_FLAGS:
        parser.add_argument(flag, metavar="CMD", help="a check run before completing (argv)")
    parser.add_argument("--branch", help="work on this branch (switched to, or created)")
    parser.add_argument("--resume", action="store_true", help="continue the latest run")
    parser.add_argument("--state", metavar="FILE", help="the run's state file")
    parser.add_argument(
        "--store", metavar="URL", help="where the sessions are kept (as rho-agent --store)"
    )
    parser.add_argument(
        "-y", "--yes", action="store_true", help="approve every tool call without asking"
    )
    return parser


def main(argv: Sequence[str]) -> int:
    """Run ``rho-agent continuum``; return the exit code."""
    args = parsed(build_parser(), argv)
    if isinstance(args, int):
        return args
    try:
        return asyncio.run(_run(args))
    except RhoError as exc:
        sys.stderr.write(f"rho-agent continuum: {visible(str(exc))}\n")
        return exit_codes.USAGE
    except KeyboardInterrupt:
        sys.stderr.write("rho-agent continuum: cancelled; --resume goes on\n")
        return exit_codes.cancelled()


async def _run(args: argparse.Namespace) -> int:
    import attrs

    from rho_domain.continuum.state import ContinuumState
    from rho_entry import wiring
    from rho_entry.config.home import config_dir
    from rho_entry.config.settings import check_endpoint, environment, resolve_settings
    from rho_entry.config.stores import choose_store, store_setting
    from rho_entry.continuum.loop import ContinuumPorts, run_continuum
    from rho_entry.continuum.state_file import (
        given_state,
        latest_state,
        load_state,
        save_state,
        state_path,
    )
    from rho_entry.executor_wiring import build_executor

    env = environment()
    flags = {
        "model": args.model,
        "service_tier": args.service_tier,
        "base_url": args.base_url,
        "provider": args.provider,
        "working_dir": args.working_dir,
        "profile": "developer",
        "auto_approve": args.yes,
    }
    settings = resolve_settings(flags, env)
    config = attrs.evolve(settings.config, context_window=args.context_window, auto_compact=False)
    plan = plan_of(args, config)  # its flags' errors first: they need no endpoint
    approver = _approver(args.yes)
    check_endpoint(settings, env)
    directory = config_dir(env) / "continuum"
    if args.resume:
        path = (
            given_state(args.state)
            if args.state
            else latest_state(directory, Path(args.working_dir))
        )
        state = attrs.evolve(load_state(path), config=recorded(args))
    else:
        state = ContinuumState(run_id=uuid.uuid4().hex[:12], config=recorded(args))
        path = given_state(args.state) if args.state else state_path(directory, state.run_id)
    url, origin = store_setting(args.store, env)
    chosen = choose_store(url, env, origin=origin)
    executor = build_executor(config, wiring.profile_of(config), chosen.store)
    ports = ContinuumPorts(
        executor=executor,
        store=chosen.store,
        model=lambda: None,
        approver=approver,
        ask=lambda question: terminal_ask(question, sys.stdin, sys.stderr),
        save=_announced(lambda s: save_state(path, s), path),
        say=_say,
    )
    try:
        final = await run_continuum(plan, ports, state)
    finally:
        await executor.aclose()
        await chosen.aclose()
    sys.stderr.write(f"continuum: {final.status}: {visible(final.reason)}\n")
    return _EXIT.get(final.status, exit_codes.USAGE)


def _announced(
    save: Callable[[ContinuumState], None], path: Path
) -> Callable[[ContinuumState], None]:
    """``save``, saying "run ID, state PATH" after the state file's first write. Said before
    the run began, it named a file never written and a run that never was, ahead of the
    refusal of a workspace outside git (the state is first saved after that check)."""
    said = False

    def announcing(state: ContinuumState) -> None:
        nonlocal said
        save(state)
        if not said:
            said = True
            _say(f"run {state.run_id}, state {path}")

    return announcing


def plan_of(args: argparse.Namespace, config: AgentConfig) -> ContinuumPlan:
    """The run's plan from the parsed flags; ``ConfigError`` naming the flag at fault."""
    from rho_entry.continuum.loop import ContinuumPlan
    from rho_entry.continuum.workspace import check_command

    if not 0 < args.budget_threshold <= 1:
        raise ConfigError(
            f"--budget-threshold must be above 0 and at most 1, not {args.budget_threshold}"
        )
    if args.max_sessions < 1:
        raise ConfigError(f"--max-sessions must be at least 1, not {args.max_sessions}")
    checks = tuple(
        check_command(flag, text)
        for flag in _CHECK_FLAGS
        if (text := getattr(args, flag[2:].replace("-", "_"))) is not None
    )
    return ContinuumPlan(
        prd=read_prd(args.prd),
        config=config,
        threshold=args.budget_threshold,
        max_sessions=args.max_sessions,
        checks=checks,
        branch=args.branch,
    )


def read_prd(path: str) -> str:
    """The PRD's text, which every session sends to the model. ``ConfigError`` naming the file
    when the secrets policy names its real path (``continuum .env`` sent the keys to the
    model), or it cannot be read as the house reads a file the user names
    (``read_config_text``: a FIFO without a writer held the run for good, and a 10^9-byte file
    was read whole into every session's prompt)."""
    import os

    from rho_domain.secrets import DEFAULT_POLICY
    from rho_entry.config.yaml_text import read_config_text

    if (why := DEFAULT_POLICY.refusal(os.path.realpath(path))) is not None:
        raise ConfigError(f"PRD {path}: {why}, and the PRD is sent to the model; give another file")
    return read_config_text(path, where=f"PRD {path}", what="the PRD (a UTF-8 text file)")


def recorded(args: argparse.Namespace) -> dict[str, object]:
    """The flags a state file records (for the reader; a resume uses its own). Not the base
    URL: it may hold a password (``https://user:secret@host``). The working directory
    resolved, as ``--resume`` finds the latest run of a directory by it."""
    return {
        name: str(Path(value).resolve()) if name == "working_dir" else value
        for name, value in vars(args).items()
        if value is not None and name != "base_url"
    }


def _say(line: str) -> None:
    sys.stderr.write(f"continuum: {visible(line)}\n")


def _approver(auto: bool) -> Approver | None:
    """None with ``-y`` (the config approves); else the terminal's, which needs one."""
    if auto:
        return None
    if not sys.stdin.isatty():
        raise ConfigError(
            "the developer profile asks before each command and edit, and stdin is not a "
            "terminal to answer on: give -y to approve every call, or run it in a terminal"
        )
    from rho_entry.cli.approval import TerminalApprover
    from rho_entry.cli.render import Style

    return TerminalApprover(_Notices(), style=Style(sys.stderr.isatty()), auto=False)


class _Notices:
    def notice(self, text: str, *styles: str) -> None:
        sys.stderr.write(f"{text}\n")


async def terminal_ask(question: str, stdin: TextIO, stderr: TextIO) -> str | None:
    """The user's answer to the agent's ``question``, read from ``stdin`` when it is a
    terminal; None when it is not (nobody to ask) or at end of input."""
    if not stdin.isatty():
        return None
    stderr.write(f"{visible(question)}\n\nyour answer> ")
    stderr.flush()
    line = await asyncio.to_thread(stdin.readline)
    return line.strip() or None if line else None
