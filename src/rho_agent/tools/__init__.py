"""``rho_agent.tools``: the documents' tool API (``rho_entry.seed_api.tools``) and handlers."""

from rho_agent.tools.base import ToolHandler, ToolInvocation, ToolOutput
from rho_agent.tools.registry import ToolRegistry

__all__ = ["ToolHandler", "ToolInvocation", "ToolOutput", "ToolRegistry"]
