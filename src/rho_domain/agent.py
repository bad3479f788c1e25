"""Agent: the stateless definition of an agent, reusable across sessions."""

from __future__ import annotations

from collections.abc import Sequence

import attrs

from rho_domain.config import AgentConfig
from rho_domain.errors import ConfigError
from rho_domain.hooks.agent_hooks import Hooks
from rho_domain.messages import Message, ToolResultMessage, Usage, UserMessage
from rho_domain.model import ModelRequest, ToolChoice
from rho_domain.permissions import PermissionProfile
from rho_domain.pricing import PriceTable
from rho_domain.tools.registry import ToolRegistry
from rho_domain.tools.source import NO_TOOLS, SourcedTools
from rho_domain.value_methods import value_repr


@attrs.frozen(kw_only=True, eq=False)
class Agent:
    """Config, resolved profile, tools and rendered system prompt. Holds no conversation.

    The registry is fixed for the agent's lifetime, so the tool list (and the prompt prefix
    that model servers cache) never changes under a running session, except for the tools a
    ``ToolSource`` serves (MCP servers). ``prices`` gives a model call its cost when the
    server reports none (``priced``). ``hooks`` run around its tool calls, model calls and
    runs (``rho_domain.hooks``), its delegated children's too.

    ``sourced`` are the tools and instructions the session's tool source served when it last
    asked: they are part of ``registry``, and their instructions follow the system prompt in
    every request (``full_system_prompt``); ``with_sourced`` swaps them between model calls.
    """

    __repr__ = value_repr

    config: AgentConfig
    profile: PermissionProfile
    registry: ToolRegistry
    system_prompt: str
    prices: PriceTable | None = None
    hooks: Hooks = Hooks()
    sourced: SourcedTools = NO_TOOLS

    def __attrs_post_init__(self) -> None:
        if self.config.output_schema is not None and self.config.response_format is not None:
            raise ConfigError(
                "output_schema and response_format both shape the answer: give one "
                "(output_schema is sent as response_format where the server supports it)"
            )
        choice = self.config.tool_choice
        if choice in (None, "auto", "none", "required") or choice in self.registry:
            return
        known = ", ".join(self.registry.names) or "none"
        raise ConfigError(
            f"tool_choice {choice!r}: expected auto, none, required or one of this agent's "
            f"tools ({known})"
        )

    def request(
        self, messages: Sequence[Message], *, tool_choice: ToolChoice | None = None
    ) -> ModelRequest:
        """A model request for this agent: its system prompt, tools and model options.

        Without ``tool_choice``, the configured one; a forcing choice (``required`` or a tool
        name) becomes ``auto`` once the model has called a tool since the last user message,
        so a forced call cannot repeat forever. With an ``output_schema``, the system prompt
        says the answer's shape, and a call that corrects the answer may not call tools."""
        config = self.config
        if tool_choice is None:
            tool_choice = config.tool_choice
            if tool_choice not in (None, "auto", "none") and _called_since_user(messages):
                tool_choice = "auto"
        system, schema = self.full_system_prompt, config.output_schema
        if schema is not None:
            from rho_domain.answer_shape import correcting, instruction  # with a schema

            system = f"{system}\n\n{instruction(schema)}" if system else instruction(schema)
            if correcting(messages):
                tool_choice = "none"
        return ModelRequest(
            model=config.model,
            system=system,
            messages=tuple(messages),
            tools=self.registry.specs(),
            tool_choice=tool_choice,
            response_format=config.response_format,
            output_schema=schema,
            reasoning_effort=config.reasoning_effort,
            service_tier=config.service_tier,
            max_output_tokens=config.max_output_tokens,
            temperature=config.temperature,
        )

    @property
    def full_system_prompt(self) -> str:
        """The system prompt with the sourced instructions (MCP servers') after it."""
        if not self.sourced.instructions:
            return self.system_prompt
        return "\n\n".join((self.system_prompt, *self.sourced.instructions))

    def with_sourced(self, sourced: SourcedTools) -> Agent:
        """This agent with ``sourced`` in place of the tools its source served before. A
        sourced tool never replaces one of the agent's own (same name: the own one stays)."""
        # the handlers that were added last time: one that lost to an own tool was not
        added = [h.name for h in self.sourced.handlers if self.registry.get(h.name) is h]
        own = self.registry.without(*added)
        fresh = [h for h in sourced.handlers if h.name not in own]
        # a domain Agent, built explicitly: evolving a facade Agent would rebuild it
        return Agent(
            config=self.config,
            profile=self.profile,
            registry=own.with_tools(*fresh),
            system_prompt=self.system_prompt,
            prices=self.prices,
            sourced=sourced,
        )

    def without_tools(self, *names: str) -> Agent:
        """This agent without the named tools (a child agent has no ``delegate``).

        Always a domain ``Agent``: the registry given is kept even when it is empty. A
        ``tool_choice`` naming a removed tool falls back to the endpoint's default.
        """
        config = self.config
        if config.tool_choice in names:
            config = attrs.evolve(config, tool_choice=None)
        return Agent(
            config=config,
            profile=self.profile,
            registry=self.registry.without(*names),
            system_prompt=self.system_prompt,
            prices=self.prices,
            hooks=self.hooks,
            sourced=self.sourced,
        )

    def priced(self, usage: Usage, model: str) -> Usage:
        """``usage`` with its cost from ``prices`` when the server reported none (unchanged
        without a table or a price for ``model``; empty ``model``: the configured one)."""
        if self.prices is None:
            return usage
        return self.prices.priced(usage, model or self.config.model)


def _called_since_user(messages: Sequence[Message]) -> bool:
    for message in reversed(messages):
        if isinstance(message, ToolResultMessage):
            return True
        if isinstance(message, UserMessage):
            return False
    return False
