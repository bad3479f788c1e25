"""The user's synchronous code run in a daemon thread of its own (``in_own_thread``): a sync
hook, or a sync tool of the design documents' API.

Called on the event loop, such code that blocked (``time.sleep``, ``requests.get``, a lock)
held everything that loop runs: ``cancel()``, the tool's timeout, the run's time budget, the
process's other sessions. In a thread of its own it holds none of them; past its deadline
(the caller's: ``asyncio.timeout``, ``RunControl.race``) it is abandoned, and being a daemon
it neither starves a shared pool (``asyncio.to_thread``'s, which the registry and the
adapters need) nor keeps the process from exiting.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Callable
from typing import TypeVar

from rho_domain.plugged import described

_T = TypeVar("_T")


async def in_own_thread(work: Callable[[], _T], name: str) -> _T:
    """``work()`` in a daemon thread named ``name``: its value, or what it raised (a
    ``SystemExit`` or another ``BaseException`` of its own as a ``RuntimeError`` naming it:
    in a thread it is the code's failure, not the process's). Cancelling the await abandons
    the thread, which runs on to its end unheard."""
    loop = asyncio.get_running_loop()
    done: asyncio.Future[_T] = loop.create_future()

    def settle(outcome: object, failed: bool) -> None:
        if done.done():  # the deadline passed: nobody waits for it any more
            return
        if failed:
            done.set_exception(outcome)  # type: ignore[arg-type]
        else:
            done.set_result(outcome)  # type: ignore[arg-type]

    def run() -> None:
        outcome: object
        try:
            outcome, failed = work(), False
        except BaseException as exc:  # noqa: BLE001 - handed to the waiting task
            # a future cannot carry StopIteration, and a SystemExit in the thread is the
            # code's failure, not the process's
            plain = isinstance(exc, Exception) and not isinstance(exc, StopIteration)
            outcome, failed = (exc if plain else RuntimeError(described(exc))), True
        with contextlib.suppress(RuntimeError):  # the loop closed meanwhile
            loop.call_soon_threadsafe(settle, outcome, failed)

    threading.Thread(target=run, name=name, daemon=True).start()
    return await done
