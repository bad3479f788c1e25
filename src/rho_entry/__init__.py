"""rho-agent's library API.

    from rho_entry import Agent, AgentConfig, Session

    agent = Agent(AgentConfig(model="gpt-5-mini", profile="readonly", working_dir="."))
    async with Session(agent) as session:
        result = await session.run(prompt="What does this repository do?")
        print(result.status, result.text)

Names are imported lazily, so ``import rho_entry`` (and ``rho-agent --help``) stays instant.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.2.0"

_EXPORTS = {
    "Agent": "rho_entry.facade",
    "AgentConfig": "rho_entry.facade",
    "Session": "rho_entry.facade",
    "Budget": "rho_domain.config",
    "DatabaseConfig": "rho_domain.config",
    "PermissionProfile": "rho_domain.permissions",
    "RunResult": "rho_domain.run",
    "RunStatus": "rho_domain.run",
    "CompactResult": "rho_domain.compaction",
    "State": "rho_domain.state",
    "RhoError": "rho_domain.errors",
}

__all__ = [
    "Agent",
    "AgentConfig",
    "Budget",
    "CompactResult",
    "DatabaseConfig",
    "PermissionProfile",
    "RhoError",
    "RunResult",
    "RunStatus",
    "Session",
    "State",
    "__version__",
]

if TYPE_CHECKING:
    from rho_domain.compaction import CompactResult
    from rho_domain.config import Budget, DatabaseConfig
    from rho_domain.errors import RhoError
    from rho_domain.permissions import PermissionProfile
    from rho_domain.run import RunResult, RunStatus
    from rho_domain.state import State
    from rho_entry.facade import Agent, AgentConfig, Session


def __getattr__(name: str) -> Any:
    module_name = _EXPORTS.get(name)
    if module_name is None:
        raise AttributeError(f"module 'rho_entry' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module_name), name)
    globals()[name] = value
    return value
