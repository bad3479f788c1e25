"""The user's code plugged into the loop (a tool handler, a hook, an approver, an ``on_event``
listener): how it is named in events, logs and thread names, and how what it raises is kept
its own failure.

Such code raising ``SystemExit`` (``sys.exit``, argparse or click on bad arguments),
``GeneratorExit`` or another ``BaseException`` of its own was not caught where its
``Exception`` is: the run ended ``error`` with the call answered "cancelled by the user" and
the exception left ``Session.run``; raised by an approver, whose answer is awaited as a task
of its own, asyncio re-raised it out of the event loop, so ``asyncio.run`` (a script, ``rho-agent
serve``, a worker) ended there, every other session with it. ``contained`` and ``failure_of``
turn it into ``ExitRaised``; ``asyncio.CancelledError`` and ``KeyboardInterrupt`` (a second
Ctrl+C under ``asyncio.run``) still stop what runs.

What such code raises is told by ``described``, never by ``str(exc)`` alone: an exception
whose ``__str__`` raised (a bug of its own) made the formatting of its failure raise in turn,
inside the handler meant to contain it, and the run ended ``error`` with that second error
("ValueError: ..."), the tool's own name and type lost.
"""

from __future__ import annotations

from asyncio import CancelledError, current_task
from collections.abc import Awaitable, Callable, Mapping
from functools import partial
from typing import TypeVar

from rho_domain.errors import ExitRaised, RhoError

_T = TypeVar("_T")


def _unwrapped(plugged: object) -> object:
    """The user's own object behind ``plugged``: what a wrapper (``__wrapped__``: the approver
    made of an ``approval_callback``, a documents' tool made a domain one) or a
    ``functools.partial`` (``func``) holds, however deep."""
    for _ in range(100):  # a wrapper that wraps itself must not hang the naming
        if isinstance(plugged, partial):
            plugged = plugged.func
        elif (inner := getattr(plugged, "__wrapped__", None)) is not None:
            plugged = inner
        else:
            break
    return plugged


def plugged_name(plugged: object) -> str:
    """The name of a listener or hook in events and logs: ``module.qualname`` of a function,
    method or callable object, else its ``repr``. An object that wraps another is named by
    what it wraps (``_unwrapped``): a ``functools.partial`` was named "functools.partial"."""
    target = _unwrapped(plugged)
    target = getattr(target, "__func__", target)
    qualname = getattr(target, "__qualname__", None) or getattr(type(target), "__qualname__", None)
    module = getattr(target, "__module__", None)
    if qualname is None:
        return repr(plugged)
    return f"{module}.{qualname}" if module else str(qualname)


def member_name(plugged: object, member: str) -> str:
    """``Class.member`` of the user's code that reading or calling ``plugged.member`` runs: a
    wrapper of ours (``__wrapped__``) names the user's class and the member it reads for
    ``member`` (its ``wrapped_members``), so a documents' tool whose ``requires_approval``
    raised is "Deploy.requires_approval", not our "DocumentHandler.policy_for"."""
    members: Mapping[str, str] = getattr(plugged, "wrapped_members", {})
    if getattr(plugged, "__wrapped__", None) is not None:
        member = members.get(member, member)
    return f"{type(_unwrapped(plugged)).__name__}.{member}"


# What a failure's message may take of an event or a result: an exception's text can be any
# size (a whole response body), and the tool's result is cut later, its event and log not.
_MESSAGE_CHARS = 4000


def message_of(exc: BaseException) -> str:
    """``str(exc)``, never raising: a ``__str__`` that raises is said so, a message past
    4,000 characters is cut."""
    try:
        said = str(exc)
    except Exception as failure:  # noqa: BLE001 - the plugged code's bug, told, not raised
        return f"(its message could not be read: {type(failure).__name__} in __str__)"
    if len(said) > _MESSAGE_CHARS:
        return f"{said[:_MESSAGE_CHARS]}... ({len(said):,} characters in all)"
    return said


def described(exc: BaseException) -> str:
    """``Type: message`` of ``exc`` (``Type`` alone when it has none), as ``message_of``."""
    said = message_of(exc)
    return f"{type(exc).__name__}: {said}" if said else type(exc).__name__


def failure_of(
    exc: BaseException, by: str, error: Callable[[str], RhoError] = ExitRaised
) -> BaseException:
    """What ``exc``, raised by the plugged-in code ``by`` names, is to the loop: an
    ``Exception``, ``KeyboardInterrupt`` and a ``CancelledError`` while the task running it is
    being cancelled stay themselves; anything else becomes ``error`` (``ExitRaised``; a port's
    own failure for a port: ``StoreError`` for the store; raise it ``from exc``). A
    ``CancelledError`` nothing asked for (the code awaited a task or future that something
    else cancelled, or raised one itself) left ``Session.run`` as if its caller had been
    cancelled: ``asyncio.run`` ended there, with no result and no error."""
    if isinstance(exc, Exception | KeyboardInterrupt):
        return exc
    if isinstance(exc, CancelledError):
        if _cancelling():
            return exc
        return error(
            f"{by} raised CancelledError({message_of(exc)}) although nothing cancelled it (it "
            "awaited a task or future that was cancelled elsewhere, or raised it itself); "
            "raise an Exception to fail"
        )
    return error(
        f"{by} raised {type(exc).__name__}({message_of(exc)}), which would have ended the process; "
        "raise an Exception to fail (argparse and click raise SystemExit on bad arguments)"
    )


def _cancelling() -> bool:
    """True when the current task is being cancelled (or there is none to ask)."""
    try:
        task = current_task()
    except RuntimeError:  # no running loop: nothing to tell a cancel from
        return True
    return task is None or task.cancelling() > 0


async def contained(
    awaitable: Awaitable[_T],
    by: str | Callable[[], str],
    error: Callable[[str], RhoError] = ExitRaised,
) -> _T:
    """``await awaitable``, with what it raises passed through ``failure_of``. ``by`` may be
    a function giving the name: called only when something was raised (a store's name is
    worked out per flush otherwise, and only a failure says it)."""
    try:
        return await awaitable
    except BaseException as exc:
        failure = failure_of(exc, by if isinstance(by, str) else by(), error)
        if failure is exc:
            raise
        raise failure from exc
