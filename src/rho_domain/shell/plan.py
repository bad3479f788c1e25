"""From a parsed command line to the plan the bash tool executes without any shell.

A ``ShellPlan`` is a list of steps joined by ``;``, ``&&`` and ``||``; a step is a pipeline of
validated ``Stage`` argvs, a ``cd`` (which changes the directory of the following steps) or a
nested plan (a subshell: its ``cd`` does not leak out). Redirections are limited to what keeps
a command read-only: ``>/dev/null``, ``2>/dev/null``, ``&>/dev/null``, ``2>&1``, ``< file`` and
literal here-documents/here-strings.

Contract: ``plan_command(text) -> ShellPlan`` or ``CommandRefused`` naming the reason.
"""

from __future__ import annotations

from typing import Literal

import attrs

from rho_domain.errors import CommandRefused
from rho_domain.paths import is_secret_name
from rho_domain.ports.executor import Stage
from rho_domain.secrets import DEFAULT_POLICY
from rho_domain.shell.parser import parse
from rho_domain.shell.programs import check_argv
from rho_domain.shell.reads import path_words
from rho_domain.shell.syntax_tree import CommandList, Pipeline, Redirection, SimpleCommand
from rho_domain.value_methods import value_eq, value_hash, value_repr

Joiner = Literal["", ";", "&&", "||"]


@attrs.frozen(kw_only=True)
class ChangeDir:
    """``cd path``: the following steps of the same (sub)plan run in ``path``."""

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    path: str


@attrs.frozen(kw_only=True)
class PipelineStep:
    """Stages of one pipeline. ``patterns`` (empty when there is no glob) holds, per stage,
    the glob pattern of each argv word or None; ``shell.expand`` replaces those words by their
    matches right before the step runs, and checks the result like literal words."""

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    stages: tuple[Stage, ...]
    patterns: tuple[tuple[str | None, ...], ...] = ()


@attrs.frozen(kw_only=True)
class ShellPlan:
    """Steps, each preceded by its joiner (``""`` for the first)."""

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    steps: tuple[tuple[Joiner, PipelineStep | ChangeDir | ShellPlan], ...]

    def argvs(self) -> tuple[tuple[str, ...], ...]:
        """Every argv of the plan in order (for display and tests)."""
        out: list[tuple[str, ...]] = []
        for _, step in self.steps:
            if isinstance(step, ShellPlan):
                out.extend(step.argvs())
            elif isinstance(step, ChangeDir):
                out.append(("cd", step.path))
            else:
                out.extend(stage.argv for stage in step.stages)
        return tuple(out)


def check_words(argv: tuple[str, ...]) -> None:
    """The checks every argv passes, before and after glob expansion.

    A word still holding glob characters is an unexpanded pattern (or a search pattern) and
    skips the text-only secret checks; after expansion each match is a name and gets them all.
    """
    check_argv(argv)
    for arg in path_words(argv):
        # Early, text-only refusals: secret trees and locations for a word with a slash, and
        # only the unmistakable names for the last component (grep credentials, grep -e .pem,
        # grep 'x/server.key' are searches, not reads). The executor judges every word that
        # names something by its real path with the whole policy anyway.
        if any(c in arg for c in "*?["):
            continue
        if "/" in arg and (reason := DEFAULT_POLICY.location_refusal(arg)):
            raise CommandRefused(f"{reason}; it may not be read")
        if is_secret_name(arg.rpartition(":")[2].rpartition("/")[2]):
            raise CommandRefused(f"{arg!r} names a secrets file; it may not be read")
        if _names_proc(arg):
            raise CommandRefused(f"{arg!r}: /proc is not readable (process environments)")


