"""One call of a batch judged: its policy, as the session's earlier writes change it, decided.

``ToolBatch.run`` asks ``judge`` about each call it runs one by one, after binding the call to
the tool's shown shape (``tool_refresh.bind_to_shown``), so ``State.always_allowed`` is already
the one for that shape. An unrestricted bash line that may run what earlier calls of the
session wrote (``State.unreviewed_writes``; ``shell.destructive_session``) is destructive: it
asks even after "always" (a ``write`` of ``Makefile``, then ``make``). Those writes are read
only where an answer can be asked for: under an approval mode of none, or with
``auto_approve``, nobody is asked, and an eval's long run would re-read every earlier writing
call at each bash call for a decision that allows it anyway.

Contract: ``judge(agent, state, ready) -> (Decision, reviews)``: ``reviews``, the ids of the
earlier calls whose every file the question lists (an approval of it reviews those, never
by its reason's text); pure (reads, never changes, ``state``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import attrs

from rho_domain.approval import decide
from rho_domain.earlier_writes import WRITING_TOOLS
from rho_domain.permissions import ApprovalMode

if TYPE_CHECKING:
    from rho_domain.agent import Agent
    from rho_domain.approval import Decision
    from rho_domain.messages import ToolCall
    from rho_domain.state import State
    from rho_domain.tools.base import ToolPolicy
    from rho_domain.tools.prepared import PreparedCall


def judge(agent: Agent, state: State, ready: PreparedCall) -> tuple[Decision, tuple[str, ...]]:
    """The decision on ``ready`` (allowed, asks, or denied) under ``agent``'s profile and
    what ``state`` holds: "always" answers and the writes nobody reviewed; with the ids of
    the earlier calls a question about them lists."""
    call, policy = ready.call, ready.policy
    reviews: tuple[str, ...] = ()
    if call.name == "bash" and policy and policy.dangerous and not policy.destructive:
        policy, reviews = _after_writes(call, policy, _unreviewed_writes(agent, state))
    decision = decide(
        agent.profile,
        call,
        policy,
        auto_approve=agent.config.auto_approve,
        always_allowed=state.always_allowed,
        decoded=ready.decoded,
    )
    return decision, reviews


def _unreviewed_writes(agent: Agent, state: State) -> Sequence[ToolCall]:
    """The earlier calls a bash line may run the writes of, where an answer can be asked
    for: none when nobody is asked. A tool that shows no file it wrote counts, unless it is
    read-only now (an MCP server's ``read_only_tools``); gone from the registry, it counts."""
    if agent.profile.approval is ApprovalMode.NONE or agent.config.auto_approve:
        return ()
    registry = agent.registry
    return [
        c
        for c in state.unreviewed_writes
        if c.name in WRITING_TOOLS
        or (policy := registry.policy_for(c)) is None
        or not policy.read_only
    ]


def _after_writes(
    call: ToolCall, policy: ToolPolicy, earlier: Sequence[ToolCall]
) -> tuple[ToolPolicy, tuple[str, ...]]:
    """``policy`` of an unrestricted bash ``call``, destructive when the line may run what
    ``earlier`` calls wrote (``shell.destructive_session``), and the ids of the earlier calls
    an approval of it reviews."""
    if not earlier:
        return policy, ()
    # the session's writes are read with the first line after one, not by every run
    from rho_domain.shell.destructive_session import after_writes

    reason, reviews = after_writes(call, earlier)
    return (attrs.evolve(policy, destructive=reason), reviews) if reason else (policy, ())
