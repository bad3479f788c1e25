"""``rho_agent.tools.registry``: ``ToolRegistry`` (``rho_entry.seed_api.tools``)."""

from rho_entry.seed_api.tools import ToolRegistry

__all__ = ["ToolRegistry"]
