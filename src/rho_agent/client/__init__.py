"""``rho_agent.client``: the model client (``rho_entry.seed_api.model_client``)."""

from rho_agent.client.model import ModelClient, StreamEvent

__all__ = ["ModelClient", "StreamEvent"]
