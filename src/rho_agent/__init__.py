"""``rho_agent``: the seeds' import name for rho-agent's public API.

A thin alias of ``rho_entry`` (the entry layer), so code written against the seeds runs::

    from rho_agent import Agent, AgentConfig, AgentEvent, RunResult, Session, SessionStore, State

Every name of ``rho_entry.__all__`` is here, imported lazily on first use, plus the design
documents' names for the typed API (``_DOCUMENT_NAMES``: ``ToolHandler``, ``ToolRegistry``,
``ToolFactory``, the permission modes, ``ModelClient``...). The documents' module paths
(``rho_agent.core.session``, ``rho_agent.permissions``, ``rho_agent.tools.registry``,
``rho_agent.client.model``...) are subpackages that re-export the same objects.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

import rho_entry

__version__ = rho_entry.__version__

# The design documents' names that are not part of ``rho_entry``'s API: name -> module.
_DOCUMENT_NAMES: dict[str, str] = {
    "ApprovalMode": "rho_domain.permissions",
    "DatabaseMode": "rho_domain.permissions",
    "FileWriteMode": "rho_domain.permissions",
    "ModelClient": "rho_entry.seed_api.model_client",
    "ShellMode": "rho_domain.permissions",
    "ToolFactory": "rho_entry.seed_api.handlers",
    "ToolHandler": "rho_entry.seed_api.tools",
    "ToolInvocation": "rho_entry.seed_api.tools",
    "ToolOutput": "rho_entry.seed_api.tools",
    "ToolRegistry": "rho_entry.seed_api.tools",
}
__all__ = [
    "Agent",
    "AgentConfig",
    "AgentEvent",
    "AgentHandle",
    "AgentRuntime",
    "ApprovalAnswer",
    "ApprovalInterrupt",
    "ApprovalMode",
    "Budget",
    "CallChanged",
    "CompactResult",
    "DatabaseConfig",
    "DatabaseMode",
    "FileWriteMode",
    "HandleStatus",
    "ModelClient",
    "PendingApproval",
    "PermissionProfile",
    "RhoError",
    "RunResult",
    "RunStatus",
    "RuntimeClosed",
    "RuntimeFull",
    "Session",
    "SessionStore",
    "ShellMode",
    "State",
    "ToolFactory",
    "ToolHandler",
    "ToolInvocation",
    "ToolOutput",
    "ToolRegistry",
    "__version__",
    "close_runtime",
    "create_runtime",
    "dispatch_prompt",
    "run_prompt",
    "shutdown_on_signals",
    "start_runtime",
]

if TYPE_CHECKING:
    from rho_domain.permissions import ApprovalMode, DatabaseMode, FileWriteMode, ShellMode
    from rho_entry import (
        Agent,
        AgentConfig,
        AgentEvent,
        AgentHandle,
        AgentRuntime,
        ApprovalAnswer,
        ApprovalInterrupt,
        Budget,
        CallChanged,
        CompactResult,
        DatabaseConfig,
        HandleStatus,
        PendingApproval,
        PermissionProfile,
        RhoError,
        RunResult,
        RunStatus,
        RuntimeClosed,
        RuntimeFull,
        Session,
        SessionStore,
        State,
        close_runtime,
        create_runtime,
        dispatch_prompt,
        run_prompt,
        shutdown_on_signals,
        start_runtime,
    )
    from rho_entry.seed_api.handlers import ToolFactory
    from rho_entry.seed_api.model_client import ModelClient
    from rho_entry.seed_api.tools import ToolHandler, ToolInvocation, ToolOutput, ToolRegistry


def __getattr__(name: str) -> Any:
    if name not in __all__:
        raise AttributeError(f"module 'rho_agent' has no attribute {name!r}")
    where = _DOCUMENT_NAMES.get(name)
    if where is not None:
        value = getattr(importlib.import_module(where), name)
    else:
        value = getattr(rho_entry, name)
    rho_entry.public_module(value, "rho_agent")  # rho_agent.Session, as the seeds import it
    globals()[name] = value
    return value
