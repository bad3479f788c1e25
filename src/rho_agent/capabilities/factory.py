"""``rho_agent.capabilities.factory``: ``ToolFactory`` (``rho_entry.seed_api.handlers``)."""

from rho_entry.seed_api.handlers import ToolFactory

__all__ = ["ToolFactory"]
