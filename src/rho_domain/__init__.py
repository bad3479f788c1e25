"""rho_domain: the pure core of rho-agent (standard library and attrs only).

The agent loop (``Session``), its ``State``, messages, events, permission profiles, the
approval policy, compaction, the tool registry, and the ports through which all I/O flows.
"""

from rho_domain.agent import Agent
from rho_domain.compaction import CompactResult
from rho_domain.config import AgentConfig, Budget, DatabaseConfig
from rho_domain.errors import RhoError
from rho_domain.permissions import (
    ApprovalMode,
    DatabaseMode,
    FileWriteMode,
    PermissionProfile,
    ShellMode,
    builtin_profile,
)
from rho_domain.run import RunResult, RunStatus
from rho_domain.session import Session
from rho_domain.state import State

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
