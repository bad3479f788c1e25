"""``rho_agent.core.session_store``: ``SessionStore`` (``rho_entry.stored``)."""

from rho_entry.stored import SessionStore

__all__ = ["SessionStore"]
