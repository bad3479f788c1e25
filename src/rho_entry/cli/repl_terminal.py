"""The REPL's terminal: readline's line editing and history (kept in the config directory),
and the signals that end it: SIGTERM and SIGHUP (the window closed, ssh dropped) raise
``Ended`` outside a turn, so the REPL leaves the way ``/exit`` does (the session closed, the
history saved), unless the process ignores them (``nohup``).
"""

from __future__ import annotations

import contextlib
import signal
from pathlib import Path
from typing import Any

from rho_entry.cli import exit_codes


class Ended(BaseException):
    """SIGTERM or SIGHUP reached the REPL: it leaves. A BaseException, so that no
    ``except Exception`` of a command keeps the REPL on a terminal that is gone."""


def leave_on_signals() -> dict[int, Any]:
    """SIGTERM and SIGHUP raise ``Ended`` from here on (outside a turn, whose own handlers
    cancel it: ``interrupts.interruptible``), unless the process ignores them (``nohup``);
    returns the handlers to put back. Only the main thread can set handlers: a REPL run
    elsewhere (``main([...])`` in a thread) keeps the process's."""
    saved: dict[int, Any] = {}
    for signum in exit_codes.ending_signals():  # SIGQUIT, SIGUSR1, ... as SIGTERM
        before = signal.getsignal(signum)
        if before is signal.SIG_IGN or before is None:
            continue
        with contextlib.suppress(ValueError):
            signal.signal(signum, _end)
            saved[signum] = before
    return saved


def _end(signum: int, frame: object) -> None:
    exit_codes.heard(signum)  # the REPL exits 128 + signum
    raise Ended(signum)


def setup_readline(path: Path) -> Any:
    """Readline with the history kept at ``path`` (2,000 lines) read in, for
    ``save_history``; None where Python has no readline (plain ``input()`` still works)."""
    try:
        import readline
    except ImportError:  # not on every platform: plain input() still works
        return None
    readline.set_history_length(2000)
    with contextlib.suppress(OSError):
        readline.read_history_file(path)
    return (readline, path)


def save_history(history: Any) -> None:
    """Write ``setup_readline``'s history back to its file (a failure to is left silent)."""
    readline, path = history
    with contextlib.suppress(OSError):
        path.parent.mkdir(parents=True, exist_ok=True)
        readline.write_history_file(path)
