"""Calling one hook, for ``hooks_applied``: under the hooks' deadline, an async hook awaited,
a sync one in a daemon thread of its own (``own_thread.in_own_thread``: abandoned past the
deadline), and any failure of the user's code, a ``SystemExit`` in its thread included,
answered as a ``HookFailure`` rather than raised: the caller decides what a failure refuses.
"""

from __future__ import annotations

import asyncio
import inspect
from typing import Any

from rho_domain.own_thread import in_own_thread
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
            answer = await in_own_thread(lambda: hook(value), f"rho-hook {plugged_name(hook)}")
            return await contained(answer, by) if inspect.isawaitable(answer) else answer
    except Exception as exc:  # noqa: BLE001 - the user's code: any failure fails closed
        from rho_domain.hooks.values import HookFailure

        if isinstance(exc, TimeoutError) and scope.expired():
            return HookFailure("timed_out", f"no answer within {deadline:g} s")
        return HookFailure("failed", described(exc))
