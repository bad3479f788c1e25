"""``rho_agent.core.config``: ``AgentConfig`` (``rho_entry.facade``)."""

from rho_entry.facade import AgentConfig

__all__ = ["AgentConfig"]
