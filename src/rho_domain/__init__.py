"""rho_domain: the pure core of rho-agent (standard library and attrs only).

The agent loop (``Session``), its ``State``, messages, events, permission profiles, the
approval policy, compaction, the tool registry, and the ports through which all I/O flows.
Names are imported lazily: ``import rho_domain.messages`` does not load the loop.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rho_domain.lazy_names import lazy_names

_EXPORTS = {
    "Agent": "rho_domain.agent",
    "AgentConfig": "rho_domain.config",
    "ApprovalMode": "rho_domain.permissions",
    "Budget": "rho_domain.config",
    "CompactResult": "rho_domain.compaction",
    "DatabaseConfig": "rho_domain.config",
    "DatabaseMode": "rho_domain.permissions",
    "FileWriteMode": "rho_domain.permissions",
    "PermissionProfile": "rho_domain.permissions",
    "RhoError": "rho_domain.errors",
    "RunResult": "rho_domain.run",
    "RunStatus": "rho_domain.run",
    "Session": "rho_domain.loop.session",
    "ShellMode": "rho_domain.permissions",
    "State": "rho_domain.state",
    "builtin_profile": "rho_domain.permissions",
}

__all__ = [
    "Agent",
    "AgentConfig",
    "ApprovalMode",
    "Budget",
    "CompactResult",
    "DatabaseConfig",
    "DatabaseMode",
    "FileWriteMode",
    "PermissionProfile",
    "RhoError",
    "RunResult",
    "RunStatus",
    "Session",
    "ShellMode",
    "State",
    "builtin_profile",
]

if TYPE_CHECKING:
    from rho_domain.agent import Agent
    from rho_domain.compaction import CompactResult
    from rho_domain.config import AgentConfig, Budget, DatabaseConfig
    from rho_domain.errors import RhoError
    from rho_domain.loop.session import Session
    from rho_domain.permissions import (
        ApprovalMode,
        DatabaseMode,
        FileWriteMode,
        PermissionProfile,
        ShellMode,
        builtin_profile,
    )
    from rho_domain.run import RunResult, RunStatus
    from rho_domain.state import State


__getattr__ = lazy_names(__name__, _EXPORTS)
