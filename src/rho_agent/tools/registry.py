"""``rho_agent.tools.registry``: ``ToolRegistry`` (``rho_entry.seed_tools``)."""

from rho_entry.seed_tools import ToolRegistry

__all__ = ["ToolRegistry"]
