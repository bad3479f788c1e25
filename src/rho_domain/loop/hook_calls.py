"""Calling one hook, for ``hooks_applied``: under the hooks' deadline, an async hook awaited,
a sync one in a daemon thread of its own (abandoned past the deadline), and any failure of the
user's code, a ``SystemExit`` in its thread included, answered as a ``HookFailure`` rather
than raised: the caller decides what a failure refuses.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import threading
from typing import Any

from rho_domain.plugged import contained, described, plugged_name


async def ask_hook(hook: Any, value: object, deadline: float) -> object:
    """``hook(value)`` under ``deadline`` seconds: its answer, or a ``HookFailure`` (``timed_out``
    past the deadline, ``failed`` for any exception). Only the caller's cancellation
    propagates."""
    scope, by = asyncio.timeout(deadline), f"the hook {plugged_name(hook)}"
    try:
        async with scope:
            if inspect.iscoroutinefunction(hook) or inspect.iscoroutinefunction(
                getattr(hook, "__call__", None)  # noqa: B004 - an async callable object
            ):
                return await contained(hook(value), by)
            answer = await _in_own_thread(hook, value)
            return await contained(answer, by) if inspect.isawaitable(answer) else answer
    except Exception as exc:  # noqa: BLE001 - the user's code: any failure fails closed
        from rho_domain.hooks.values import HookFailure

        if isinstance(exc, TimeoutError) and scope.expired():
            return HookFailure("timed_out", f"no answer within {deadline:g} s")
        return HookFailure("failed", described(exc))


async def _in_own_thread(hook: Any, value: object) -> object:
    """``hook(value)`` in a daemon thread of its own, so a sync hook that blocks holds neither
    the event loop nor a worker of the shared pool (``asyncio.to_thread``'s, which the
    registry and the adapters need): past the deadline it is abandoned, and a hung one cannot
    starve the others or keep the process from exiting."""
    loop = asyncio.get_running_loop()
    done: asyncio.Future[object] = loop.create_future()

    def settle(outcome: object, failed: bool) -> None:
        if done.done():  # the deadline passed: nobody waits for it any more
            return
        if failed:
            done.set_exception(outcome)  # type: ignore[arg-type]
        else:
            done.set_result(outcome)

    def work() -> None:
        try:
            outcome, failed = hook(value), False
        except BaseException as exc:  # noqa: BLE001 - handed to the waiting task
            # a future cannot carry StopIteration, and a SystemExit in a hook's thread is
            # the hook's failure, not the process's
            plain = isinstance(exc, Exception) and not isinstance(exc, StopIteration)
            outcome, failed = (exc if plain else RuntimeError(described(exc))), True
        with contextlib.suppress(RuntimeError):  # the loop closed meanwhile
            loop.call_soon_threadsafe(settle, outcome, failed)

    threading.Thread(target=work, name=f"rho-hook {plugged_name(hook)}", daemon=True).start()
    return await done
