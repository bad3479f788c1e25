"""Agent: the stateless definition of an agent, reusable across sessions."""

from __future__ import annotations

import attrs

from rho_domain.config import AgentConfig
from rho_domain.permissions import PermissionProfile
from rho_domain.tools.registry import ToolRegistry


@attrs.frozen(kw_only=True, eq=False)
class Agent:
    """Config, resolved profile, tools and rendered system prompt. Holds no conversation.

    The registry is fixed for the agent's lifetime, so the tool list (and the prompt prefix
    that model servers cache) never changes under a running session.
    """

    config: AgentConfig
    profile: PermissionProfile
    registry: ToolRegistry
    system_prompt: str
