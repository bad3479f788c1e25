"""The budget gate: once a session's context is near full, tell the agent to wrap up.

After a tool round, when the last model call's input tokens reached ``window x threshold``,
the next model call gets one more user message: commit, write the handoff, stop. It is a
``before_model`` hook (``rho_domain.hooks``), fed the last call's usage by the session's event
listener (``observe``); no second loop runs beside the session's own. As in the reference it
is said again after every later tool round while the context stays above the line.
"""

from __future__ import annotations

import attrs

from rho_domain.events import Event
from rho_domain.hooks.values import BeforeModelCall, ReplaceMessages
from rho_domain.messages import ToolResultMessage, UserMessage
from rho_domain.model_events import UsageRecorded
from rho_domain.value_methods import value_eq, value_repr

WRAP_UP = (
    "Your context budget is nearly used up. Stop starting new work: commit what you have, "
    "then end your answer with a line `HANDOFF: <short-slug>` followed by the handoff "
    "document for the next session (what is done, what is left, what to watch out for)."
)


@attrs.define
class BudgetGate:
    """A session's budget gate. ``window`` tokens, ``threshold`` a fraction in (0, 1]."""

    __repr__ = value_repr
    __eq__ = value_eq

    window: int
    threshold: float
    _last_input: int = attrs.field(default=0, init=False)

    @property
    def limit(self) -> int:
        """Input tokens from which the agent is told to wrap up."""
        return int(self.window * self.threshold)

    def observe(self, event: Event) -> None:
        """Keep the input tokens of the last model call (a session listener)."""
        if isinstance(event, UsageRecorded):
            self._last_input = event.usage.input_tokens

    async def __call__(self, call: BeforeModelCall) -> ReplaceMessages | None:
        """The history with ``WRAP_UP`` added when a tool round just ended above the limit.
        Async although it awaits nothing: a sync hook gets a thread of its own per call."""
        after_tools = bool(call.messages) and isinstance(call.messages[-1], ToolResultMessage)
        if not after_tools or self._last_input < self.limit:
            return None
        return ReplaceMessages((*call.messages, UserMessage(content=WRAP_UP, origin="nudge")))
