"""The library's ``Agent``, an agent definition built from an ``AgentConfig`` by the wiring,
and ``AgentConfig`` (the domain's, plus YAML files).

It holds the domain's ``rho_domain.agent.Agent`` (``definition``), the value every session
runs, and shows its fields (``forwarding.Forward``); ``definition_of`` gives the domain agent
of either kind.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import attrs

from rho_domain import config as domain_config
from rho_entry.forwarding import Forward

# What building an Agent uses (the tools, the wiring, the hooks) is imported when one is
# built: ``from rho_agent import Agent, AgentConfig`` does not load the loop's world, nor
# pathlib (with urllib.parse and ipaddress) before a config file is read or written.
if TYPE_CHECKING:
    from pathlib import Path

    from rho_domain import agent as domain_agent
    from rho_domain.hooks import Hooks
    from rho_domain.messages import Message, Usage
    from rho_domain.model import ModelRequest, ToolChoice
    from rho_domain.permissions import PermissionProfile
    from rho_domain.pricing import PriceTable
    from rho_domain.tools.base import ToolHandler
    from rho_domain.tools.registry import ToolRegistry
    from rho_entry.seed_api.tools import ToolHandler as DocumentToolHandler


class AgentConfig(domain_config.AgentConfig):
    """``rho_domain.config.AgentConfig`` plus YAML files.

    ``from_file`` raises ConfigError naming the file, the key path and the expected type.
    """

    @classmethod
    def from_file(cls, path: str | Path) -> AgentConfig:
        """Read an AgentConfig YAML file."""
        from pathlib import Path

        from rho_entry.config.config_files import load_agent_config

        return cls.from_config(load_agent_config(Path(path)))

    @classmethod
    def from_config(cls, config: domain_config.AgentConfig) -> AgentConfig:
        """This class with the fields of a domain ``AgentConfig``."""
        return cls(**{a.name: getattr(config, a.name) for a in attrs.fields(type(config))})

    def to_file(self, path: str | Path) -> None:
        """Write this config as YAML (settings left at their defaults are omitted)."""
        from pathlib import Path

        from rho_entry.config.config_files import save_agent_config

        save_agent_config(self, Path(path))


class Agent:
    """An agent definition built from an AgentConfig (profile, tools, system prompt, and
    the price table: shipped prices plus ``<config dir>/prices.yaml`` unless ``prices`` is
    given).

    ``tools`` are more tools (domain handlers, or the design documents' ``ToolHandler``
    subclasses, ``rho_entry.seed_api.tools``), added to the profile's; they go through the same
    approval policy and truncation (one of the same name replaces the profile's; two of
    them with one name are a ``ConfigError``; a ``tools`` that is not a list of handlers, or
    ``hooks`` that are not a ``Hooks``, a ``TypeError`` naming the keyword). A ``registry``
    built the documents' way (``ToolRegistry().register(...)``) is copied: an agent's tools
    never change afterwards.

    A config that names no database gets the ones the environment configures, as the CLI's
    do (``databases_config.with_configured_databases``: ``$RHO_AGENT_DB_CONFIG`` or the config
    directory's ``databases.yaml``, and ``SQLITE_DB``, ``POSTGRES_HOST``...); ``environ``
    replaces ``os.environ`` for that (``{}``: none). ``agent.config.databases`` says which.

    ``hooks`` (``rho_domain.hooks.Hooks``: functions, sync or async) run after the ones the
    config names by reference (``config.hooks``, imported by ``rho_entry.config.hook_refs``; a
    reference that does not import is a ``ConfigError`` naming its key); their ``timeout``,
    when set, replaces the config's. See docs/hooks.md.

    It holds the domain's ``rho_domain.agent.Agent`` (``definition``) and shows its fields.
    """

    __slots__ = ("definition",)

    config: Forward[domain_config.AgentConfig] = Forward("definition")
    profile: Forward[PermissionProfile] = Forward("definition")
    registry: Forward[ToolRegistry] = Forward("definition")
    system_prompt: Forward[str] = Forward("definition")
    prices: Forward[PriceTable | None] = Forward("definition")
    hooks: Forward[Hooks] = Forward("definition")

    def __init__(
        self,
        config: domain_config.AgentConfig | None = None,
        *,
        profile: PermissionProfile | None = None,
        registry: ToolRegistry | None = None,
        system_prompt: str | None = None,
        prices: PriceTable | None = None,
        tools: Sequence[ToolHandler | DocumentToolHandler] = (),
        environ: Mapping[str, str] | None = None,
        hooks: Hooks | None = None,
    ) -> None:
        from rho_domain import agent as domain_agent
        from rho_domain.hooks import Hooks as HooksValue
        from rho_domain.tools.factory import build_registry
        from rho_entry import wiring
        from rho_entry.config.databases_config import with_configured_databases
        from rho_entry.config.hook_refs import resolve_hooks

        config = config if config is not None else AgentConfig()
        if not isinstance(config, domain_config.AgentConfig):
            raise TypeError(
                f"Agent(config): give an AgentConfig (AgentConfig(model=...), or "
                f"AgentConfig.from_file(path) for a YAML file), not {type(config).__name__} "
                f"{config!r:.80}"
            )
        resolved = resolve_hooks(config.hooks)
        if hooks is not None and not isinstance(hooks, HooksValue):
            raise TypeError(
                f"Agent(hooks=...): give a rho_domain.hooks.Hooks (Hooks(before_tool=...)), "
                f"not {type(hooks).__name__} {hooks!r:.80}; see docs/hooks.md"
            )
        if hooks is not None:
            resolved = resolved.then(hooks)
        config = with_configured_databases(config, os.environ if environ is None else environ)
        extra: tuple[ToolHandler, ...] = ()
        if tools:  # the design documents' tool API loads with the first tool given
            from rho_entry.given_tools import check_tools
            from rho_entry.seed_api.tools import as_domain_handler

            check_tools(tools)
            extra = tuple(as_domain_handler(tool) for tool in tools)
        if profile is None:
            profile = wiring.profile_of(config)
        if registry is None:
            registry = build_registry(
                profile,
                databases=config.databases,
                spreadsheet_reader=wiring.build_spreadsheet_reader(),
                line_searcher=wiring.build_line_searcher(),
                # the design documents: developer (and eval) add delegate, readonly has none
                delegation=not profile.read_only,
                extra=extra,
                output_limit=config.tool_output_limit,
            )
        else:
            from rho_entry.seed_api.tools import ToolRegistry as DocumentToolRegistry

            if isinstance(registry, DocumentToolRegistry):
                registry = registry.frozen()  # the agent's tools never change under a session
            if extra:
                registry = registry.with_tools(*extra)
        if system_prompt is None:
            system_prompt = wiring.render_system_prompt(config, profile, registry.names)
        if prices is None:
            prices = wiring.load_prices()
        self.definition = domain_agent.Agent(
            config=config,
            profile=profile,
            registry=registry,
            system_prompt=system_prompt,
            prices=prices,
            hooks=resolved,
        )

    def __repr__(self) -> str:
        return f"Agent({self.definition!r})"

    def request(
        self, messages: Sequence[Message], *, tool_choice: ToolChoice | None = None
    ) -> ModelRequest:
        """A model request for this agent (``rho_domain.agent.Agent.request``)."""
        return self.definition.request(messages, tool_choice=tool_choice)

    def without_tools(self, *names: str) -> domain_agent.Agent:
        """This agent without the named tools (``rho_domain.agent.Agent.without_tools``)."""
        return self.definition.without_tools(*names)

    def priced(self, usage: Usage, model: str) -> Usage:
        """``usage`` with its cost from ``prices`` (``rho_domain.agent.Agent.priced``)."""
        return self.definition.priced(usage, model)


def definition_of(agent: Agent | domain_agent.Agent) -> domain_agent.Agent:
    """The domain agent of ``agent`` (the library's ``Agent``, or a domain one). Raises
    ``TypeError`` for anything else (an ``AgentConfig`` given where its ``Agent`` belongs)."""
    from rho_domain import agent as domain_agent

    if isinstance(agent, Agent):
        return agent.definition
    if isinstance(agent, domain_agent.Agent):
        return agent
    fix = (
        "wrap the config: Session(Agent(config))"
        if isinstance(agent, domain_config.AgentConfig)
        else "build one: Session(Agent(AgentConfig(model=...)))"
    )
    raise TypeError(f"an Agent is needed here, not {type(agent).__name__}: {fix}")
