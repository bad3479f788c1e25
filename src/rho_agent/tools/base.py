"""``rho_agent.tools.base``: ``ToolHandler``, ``ToolInvocation``, ``ToolOutput``."""

from rho_entry.seed_api.tools import ToolHandler, ToolInvocation, ToolOutput

__all__ = ["ToolHandler", "ToolInvocation", "ToolOutput"]
