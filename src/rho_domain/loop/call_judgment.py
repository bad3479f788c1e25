"""One call of a batch judged: its policy, as the session's earlier writes change it, decided.

``ToolBatch.run`` asks ``judge`` about each call it runs one by one, after binding the call to
the tool's shown shape (``tool_refresh.bind_to_shown``), so ``State.always_allowed`` is already
the one for that shape. An unrestricted bash line that may run what earlier calls of the
session wrote (``State.unreviewed_writes``; ``shell.destructive_session``) is destructive: it
asks even after "always" (a ``write`` of ``Makefile``, then ``make``). Those writes are read
only where an answer can be asked for: under an approval mode of none, or with
``auto_approve``, nobody is asked, and an eval's long run would re-read every earlier writing
call at each bash call for a decision that allows it anyway.

Contract: ``judge(agent, state, ready) -> Decision``; pure (reads, never changes, ``state``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import attrs

from rho_domain.approval import decide
from rho_domain.permissions import ApprovalMode

if TYPE_CHECKING:
    from rho_domain.agent import Agent
    from rho_domain.approval import Decision
    from rho_domain.messages import ToolCall
    from rho_domain.state import State
    from rho_domain.tools.base import ToolPolicy
    from rho_domain.tools.prepared import PreparedCall


def judge(agent: Agent, state: State, ready: PreparedCall) -> Decision:
    """The decision on ``ready`` (allowed, asks, or denied) under ``agent``'s profile and
    what ``state`` holds: "always" answers and the writes nobody reviewed."""
    call, policy = ready.call, ready.policy
    if call.name == "bash" and policy and policy.dangerous and not policy.destructive:
        policy = _after_writes(call, policy, _unreviewed_writes(agent, state))
    return decide(
        agent.profile,
        call,
        policy,
        auto_approve=agent.config.auto_approve,
        always_allowed=state.always_allowed,
        decoded=ready.decoded,
    )


def _unreviewed_writes(agent: Agent, state: State) -> Sequence[ToolCall]:
    """The earlier calls a bash line may run the writes of, where an answer can be asked
    for: none when nobody is asked."""
    asks = agent.profile.approval is not ApprovalMode.NONE
    return state.unreviewed_writes if asks and not agent.config.auto_approve else ()


def _after_writes(call: ToolCall, policy: ToolPolicy, earlier: Sequence[ToolCall]) -> ToolPolicy:
    """``policy`` of an unrestricted bash ``call``, destructive when the line may run what
    ``earlier`` calls wrote (``shell.destructive_session``)."""
    if not earlier:
        return policy
    # the session's writes are read with the first line after one, not by every run
    from rho_domain.shell.destructive_session import after_writes

    reason = after_writes(call, earlier)
    return attrs.evolve(policy, destructive=reason) if reason else policy
