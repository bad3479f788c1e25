"""Exit codes of ``rho-agent``: a script can tell every outcome apart.

Standard library only (imported by the parser for ``--help``).
"""

from __future__ import annotations

OK = 0  # the run completed
USAGE = 1  # bad flag, config, profile, template, output file or stdout; or an internal error
MODEL = 2  # the model endpoint failed (connection, HTTP status, broken stream)
LIMIT = 3  # max turns or budget reached before an answer
APPROVAL = 4  # stopped: a tool call waits for approval (no one could be asked)
REJECTED = 5  # stopped: the user rejected a tool call; the model has not answered since
STUCK = 6  # stopped: the model repeated the same tool call after being told (--repeat-limit)
CANCELLED = 130  # Ctrl+C, SIGTERM, the terminal closing (SIGHUP), a cancel from the monitor

EXIT_CODES_HELP = """\
  0    completed
  1    usage or configuration error (bad flag, config, profile, template, output file),
       or standard output could not be written (closed, disk full)
  2    model or endpoint error (connection, authentication, HTTP status, broken stream)
  3    limit reached: --max-turns or the budget
  4    awaiting approval: a tool call needs approval and nobody could be asked
       (no terminal, or --json); answer with --resume ID --approve CALL@DIGEST|all
       or --deny CALL|all
  5    stopped after a rejection: you rejected a tool call (--deny, or "no" on the
       terminal) and the model has not answered since; say what to do instead with
       --resume ID "..."
  6    stuck: the model repeated the same tool call (or the same failing call)
       --repeat-limit times in a row, was told, and repeated it again
  130  cancelled (Ctrl+C, SIGTERM, the terminal closing, or `rho-agent monitor
       cancel`)"""

_BY_STATUS = {
    "completed": OK,
    "max_turns": LIMIT,
    "budget_exceeded": LIMIT,
    "awaiting_approval": APPROVAL,
    "stuck": STUCK,
    "cancelled": CANCELLED,
}


def exit_code(status: str, *, model_error: bool = False) -> int:
    """The exit code of a run that ended with ``status`` (a RunStatus value)."""
    if status == "error":
        return MODEL if model_error else USAGE
    return _BY_STATUS.get(status, USAGE)


def is_model_error(error_type: str | None) -> bool:
    """True when ``error_type`` (a class name from RunResult) is a ModelError subclass."""
    if not error_type:
        return False
    from rho_domain.errors import ModelError

    pending: list[type[BaseException]] = [ModelError]
    while pending:
        cls = pending.pop()
        if cls.__name__ == error_type:
            return True
        pending.extend(cls.__subclasses__())
    return False
