"""bash: run a command line. Restricted: parsed, validated and executed without any shell.

In restricted mode the line becomes a ``ShellPlan`` (or a refusal naming the reason); this
handler then runs each pipeline through ``executor.run`` and evaluates ``;``, ``&&``, ``||``,
``cd`` and subshells itself, so what runs is exactly what was validated. Unrestricted mode
hands the string to the executor's shell. Both report exit code and duration, and state any
limit that was hit (timeout, omitted output). How a line runs and is reported is
``tools/bash_run.py``, imported with the first call.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

import attrs

from rho_domain.errors import CommandRefused
from rho_domain.tools.base import (
    DANGEROUS,
    READ_ONLY,
    ToolContext,
    ToolHandler,
    ToolOutput,
    ToolPolicy,
)


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
        (or cannot be read, so it asks again even after "always"), else ``asks``: what the
        line was read to run and write (the approver's reason)."""
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
        from rho_domain.shell.destructive import line_reading

        reason, recognised = line_reading(command)
        return attrs.evolve(DANGEROUS, destructive=reason, asks=recognised)

    async def handle(self, arguments: Mapping[str, Any], ctx: ToolContext) -> ToolOutput:
        """See ``ToolHandler.handle``."""
        # How a line runs and is reported loads with the first bash call, not with every
        # registry that offers bash (a one-shot that lists files never runs a command).
        from rho_domain.tools.bash_run import run_line

        return await run_line(arguments, ctx, restricted=self.restricted, timeout=self.timeout)


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
