"""``rho_agent.core.state``: ``State`` (``rho_entry.stored``)."""

from rho_entry.stored import State

__all__ = ["State"]
