"""Exit codes of ``rho-agent``: a script can tell every outcome apart.

A run cancelled by a signal exits ``128 + the signal's number``, the shells' convention for a
process a signal ended (bash's ``$?``, what Kubernetes reports as a container's exit code,
what a JVM or puma exits with on SIGTERM): 130 for Ctrl+C (SIGINT), 143 for SIGTERM, 129
for SIGHUP. Before, every signal exited 130, so a script, a CI runner or a service manager
could not tell ``kill`` or a container's stop from Ctrl+C. A cancel without a signal (``rho-agent
monitor cancel``, Ctrl+C before the run listened) is 130. The first stop signal a command
heard decides (``heard``); ``main`` forgets them when it starts (``forget``).

Standard library only (imported by the parser for ``--help``).
"""

from __future__ import annotations

# the signals' side lives below the CLI and the server (rho_entry.stop_signals): re-exported
from rho_entry.stop_signals import SIGNALLED as SIGNALLED
from rho_entry.stop_signals import ending_signals as ending_signals
from rho_entry.stop_signals import first_heard
from rho_entry.stop_signals import forget as forget
from rho_entry.stop_signals import heard as heard
from rho_entry.stop_signals import interrupt_at_start as interrupt_at_start

OK = 0  # the run completed
USAGE = 1  # bad flag, config, profile, template, output file or stdout; or an internal error
MODEL = 2  # the model endpoint failed (connection, status, stream), or no sandbox could be made
LIMIT = 3  # max turns or budget reached before an answer
APPROVAL = 4  # stopped: a tool call waits for approval (no one could be asked)
REJECTED = 5  # stopped: the user rejected a tool call; the model has not answered since
STUCK = 6  # stopped: the model repeated the same tool call after being told (--repeat-limit)
CANCELLED = 130  # Ctrl+C (SIGINT), a cancel from the monitor; by a signal: 128 + its number


def cancelled() -> int:
    """The exit code of a cancelled command: 128 + the first stop signal it heard (143
    SIGTERM, 129 SIGHUP, 130 SIGINT), else ``CANCELLED``."""
    first = first_heard()
    return CANCELLED if first is None else SIGNALLED + first


EXIT_CODES_HELP = """\
  0    completed
  1    usage or configuration error (bad flag, config, profile, template, output file),
       or standard output could not be written (closed, disk full)
  2    model or endpoint error (connection, authentication, HTTP status, broken stream),
       or a Daytona sandbox that could not be made (every tool call failed)
  3    limit reached: --max-turns or the budget
  4    awaiting approval: a tool call needs approval and nobody could be asked
       (no terminal, or --json); answer with --resume ID --approve CALL@DIGEST|all
       or --deny CALL|all
  5    stopped after a rejection: you rejected a tool call (--deny, or "no" on the
       terminal) and the model has not answered since; say what to do instead with
       --resume ID "..."
  6    stuck: the model repeated the same tool call (or the same failing call)
       --repeat-limit times in a row, was told, and repeated it again
  130  cancelled (Ctrl+C, or `rho-agent monitor cancel`)
  143  cancelled by SIGTERM (kill, a service manager, a container stopping)
  129  cancelled by SIGHUP (the terminal closing)
  128+N  cancelled by another signal N whose default ends a process (131 SIGQUIT,
       138 SIGUSR1, 140 SIGUSR2, 142 SIGALRM, ...)"""

_BY_STATUS = {
    "completed": OK,
    "max_turns": LIMIT,
    "budget_exceeded": LIMIT,
    "awaiting_approval": APPROVAL,
    "stuck": STUCK,
}


def exit_code(status: str, *, model_error: bool = False) -> int:
    """The exit code of a run that ended with ``status`` (a RunStatus value)."""
    if status == "error":
        return MODEL if model_error else USAGE
    if status == "cancelled":
        return cancelled()
    return _BY_STATUS.get(status, USAGE)


def is_model_error(error_type: str | None) -> bool:
    """True when ``error_type`` (a class name from RunResult) is an endpoint's failure: a
    ModelError subclass, or a PlacementFailed one (the sandbox the tools needed could not be
    made: the README's exit code 2)."""
    if not error_type:
        return False
    from rho_domain.errors import ModelError, PlacementFailed

    pending: list[type[BaseException]] = [ModelError, PlacementFailed]
    while pending:
        cls = pending.pop()
        if cls.__name__ == error_type:
            return True
        pending.extend(cls.__subclasses__())
    return False
