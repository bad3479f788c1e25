"""Running a bash call: the line planned and run step by step (restricted) or given to the
executor's shell (unrestricted), and the report the model reads (exit code, duration, every
limit that was hit).

Apart from ``tools/bash.py`` (the handler: name, description, schema, policy) because a
registry offers bash to every run and only a call runs a line: imported with the first one.
"""

from __future__ import annotations

import posixpath
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import attrs

from rho_domain.errors import CommandRefused, ToolError
from rho_domain.limits import LimitKind
from rho_domain.ports.executor import FileKind
from rho_domain.tools.base import ToolContext, ToolOutput, error_output
from rho_domain.tools.run_footer import footer
from rho_domain.value_methods import value_eq, value_repr

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

    __repr__ = value_repr
    __eq__ = value_eq

    ctx: ToolContext
    deadline: float
    outputs: list[str] = attrs.field(factory=list)
    timed_out: bool = False
    refused: bool = False
    omitted: int = 0
    limit: LimitKind | None = None  # the resource limit that ended a command, if one did


async def run_line(
    arguments: Mapping[str, Any], ctx: ToolContext, *, restricted: bool, timeout: float
) -> ToolOutput:
    """Run ``arguments["command"]`` as bash's handler does: ``restricted``, planned and run
    without a shell; else through the executor's shell; at most ``timeout`` seconds."""
    command = str(arguments["command"])
    cwd = str(arguments.get("working_dir") or ".")
    timeout = min(float(arguments.get("timeout") or timeout), timeout)
    started = ctx.clock.monotonic()
    run = _Run(ctx=ctx, deadline=started + timeout)
    if restricted:
        from rho_domain.shell.plan import plan_command

        try:
            plan = plan_command(command)
        except CommandRefused as exc:
            return error_output(f"Command refused: {exc}", refused=True)
        code = await _run_plan(plan, cwd, run)
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


async def _run_plan(plan: ShellPlan, cwd: str, run: _Run) -> int | None:
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
            cwd, code = await _change_dir(cwd, step.path, run)
        elif isinstance(step, ShellPlan):
            code = await _run_plan(step, cwd, run)
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


async def _change_dir(cwd: str, path: str, run: _Run) -> tuple[str, int]:
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
    body = output if output.endswith("\n") or not output else output + "\n"
    return ToolOutput(
        content=body + footer(status, duration, notes),
        is_error=code != 0,
        metadata={
            "exit_code": code,
            "duration": round(duration, 3),
            "timed_out": run.timed_out,
            **({"refused": True} if run.refused else {}),
            **({"limit": run.limit} if run.limit is not None else {}),
        },
    )
