"""rho-agent's library API.

    from rho_entry import Agent, AgentConfig, Session

    agent = Agent(AgentConfig(model="gpt-5-mini", profile="readonly", working_dir="."))
    async with Session(agent) as session:
        result = await session.run(prompt="What does this repository do?")
        print(result.status, result.text)

Services that run many sessions use the runtime API: ``create_runtime``, ``start_runtime``,
``run_prompt``, ``dispatch_prompt`` (an ``AgentHandle``) and ``close_runtime``
(``rho_entry.runtime``). ``AgentEvent`` is the seeds' name for ``rho_domain.events.Event``.

Names are imported lazily, so ``import rho_entry`` (and ``rho-agent --help``) stays instant.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rho_domain.lazy_names import lazy_names
from rho_entry.version import VERSION as __version__

_EXPORTS = {
    # the modules that define them (``rho_entry.facade`` re-exports them beside
    # ``open_session``, which a program that only builds sessions does not load)
    "Agent": "rho_entry.agent",
    "AgentConfig": "rho_entry.agent",
    "Session": "rho_entry.session",
    "Budget": "rho_domain.config",
    "DatabaseConfig": "rho_domain.config",
    "PermissionProfile": "rho_domain.permissions",
    "RunResult": "rho_domain.run",
    "RunStatus": "rho_domain.run",
    "CompactResult": "rho_domain.compaction",
    "State": "rho_entry.stored",
    "SessionStore": "rho_entry.stored",
    "AgentEvent": "rho_domain.events:Event",
    "PendingApproval": "rho_domain.run",
    "ApprovalAnswer": "rho_domain.ports.approver",
    "ApprovalInterrupt": "rho_domain.ports.approver",
    "CallChanged": "rho_domain.errors",
    "RhoError": "rho_domain.errors",
    "RuntimeClosed": "rho_domain.errors",
    "RuntimeFull": "rho_domain.errors",
    "AgentHandle": "rho_entry.runtime",
    "AgentRuntime": "rho_entry.runtime",
    "HandleStatus": "rho_entry.runtime",
    "close_runtime": "rho_entry.runtime",
    "create_runtime": "rho_entry.runtime",
    "dispatch_prompt": "rho_entry.runtime",
    "run_prompt": "rho_entry.runtime",
    "shutdown_on_signals": "rho_entry.runtime",
    "start_runtime": "rho_entry.runtime",
}

__all__ = [
    "Agent",
    "AgentConfig",
    "AgentEvent",
    "AgentHandle",
    "AgentRuntime",
    "ApprovalAnswer",
    "ApprovalInterrupt",
    "Budget",
    "CallChanged",
    "CompactResult",
    "DatabaseConfig",
    "HandleStatus",
    "PendingApproval",
    "PermissionProfile",
    "RhoError",
    "RunResult",
    "RunStatus",
    "RuntimeClosed",
    "RuntimeFull",
    "Session",
    "SessionStore",
    "State",
    "__version__",
    "close_runtime",
    "create_runtime",
    "dispatch_prompt",
    "run_prompt",
    "shutdown_on_signals",
    "start_runtime",
]

if TYPE_CHECKING:
    from rho_domain.compaction import CompactResult
    from rho_domain.config import Budget, DatabaseConfig
    from rho_domain.errors import CallChanged, RhoError, RuntimeClosed, RuntimeFull
    from rho_domain.events import Event as AgentEvent
    from rho_domain.permissions import PermissionProfile
    from rho_domain.ports.approver import ApprovalAnswer, ApprovalInterrupt
    from rho_domain.run import PendingApproval, RunResult, RunStatus
    from rho_entry.agent import Agent, AgentConfig
    from rho_entry.runtime import (
        AgentHandle,
        AgentRuntime,
        HandleStatus,
        close_runtime,
        create_runtime,
        dispatch_prompt,
        run_prompt,
        shutdown_on_signals,
        start_runtime,
    )
    from rho_entry.session import Session
    from rho_entry.stored import SessionStore, State


__getattr__ = lazy_names(__name__, _EXPORTS, then=lambda value: public_module(value, "rho_entry"))


def public_module(value: object, module: str) -> None:
    """Have ``value`` (a class or function of this package) report ``module``, the one its
    users import it from (``rho_entry.Session``, not ``rho_entry.session.Session``), in
    ``repr``, ``help`` and pickling; its ``__qualname__`` stays. Domain objects keep theirs.
    A class that annotates fields of its own keeps its module too: ``typing.get_type_hints``
    (cattrs, attrs) resolves those names in the globals of ``__module__``. A ``Forward``
    attribute's annotation is its type for the checker only, not a field."""
    import inspect

    from rho_entry.forwarding import Forward

    if not (inspect.isclass(value) or inspect.isfunction(value)):
        return
    if not value.__module__.startswith("rho_entry"):
        return
    if inspect.isclass(value):
        own = vars(value)
        if any(not isinstance(own.get(name), Forward) for name in own.get("__annotations__", {})):
            return
    value.__module__ = module
