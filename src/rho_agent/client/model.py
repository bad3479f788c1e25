"""``rho_agent.client.model``: ``ModelClient`` and its ``StreamEvent``
(``rho_entry.seed_api.model_client``)."""

from rho_entry.seed_api.model_client import ModelClient, StreamEvent

__all__ = ["ModelClient", "StreamEvent"]
