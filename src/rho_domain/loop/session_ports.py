"""SessionPorts: everything a session talks to, as one frozen value; RunContext: what the
loop's collaborators share of one session.

A session is built from an agent (what to do) and its ports (where to do it). The bundle is
what a session hands on: a child of ``delegate`` and a fork run on their parent's ports, and the
entry layer's wiring fills the ports a caller did not give into one of these. ``owned`` names the
adapters the wiring created for this session, which the session closes with itself; the ports a
caller passed in stay the caller's to close.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, Protocol

import attrs

from rho_domain.agent import Agent
from rho_domain.loop.control import RunControl
from rho_domain.loop.journal import Journal
from rho_domain.ports.clock import Clock
from rho_domain.ports.executor import Executor
from rho_domain.ports.model import ChatModel
from rho_domain.ports.signals import SignalSource
from rho_domain.ports.store import SessionStore
from rho_domain.tools.source import ToolSource
from rho_domain.value_methods import value_eq, value_hash, value_repr

if TYPE_CHECKING:
    from rho_domain.ports.approver import Approver
    from rho_domain.ports.database import Database
    from rho_domain.ports.durable import DurableSteps
    from rho_domain.ports.line_search import LineSearcher


class Closeable(Protocol):
    """An adapter a session closes with itself (``aclose`` is idempotent)."""

    async def aclose(self) -> None:
        """Release what the adapter holds."""
        ...


def _frozen_mapping(databases: Mapping[str, Database] | None) -> Mapping[str, Database]:
    return MappingProxyType(dict(databases or {}))


@attrs.frozen(kw_only=True)
class SessionPorts:
    """The ports of one session. ``store`` None keeps nothing on disk; ``signals`` None obeys
    no outside cancel or pause; ``approver`` None ends a run that needs an answer
    ``awaiting_approval``. ``databases`` is read-only (an alias → ``Database``)."""

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    model: ChatModel
    executor: Executor
    clock: Clock
    store: SessionStore | None = None
    signals: SignalSource | None = None
    approver: Approver | None = None
    databases: Mapping[str, Database] = attrs.field(
        factory=dict, converter=_frozen_mapping, eq=False
    )
    owned: tuple[Closeable, ...] = ()  # adapters built for this session, closed with it
    tool_source: ToolSource | None = None  # tools that may change (MCP servers)
    # a durable run's steps (``rho_domain.loop.durable_steps``): each model call and each tool
    # call is one step, recorded once and answered from the record when the run executes again
    steps: DurableSteps | None = None
    # where the output schema's ``pattern`` keywords run (a killable worker, off the loop)
    line_searcher: LineSearcher | None = None

    def for_child(self, *, signals: SignalSource | None = None) -> SessionPorts:
        """These ports for a related session (a sub-agent, a fork): the same adapters, owned
        by the parent (a child never closes them), with ``signals`` of its own and no durable
        ``steps`` (a child's calls run inside its parent's ``delegate`` step)."""
        return attrs.evolve(self, signals=signals, owned=(), steps=None)


@attrs.frozen(kw_only=True, eq=False)
class RunContext:
    """What a collaborator of the loop (the tool batch) is given of its session, instead of
    the session itself: its id, its agent, where its events go (``journal``), how it is
    stopped (``control``) and its ports."""

    __repr__ = value_repr

    session_id: str
    agent: Agent
    journal: Journal
    control: RunControl
    ports: SessionPorts
