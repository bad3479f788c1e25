"""``rho_agent.permissions.factory``: ``ToolFactory`` (``rho_entry.seed_handlers``)."""

from rho_entry.seed_handlers import ToolFactory

__all__ = ["ToolFactory"]
