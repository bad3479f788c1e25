"""bash: run a command line. Restricted: parsed, validated and executed without any shell.

In restricted mode the line becomes a ``ShellPlan`` (or a refusal naming the reason); this
handler then runs each pipeline through ``executor.run`` and evaluates ``;``, ``&&``, ``||``,
``cd`` and subshells itself, so what runs is exactly what was validated. Unrestricted mode
hands the string to the executor's shell. Both report exit code and duration, and state any
limit that was hit (timeout, omitted output).
"""

from __future__ import annotations

import functools
import posixpath
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import attrs

from rho_domain.errors import CommandRefused, ToolError
from rho_domain.limits import LimitKind
from rho_domain.ports.executor import FileKind
from rho_domain.tools.base import (
    DANGEROUS,
    READ_ONLY,
    ToolContext,
    ToolHandler,
    ToolOutput,
    ToolPolicy,
    error_output,
)

if TYPE_CHECKING:
    from rho_domain.shell.plan import ShellPlan

MAX_OUTPUT_BYTES = 256 * 1024
# What the model reads when a resource limit of the profile ended a command ({} = the limit).
_LIMIT_NOTES: Mapping[LimitKind, str] = {
    "memory": "stopped by the memory limit ({}): it needs less memory (smaller input, a limit)",
    "cpu": "stopped by the CPU time limit ({}): it needs less work per command",
    "output": "stopped by the output limit ({}): the process group was killed; narrow the output",
    "file size": "stopped by the file size limit ({})",
}


@attrs.define
class _Run:
    """Accumulated state while a plan executes."""

    ctx: ToolContext
    deadline: float
    outputs: list[str] = attrs.field(factory=list)
    timed_out: bool = False
    refused: bool = False
    omitted: int = 0
    limit: LimitKind | None = None  # the resource limit that ended a command, if one did


class BashHandler(ToolHandler):
    """The bash tool; ``restricted`` selects the allowlisted, shell-less mode."""

    def __init__(self, *, restricted: bool, timeout: float) -> None:
        self.restricted = restricted
        self.timeout = timeout

    @property
    def name(self) -> str:
        """See ``ToolHandler.name``."""
        return "bash"

    @property
    def description(self) -> str:
        """See ``ToolHandler.description``."""
        if self.restricted:
            return (
                "Run a read-only command line (restricted shell: allowlisted programs such as "
                "ls, cat, head, tail, zcat, grep, rg, find, wc, sort, uniq, cut, sed -n, awk, jq, "
                "diff, git status/log/diff/show/blame; pipes, ;, &&, ||, cd, (subshells), "
                "2>/dev/null, 2>&1, < file, quoted here-documents, and globs (*, ?, [...]) "
                "expanded as bash would). No variables, substitutions, writes or network: the "
                f"refusal message says why. Timeout {self.timeout:g} s; stdin is empty."
            )
        return (
            "Run a command line with bash in the working directory. stdin is empty; the whole "
            f"process group is killed after the timeout (default {self.timeout:g} s)."
        )

    @property
    def parameters(self) -> Mapping[str, Any]:
        """See ``ToolHandler.parameters`` (one shared object per timeout: do not mutate)."""
        return _parameters(self.timeout)

    def policy_for(self, arguments: Mapping[str, Any]) -> ToolPolicy:
        """Restricted: read-only, or refused with the plan's reason (the same words ``handle``
        would answer) when the line cannot be planned. Unrestricted: dangerous, and
        ``destructive`` when the parsed line runs a program of ``shell.destructive``'s table
        (or cannot be read, so it asks again even after "always")."""
        command = str(arguments.get("command", ""))
        if self.restricted:
            # The planner (parser, program table) loads at the first command, not at start-up.
            from rho_domain.shell.plan import plan_command

            try:
                plan_command(command)
            except CommandRefused as exc:
                return attrs.evolve(READ_ONLY, refused=f"Command refused: {exc}")
            return READ_ONLY
        # Imported at the first command judged, not by every run's start-up (~60 rules).
        from rho_domain.shell.destructive import destructive_reason

        return attrs.evolve(DANGEROUS, destructive=destructive_reason(command))

    async def handle(self, arguments: Mapping[str, Any], ctx: ToolContext) -> ToolOutput:
        """See ``ToolHandler.handle``."""
        command = str(arguments["command"])
        cwd = str(arguments.get("working_dir") or ".")
        timeout = min(float(arguments.get("timeout") or self.timeout), self.timeout)
        started = ctx.clock.monotonic()
        run = _Run(ctx=ctx, deadline=started + timeout)
        if self.restricted:
            from rho_domain.shell.plan import plan_command

            try:
                plan = plan_command(command)
            except CommandRefused as exc:
                return error_output(f"Command refused: {exc}", refused=True)
            code = await self._run_plan(plan, cwd, run)
        else:
            from rho_domain.ports.commands import Command  # with the first command run

            result = await ctx.executor.run(
                Command(shell=command, cwd=cwd, timeout=timeout, max_output_bytes=MAX_OUTPUT_BYTES)
            )
            run.outputs.append(result.output)
            run.timed_out, run.omitted, code = (
                result.timed_out,
                result.omitted_bytes,
                result.exit_code,
            )
            run.limit = result.limit
        duration = ctx.clock.monotonic() - started
        return _report(run, code, duration, timeout)

    async def _run_plan(self, plan: ShellPlan, cwd: str, run: _Run) -> int | None:
        from rho_domain.ports.commands import Command
        from rho_domain.shell.expand import expand_step
        from rho_domain.shell.plan import ChangeDir, ShellPlan

        code: int | None = 0
        for joiner, step in plan.steps:
            if run.timed_out or run.refused:
                return None
            if (joiner == "&&" and code != 0) or (joiner == "||" and code == 0):
                continue
            if isinstance(step, ChangeDir):
                cwd, code = await self._change_dir(cwd, step.path, run)
            elif isinstance(step, ShellPlan):
                code = await self._run_plan(step, cwd, run)
            else:
                remaining = run.deadline - run.ctx.clock.monotonic()
                if remaining <= 0:
                    run.timed_out = True
                    return None
                try:
                    step = await expand_step(step, cwd, run.ctx.executor)
                    result = await run.ctx.executor.run(
                        Command(
                            pipeline=step.stages,
                            cwd=cwd,
                            timeout=remaining,
                            max_output_bytes=MAX_OUTPUT_BYTES,
                        )
                    )
                except CommandRefused as exc:  # decided where the command runs (awk, globs)
                    run.outputs.append(f"Command refused: {exc}\n")
                    run.refused = True
                    return None
                run.outputs.append(result.output)
                run.omitted += result.omitted_bytes
                run.timed_out = result.timed_out
                run.limit = result.limit or run.limit
                code = result.exit_code
        return code

    async def _change_dir(self, cwd: str, path: str, run: _Run) -> tuple[str, int]:
        target = posixpath.normpath(path if path.startswith("/") else posixpath.join(cwd, path))
        try:
            info = await run.ctx.executor.stat(target)
        except ToolError as exc:
            run.outputs.append(f"cd: {path}: {exc}\n")
            return cwd, 1
        if info.kind is not FileKind.DIRECTORY:
            run.outputs.append(f"cd: {path}: not a directory\n")
            return cwd, 1
        return target, 0


