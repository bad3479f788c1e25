"""The restricted shell: parse a bash command line, validate it, plan argvs to run without a shell.

``plan_command(text)`` returns a ``ShellPlan`` or raises ``CommandRefused`` with the reason.
``check_argv``/``harden_argv`` validate and harden one argv (the executor re-applies them).
"""

from rho_domain.shell.plan import ChangeDir, PipelineStep, ShellPlan, plan_command
from rho_domain.shell.programs import PROGRAMS, check_argv, harden_argv

__all__ = [
    "PROGRAMS",
    "ChangeDir",
    "PipelineStep",
    "ShellPlan",
    "check_argv",
    "harden_argv",
    "plan_command",
]
