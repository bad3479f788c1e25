"""``rho_agent.core.events``: ``AgentEvent``, the union of ``rho_domain.events``' typed
events; each answers the documents' ``type``/``content``/``tool_*`` view
(``rho_domain.event_view``)."""

from rho_domain.events import Event as AgentEvent

__all__ = ["AgentEvent"]
