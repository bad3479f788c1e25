"""What a one-shot does once its run is over: the session closed, a failure of the close
said in the run's result, and the answer written where ``--output`` names.

A close that failed (the run's end not written: ``ulimit -f`` reached, a store gone) was
raised out of the one-shot: stderr said it, and ``--json`` printed no ``result`` line at all,
the run's status and answer included. It is now the result's ``error``, as a service's handle
says it (``runtime.handle_values.unclosed_result``), and the exit code is not 0.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from rho_domain.errors import RhoError
from rho_domain.run import RunResult, RunStatus
from rho_entry.cli import exit_codes
from rho_entry.cli.interrupts import interruptible
from rho_entry.cli.render import TerminalRenderer

if TYPE_CHECKING:
    from rho_entry.cli.json_render import JsonRenderer
    from rho_entry.session import Session


async def close_after(
    session: Session, ran: RunResult | None, notice: Callable[[str], None]
) -> RunResult | None:
    """Close ``session``; ``ran``: its run's result, None when the run raised (a failed
    close then raises, as the run's failure goes on). Returns ``ran`` with the close's
    failure in its ``error``, or None when the close did not fail."""
    # heard, not raised: interrupt_at_start's KeyboardInterrupt cut the close of a run
    # that had ended short, and said 'cancelled' (143) of a completed one
    with interruptible(session, notice):
        try:
            await session.close()
        except RhoError as exc:
            if ran is None:
                raise
            # loaded only then: a one-shot imports no module it does not use
            from rho_entry.runtime.handle_values import unclosed_result

            return unclosed_result(ran, exc)
    return None


def said_unclosed(result: RunResult, code: int, renderer: TerminalRenderer | JsonRenderer) -> int:
    """Say on a terminal that the session of ``result``, a completed run, failed to close
    (a run that stopped says its error with why it stopped; ``--json``'s result carries it),
    and return the exit code: ``code``, or 1 for a run that would have exited 0 (its end was
    not stored)."""
    if isinstance(renderer, TerminalRenderer) and result.status is RunStatus.COMPLETED:
        renderer.notice(f"{result.error}", "red")
    return code or exit_codes.USAGE


def write_output(path: Path, text: str, renderer: TerminalRenderer | JsonRenderer) -> int:
    """Write the answer ``text`` to ``--output``'s ``path`` whole; 0, or the exit code of a
    write that failed or was cancelled (said as a notice)."""
    try:
        from rho_adapters.unnamed import write_whole  # a failed write leaves no half answer

        write_whole(path, (text if text.endswith("\n") else text + "\n").encode())
    except OSError as exc:
        renderer.notice(f"could not write --output {path}: {exc.strerror}", "red")
        return exit_codes.USAGE
    except KeyboardInterrupt:  # Ctrl+C or SIGTERM while it waits (a FIFO, a full NFS mount)
        renderer.notice(f"--output {path} not written: cancelled (the session has the answer)")
        return exit_codes.cancelled()
    if isinstance(renderer, TerminalRenderer) and not renderer.quiet:
        renderer.notice(f"answer written to {path}", "dim")
    return 0
