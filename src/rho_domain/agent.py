"""Agent: the stateless definition of an agent, reusable across sessions."""

from __future__ import annotations

from collections.abc import Sequence

import attrs

from rho_domain.config import AgentConfig
from rho_domain.messages import Message
from rho_domain.model import ModelRequest, ToolChoice
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

    def request(
        self, messages: Sequence[Message], *, tool_choice: ToolChoice | None = None
    ) -> ModelRequest:
        """A model request for this agent: its system prompt, tools and model options."""
        config = self.config
        return ModelRequest(
            model=config.model,
            system=self.system_prompt,
            messages=tuple(messages),
            tools=self.registry.specs(),
            tool_choice=tool_choice,
            response_format=config.response_format,
            reasoning_effort=config.reasoning_effort,
            service_tier=config.service_tier,
            max_output_tokens=config.max_output_tokens,
            temperature=config.temperature,
        )

    def without_tools(self, *names: str) -> Agent:
        """This agent without the named tools (a child agent has no ``delegate``).

        Always a domain ``Agent``: the registry given is kept even when it is empty.
        """
        return Agent(
            config=self.config,
            profile=self.profile,
            registry=self.registry.without(*names),
            system_prompt=self.system_prompt,
        )
