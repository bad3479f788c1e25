"""``rho_agent.core.agent``: ``Agent``, the stateless definition (``rho_entry.facade``)."""

from rho_entry.facade import Agent

__all__ = ["Agent"]