def _report(run: _Run, code: int | None, duration: float, timeout: float) -> ToolOutput:
    output = "".join(run.outputs)
    notes = []
    if run.timed_out:
        notes.append(f"timed out after {timeout:g} s; the process group was killed")
    if run.omitted:
        notes.append(f"{run.omitted:,} bytes of output omitted (cap {MAX_OUTPUT_BYTES:,} bytes)")
    if run.limit is not None:
        notes.append(_LIMIT_NOTES[run.limit].format(run.ctx.profile.limits.describe(run.limit)))
    status = "refused" if run.refused else "killed" if code is None else f"exit code {code}"
    footer = f"[{status}, {duration:.1f} s" + "".join(f"; {n}" for n in notes) + "]"
    body = output if output.endswith("\n") or not output else output + "\n"
    return ToolOutput(
        content=f"{body}{footer}",
        is_error=code != 0,
        metadata={
            "exit_code": code,
            "duration": round(duration, 3),
            "timed_out": run.timed_out,
            **({"refused": True} if run.refused else {}),
            **({"limit": run.limit} if run.limit is not None else {}),
        },
    )


@functools.lru_cache(maxsize=16)
def _parameters(timeout: float) -> Mapping[str, Any]:
    """The bash schema for ``timeout``. Remembered per timeout so every session's specs carry
    the same object, which keeps the token estimate's schema-JSON cache (keyed by identity)
    hitting instead of re-encoding the schemas on every estimate."""
    return {
        "type": "object",
        "properties": {
            "command": {"type": "string", "description": "The command line."},
            "working_dir": {
                "type": "string",
                "description": "Directory to run in, relative to the workspace (default .).",
            },
            "timeout": {
                "type": "integer",
                "minimum": 1,
                "description": f"Seconds before the command is killed (max {timeout:g}).",
            },
        },
        "required": ["command"],
        "additionalProperties": False,
    }
