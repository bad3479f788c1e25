"""``session.approval_callback``: the seeds' way to answer approvals, as an ``Approver``.

A callback takes the tool name and its parsed arguments and returns the decision, sync or
async::

    async def ask_slack(tool_name: str, args: Mapping[str, Any]) -> bool: ...

    session.approval_callback = ask_slack

It returns ``True``/``False`` or an ``ApprovalAnswer`` (to approve ``always``; anything else,
a text such as ``"n"`` included, rejects the call), or raises
``ApprovalInterrupt`` to leave the call pending: the run then ends ``awaiting_approval`` and
the answer comes later, out of band (``session.resolve_approval`` or ``handle.approve``).
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from rho_domain.errors import ConfigError
from rho_domain.ports.approver import ApprovalAnswer, ApprovalRequest, Approver

log = logging.getLogger(__name__)

ApprovalCallback = Callable[
    [str, Mapping[str, Any]],
    "bool | ApprovalAnswer | Awaitable[bool | ApprovalAnswer]",
]


class CallbackApprover(Approver):
    """An ``Approver`` that asks a plain callable (see the module docstring)."""

    def __init__(self, callback: ApprovalCallback) -> None:
        if not callable(callback):
            raise ConfigError(
                f"approval_callback must be a callable (tool_name, args) -> bool, "
                f"got {type(callback).__name__}"
            )
        self.callback = callback
        self.__wrapped__ = callback  # named by it in errors (``plugged.plugged_name``)

    async def decide(self, request: ApprovalRequest) -> ApprovalAnswer:
        """Call the callback; True approves this call only, False rejects it. Anything else
        (``"n"`` passed on from ``input()``, a forgotten ``return``'s None) is no approval:
        the call is rejected, with a warning naming what was returned when it was not None."""
        returned = self.callback(request.call.name, request.arguments)
        # typed bool, but a callback returns what it returns: judged as any object
        outcome: object = await returned if inspect.isawaitable(returned) else returned
        if isinstance(outcome, ApprovalAnswer):
            return outcome
        if outcome is not None and not isinstance(outcome, bool):
            log.warning(
                "approval_callback returned %r for %s, not True or False: the call is "
                "rejected (return True to approve it)",
                outcome,
                request.call.name,
            )
        return ApprovalAnswer(approved=outcome is True)
