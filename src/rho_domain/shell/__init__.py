"""The restricted shell: parse a bash command line, validate it, plan argvs to run without a shell.

``plan_command(text)`` returns a ``ShellPlan`` or raises ``CommandRefused`` with the reason.
``check_argv``/``harden_argv`` validate and harden one argv (the executor re-applies them).

The names load on first use (PEP 562): importing a light submodule (``shell.glob`` for the
file tools) does not pay for the planner, the parser and the program table, which a run
needs only at its first shell command.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rho_domain.lazy_names import lazy_names

if TYPE_CHECKING:
    from rho_domain.shell.plan import ChangeDir, PipelineStep, ShellPlan, plan_command
    from rho_domain.shell.programs import PROGRAMS, check_argv, harden_argv

_HOMES = {
    "ChangeDir": "rho_domain.shell.plan",
    "PipelineStep": "rho_domain.shell.plan",
    "ShellPlan": "rho_domain.shell.plan",
    "plan_command": "rho_domain.shell.plan",
    "PROGRAMS": "rho_domain.shell.programs",
    "check_argv": "rho_domain.shell.programs",
    "harden_argv": "rho_domain.shell.programs",
}

__all__ = [
    "PROGRAMS",
    "ChangeDir",
    "PipelineStep",
    "ShellPlan",
    "check_argv",
    "harden_argv",
    "plan_command",
]


__getattr__ = lazy_names(__name__, _HOMES)


def __dir__() -> list[str]:
    return sorted([*globals(), *_HOMES])