def _stage(command: SimpleCommand, merge_stderr: bool) -> Stage:
    check_words(command.argv)
    stdin_path: str | None = None
    stdin_data: str | None = None
    stderr: Literal["capture", "null", "stdout"] = "stdout" if merge_stderr else "capture"
    stdout_null = False
    for redirection in command.redirections:
        kind = _classify(redirection)
        if kind == "stdin":
            assert redirection.target is not None
            if reason := DEFAULT_POLICY.refusal(redirection.target):
                raise CommandRefused(f"{reason}; it may not be read")
            if redirection.target.startswith(("/dev/", "/proc/")):
                raise CommandRefused("input from devices or /proc is not allowed; use a file")
            stdin_path, stdin_data = redirection.target, None
        elif kind == "data":
            stdin_data, stdin_path = redirection.heredoc, None
        elif kind == "stdout_null":
            stdout_null = True
        elif kind == "stderr_null":
            stderr = "null"
        elif kind == "both_null":
            stdout_null, stderr = True, "null"
        else:  # "2>&1": stderr goes where stdout goes now
            stderr = "null" if stdout_null else "stdout"
    return Stage(
        argv=command.argv,
        stdin_path=stdin_path,
        stdin_data=stdin_data,
        stderr=stderr,
        stdout_null=stdout_null,
    )


def _names_proc(arg: str) -> bool:
    """True for /proc paths written directly or reached by climbing with ``..``."""
    value = arg.split("=", 1)[1] if arg.startswith("--") and "=" in arg else arg
    parts = [p for p in value.split("/") if p not in ("", ".")]
    if not value.startswith("/") and (not parts or parts[0] != ".."):
        return False
    while parts and parts[0] == "..":
        parts.pop(0)
    return bool(parts) and parts[0] == "proc"


def _classify(r: Redirection) -> str:
    if r.op in ("<<", "<<<"):
        if r.fd not in (None, 0):
            raise CommandRefused("here-documents may only feed standard input")
        return "data"
    if r.op == "<" and r.fd in (None, 0):
        assert r.target is not None
        return "stdin"
    if r.op in (">", ">>", ">|", "&>", "&>>") and r.target == "/dev/null":
        if r.op.startswith("&"):
            return "both_null"
        if r.fd in (None, 1):
            return "stdout_null"
        if r.fd == 2:
            return "stderr_null"
    if r.op == ">&" and r.fd == 2 and r.target == "1":
        return "stderr_to_stdout"
    shown = f"{r.fd if r.fd is not None else ''}{r.op}{r.target or ''}"
    raise CommandRefused(
        f"redirection {shown!r} is not allowed: only >/dev/null, 2>/dev/null, 2>&1, "
        "< file and literal here-documents are (the restricted shell never writes files)"
    )


def _pipeline(pipeline: Pipeline) -> PipelineStep | ChangeDir | ShellPlan:
    commands = pipeline.commands
    if len(commands) == 1 and not isinstance(commands[0], SimpleCommand):
        return _plan(commands[0].body)
    stages: list[Stage] = []
    for command, merge in zip(commands, pipeline.merge_stderr, strict=True):
        if not isinstance(command, SimpleCommand):
            raise CommandRefused("a subshell inside a pipeline is not supported; split it")
        if command.argv[0] == "cd":
            if len(commands) > 1:
                raise CommandRefused("cd inside a pipeline has no effect; use cd dir && ...")
            check_argv(command.argv)
            if command.redirections:
                raise CommandRefused("cd takes no redirections")
            if command.patterns:
                raise CommandRefused("cd takes a literal directory, not a glob")
            return ChangeDir(path=command.argv[1])
        stages.append(_stage(command, merge))
    patterns = tuple(
        c.patterns or (None,) * len(c.argv) for c in commands if isinstance(c, SimpleCommand)
    )
    if all(p is None for stage in patterns for p in stage):
        patterns = ()
    return PipelineStep(stages=tuple(stages), patterns=patterns)


def _plan(commands: CommandList) -> ShellPlan:
    return ShellPlan(steps=tuple((op, _pipeline(p)) for op, p in commands.items))  # type: ignore[misc]


def plan_command(text: str) -> ShellPlan:
    """Parse and validate a command line; the result runs without a shell."""
    return _plan(parse(text))
