"""The signals that end a process, which ``rho-agent``'s commands and services stop on.

A one-shot run, the REPL, ``eval`` and the CLI's start-up are cancelled by any of them and exit
128 + the first one's number (``rho_entry.cli.exit_codes``). A service (``rho-agent serve``,
``rho-agent worker``) stops on them as it does on SIGTERM, its runs cancelled and ended on disk:
exit 0 for its documented stops (SIGTERM, SIGINT, SIGHUP), 128 + the number for another.

Below the CLI and the server, which both use it; standard library only (imported by the
parser for ``--help``). The signals heard are process state: ``main`` forgets them when a
command starts.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
from collections.abc import Callable

__all__ = [
    "SIGNALLED",
    "end_as_returned",
    "ending_signals",
    "first_heard",
    "forget",
    "heard",
    "interrupt_at_start",
    "listen",
    "service_exit",
    "service_stops",
    "unlisten",
]

Handler = Callable[[int, object], None]

SIGNALLED = 128  # a process a signal ended exits this plus the signal's number

_heard: list[int] = []  # the stop signals this command heard, the first deciding
# Who hears a signal ``interrupt_at_start`` holds: the innermost run listening, else the exit
# ``end_as_returned`` decided. Handing a signal over here, not by ``signal.signal``, spares
# the enum conversions ``signal.signal`` and ``getsignal`` make of a function handler (two
# exceptions raised and caught, ~20 K instructions a call: ~220 calls a one-shot).
_listeners: list[Handler] = []
_ending: list[Handler] = []

# Every signal whose default ends the process and that a handler can catch, besides SIGINT
# (Python's KeyboardInterrupt): SIGQUIT, SIGUSR1 and the rest killed a run where it stood
# (exit 131, 138: no --json result, no run_end, the session "running" until stale). Left out:
# the faults (SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGTRAP, SIGSYS), which a Python
# handler cannot answer, and SIGPIPE and SIGXFSZ, which Python ignores (a failed write raises).
_ENDING_NAMES = (
    "SIGTERM",
    "SIGHUP",
    "SIGQUIT",
    "SIGUSR1",
    "SIGUSR2",
    "SIGALRM",
    "SIGVTALRM",
    "SIGPROF",
    "SIGXCPU",
    "SIGPOLL",
    "SIGPWR",
    "SIGSTKFLT",
)

_SERVICE_STOPS = ("SIGTERM", "SIGINT", "SIGHUP")  # a service's documented stops: exit 0


def heard(signum: int) -> None:
    """Record that the stop signal ``signum`` reached this command (a handler calls it)."""
    _heard.append(int(signum))


def forget() -> None:
    """Forget the signals heard and an earlier command's exit (``main`` starts each command
    with none)."""
    _heard.clear()
    _ending.clear()


def listen(handler: Handler) -> None:
    """Until ``unlisten(handler)``, an ending signal that reaches ``interrupt_at_start`` goes
    to ``handler`` instead (the innermost listener hears it): a run takes the signals
    ``main`` holds without replacing their handlers one by one."""
    _listeners.append(handler)


def unlisten(handler: Handler) -> None:
    """Stop ``listen(handler)``; the signals go back to what they did before."""
    _listeners.remove(handler)


def first_heard() -> int | None:
    """The first stop signal this command heard, or None."""
    return _heard[0] if _heard else None


def ending_signals() -> tuple[int, ...]:
    """The signals that end a command as SIGTERM does (cancelled, exit 128 + the signal's
    number), in this order, those this platform has; SIGTERM and SIGHUP first. Each handler
    that installs them leaves alone one the process ignores (``nohup``) or that someone else
    set (a profiler's SIGPROF): only the default, which killed the process, is replaced."""
    named = [getattr(signal, name, None) for name in _ENDING_NAMES]
    real_time = range(signal.SIGRTMIN, signal.SIGRTMAX + 1) if hasattr(signal, "SIGRTMIN") else ()
    return (*(int(s) for s in named if s is not None), *real_time)


def interrupt_at_start(signum: int, frame: object) -> None:
    """The handler ``main`` gives every ending signal until a command listens for them
    itself: the command is cancelled (``KeyboardInterrupt``), exit 128 + ``signum``. Only
    the first signal cancels; a later one is heard, not raised. While a run listens
    (``listen``) the signal is the run's; after ``end_as_returned``, the exit's. A storm of them (a
    supervisor's repeated SIGTERM, SIGHUP and SIGTERM from a closing shell) raised again
    into the cancellation's own handling and teardown: a second ``KeyboardInterrupt`` out of
    ``main``, 'lost sys.stderr' and exit 130 instead of 'rho-agent: cancelled' and 143."""
    if _listeners or _ending:
        (_listeners or _ending)[-1](signum, frame)
        return
    first = not _heard
    heard(signum)
    if first:
        raise KeyboardInterrupt


def service_stops() -> tuple[int, ...]:
    """The signals a service stops on as it does on SIGTERM: SIGINT, SIGTERM (always, as
    before) and every other ending signal, less those the process ignores (SIGHUP under
    ``nohup``) or someone else handles (a profiler's SIGPROF): of those, only the default
    and ``interrupt_at_start`` are replaced. Before, SIGQUIT or SIGUSR1 reached
    ``interrupt_at_start`` in the middle of a service: a traceback, the server's token file
    left on disk, the worker's run ended twice and its command left running."""
    ours = (signal.SIG_DFL, interrupt_at_start)
    always = (int(signal.SIGINT), int(signal.SIGTERM))
    others = (s for s in ending_signals() if s not in always)
    return (*always, *(s for s in others if signal.getsignal(s) in ours))


def service_exit(signum: int | None) -> int:
    """The exit code of a service a signal stopped (``None``: none did): 0 for its documented
    stops (SIGTERM, SIGINT, SIGHUP), 128 + ``signum`` for another (131 SIGQUIT, 138
    SIGUSR1), so a supervisor can tell a stop it asked for from one it did not."""
    if signum is None or signal.Signals(signum).name in _SERVICE_STOPS:
        return 0
    return SIGNALLED + signum


def end_as_returned(code: int) -> None:
    """After a command's process decided its exit ``code`` (``main`` returned it to the
    console script): each ending signal and SIGINT still ours (the default,
    ``interrupt_at_start``, Python's ``KeyboardInterrupt``) ends the process at once with
    ``code``, its standard streams flushed. Before, one landing between ``main``'s return and
    the interpreter's exit raised ``KeyboardInterrupt`` there: a traceback after a completed
    run, exit 130 for its 0. Its work was done and closed on disk; only the exit said
    otherwise. One left ignored (``nohup``) or someone else's stays as it is; the
    interpreter's last teardown step, after it restores the defaults, is not covered."""
    ours = (signal.SIG_DFL, signal.default_int_handler, interrupt_at_start)

    def handler(signum: int, frame: object) -> None:
        del signum, frame
        for stream in (sys.stdout, sys.stderr):
            # closed, a full disk, a write it interrupted: the exit still holds
            with contextlib.suppress(OSError, ValueError, RuntimeError, AttributeError):
                stream.flush()
        os._exit(code)

    _ending.append(handler)  # the signals interrupt_at_start holds: it hands them over
    for signum in (int(signal.SIGINT), *ending_signals()):
        held = signal.getsignal(signum)
        if held in ours and held is not interrupt_at_start:
            signal.signal(signum, handler)
