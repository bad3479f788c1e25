"""What a run listens to while it runs: Ctrl+C, SIGTERM, SIGHUP and every other signal whose
default ends the process cancel the session's run (``interruptible``), shared by the one-shot
run, its close and the REPL's turns."""

from __future__ import annotations

import asyncio
import contextlib
import signal
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from rho_entry import stop_signals
from rho_entry.cli import exit_codes

if TYPE_CHECKING:
    from rho_entry.facade import Session


def interruptible(
    session: Session, notice: Callable[[str], None]
) -> contextlib.AbstractContextManager[Interrupts]:
    """While inside: Ctrl+C, SIGTERM, the terminal hanging up (SIGHUP) or any other signal
    whose default ends the process (``exit_codes.ending_signals``: SIGQUIT, SIGUSR1, ...)
    cancels the session's run (the running tool is killed and the run ends ``cancelled`` in
    the trace, so ``--resume`` continues it); a second one force-stops it. A SIGTERM or
    SIGHUP the process ignores (``nohup``, a supervisor's choice) stays ignored, and their
    handlers from before are put back after (asyncio's would leave the default: SIGTERM then
    killed a REPL at its prompt). Ctrl+C is left as asyncio leaves it, Python's
    ``KeyboardInterrupt``: the one ``asyncio.run`` had set would cancel what follows the run
    (its output, the close). What it heard is on the ``Interrupts`` it gives (``ending``)."""
    return Interrupts(session, notice)


class Interrupts(contextlib.AbstractContextManager["Interrupts"]):
    """The signals ``interruptible`` listens to; ``ending``: the SIGTERM, SIGHUP or other
    ending signal heard (None: none), which ends a REPL after its turn instead of only the
    turn. Those ``main`` gave ``interrupt_at_start`` keep it: it hands them to the run
    (``stop_signals.listen``), sparing a ``signal.signal`` each way."""

    def __init__(self, session: Session, notice: Callable[[str], None]) -> None:
        self.session = session
        self.notice = notice
        self.count = 0
        self.ending: signal.Signals | None = None
        self.task = asyncio.current_task()
        self._saved: dict[int, Any] = {}
        self._heard_by: Callable[[int, object], None] | None = None

    def _handle(self, signum: int) -> None:
        self.count += 1
        exit_codes.heard(signum)  # a cancelled run exits 128 + the first one's number
        if signum != signal.SIGINT:
            # a real-time signal has no Signals member: it ends as SIGTERM does
            self.ending = signal.Signals(signum) if signum in _NAMED else signal.SIGTERM
        if self.count == 1:
            self.notice(_NOTICES.get(signum) or f"{_name(signum)} received: cancelling…")
            self.session.cancel()
        elif self.task is not None:
            self.task.cancel()

    def __enter__(self) -> Interrupts:
        try:
            self._take()
        except BaseException:
            self.__exit__(None, None, None)  # what was taken goes back: no listener left
            raise
        return self

    def _take(self) -> None:
        with contextlib.suppress(NotImplementedError, RuntimeError):  # no signals: Windows
            loop = asyncio.get_running_loop()
            self._heard_by = self._from_signal(loop)
            stop_signals.listen(self._heard_by)
            for signum in (signal.SIGINT, *exit_codes.ending_signals()):
                before = signal.getsignal(signum)
                if signum != signal.SIGINT and before in (signal.SIG_IGN, None):
                    continue  # ignored (nohup), or set outside Python: not ours to take
                self._saved[signum] = before
                if signum == signal.SIGINT:
                    loop.add_signal_handler(signum, self._handle, signum)
                else:
                    # Not asyncio's handler (its add and remove check signal.valid_signals,
                    # ~0.75 M instructions a call): a Python handler runs between bytecodes and
                    # the wakeup fd set for SIGINT wakes the loop; interrupted calls restart.
                    if before is not exit_codes.interrupt_at_start:
                        signal.signal(signum, self._heard_by)
                    signal.siginterrupt(signum, False)

    def _from_signal(self, loop: asyncio.AbstractEventLoop) -> Callable[[int, object], None]:
        def handler(signum: int, frame: object) -> None:
            del frame
            loop.call_soon_threadsafe(self._handle, signum)

        return handler

    def __exit__(self, *exc_info: object) -> None:
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop = asyncio.get_running_loop()
            for signum, before in self._saved.items():
                if signum == signal.SIGINT:
                    loop.remove_signal_handler(signum)
                elif before is exit_codes.interrupt_at_start:
                    signal.siginterrupt(signum, True)  # as main's signal.signal left it
                else:
                    signal.signal(signum, before)
        if self._heard_by is not None:
            stop_signals.unlisten(self._heard_by)


# SIGTERM (a service manager, `kill`, a container stopping) ends a run like Ctrl+C, and so
# does SIGHUP (the terminal closed, an ssh connection dropped) and every other signal whose
# default ends the process (exit_codes.ending_signals: SIGQUIT, SIGUSR1, ...). Their default
# killed the process mid-run: no run_end in the trace, the lock and a "running" meta left, no
# --json result, a REPL's history lost.
_NAMED = frozenset(int(s) for s in signal.Signals)


def _name(signum: int) -> str:
    if signum in _NAMED:
        return signal.Signals(signum).name
    return f"SIGRTMIN+{signum - signal.SIGRTMIN}"  # as kill -l names it


_NOTICES: dict[int, str] = {
    signal.SIGINT: "cancelling… (Ctrl+C to stop at once)",
    signal.SIGTERM: "cancelling… (another SIGTERM to stop at once)",
    signal.SIGHUP: "the terminal hung up (SIGHUP): cancelling…",
}
