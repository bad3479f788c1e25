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

    config = Forward[domain_config.AgentConfig]("definition")
    profile = Forward["PermissionProfile"]("definition")
    registry = Forward["ToolRegistry"]("definition")
    system_prompt = Forward[str]("definition")
    prices = Forward["PriceTable | None"]("definition")
    hooks = Forward["Hooks"]("definition")

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
            from rho_entry.seed_api.tools import as_domain_handler

            _refuse_non_tools(tools)
            _refuse_twice_named(tools)
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


def _refuse_non_tools(tools: object) -> None:
    """Refuse a ``tools=`` that is not a list of tool handlers: a tool's name (``["bash"]``),
    a bare string, or one handler not in a list failed deep inside with
    ``AttributeError: 'str' object has no attribute 'name'``."""
    from rho_domain.tools.base import ToolHandler as DomainToolHandler
    from rho_entry.seed_api.tools import ToolHandler as DocumentToolHandler

    members = DomainToolHandler.__abstractmethods__
    if isinstance(tools, (str, bytes)) or not isinstance(tools, Sequence):
        raise TypeError(
            f"Agent(tools=...): give a list of tool handlers (tools=[MyTool()]), not "
            f"{type(tools).__name__} {tools!r:.80}"
        )
    for tool in tools:
        if isinstance(tool, DocumentToolHandler) or all(_has(tool, m) for m in members):
            if _has(tool, "parameters"):  # a document handler's too, named when it raises
                _check_schema(tool)
            continue
        raise TypeError(
            f"Agent(tools=...): {type(tool).__name__} {tool!r:.60} is not a tool handler (a "
            "subclass of rho_entry.seed_api.tools.ToolHandler, or of "
            "rho_domain.tools.base.ToolHandler); the profile's own tools (bash, read...) "
            "come with AgentConfig(profile=...)"
        )


def _has(tool: object, member: str) -> bool:
    """True when ``tool`` has ``member``; one whose reading raised (a ``parameters`` property
    building the schema) is a ``ConfigError`` naming the tool and the member. Before, its
    exception came out of ``Agent(...)`` as it was, naming neither, and a ``SystemExit``
    raised there ended the process."""
    from rho_domain.errors import ConfigError
    from rho_domain.plugged import described

    try:
        getattr(tool, member)
    except AttributeError:
        return False
    except KeyboardInterrupt:
        raise
    except BaseException as exc:  # SystemExit too: a tool's own bug, not the process's end
        raise ConfigError(
            f"Agent(tools=...): reading {type(tool).__name__}.{member} raised "
            f"{described(exc)}; the model is shown each tool's name, description "
            "and parameters, so they must be readable when the Agent is built"
        ) from exc
    return True


def _check_schema(tool: ToolHandler | DocumentToolHandler) -> None:
    """Refuse a tool whose ``parameters`` is not a JSON object schema the model can be sent:
    a value JSON cannot hold (a set, a class) ended every run at its first model call with
    "TypeError: Object of type set is not JSON serializable", naming no tool; a known
    keyword's wrong value (``"type": "strin"``) is refused by ``check_parameters``."""
    import json

    from rho_domain.errors import ConfigError
    from rho_domain.tool_parameters import check_parameters

    parameters: object = tool.parameters  # typed a Mapping; a caller's code returns anything
    problem = None if isinstance(parameters, Mapping) else f"a {type(parameters).__name__}"
    try:
        json.dumps(parameters, allow_nan=False)
    except (TypeError, ValueError, RecursionError) as exc:
        problem = problem or f"not JSON: {exc}"
    where = f"Agent(tools=...): {type(tool).__name__}.parameters (tool {tool.name!r})"
    if problem is not None:
        raise ConfigError(
            f"{where} is {problem}; give a JSON Schema object of dicts, lists, strings, "
            "numbers, true, false and null"
        )
    check_parameters(parameters, where)


def _refuse_twice_named(tools: Sequence[ToolHandler | DocumentToolHandler]) -> None:
    """Refuse two of ``tools=`` with one name: the registry keeps a name once, so the
    earlier was silently dropped and the model saw only the later. One replacing a built-in
    tool is meant (an embedder's own ``read``)."""
    from rho_domain.errors import ConfigError

    seen: dict[str, ToolHandler | DocumentToolHandler] = {}
    for handler in tools:
        first = seen.setdefault(handler.name, handler)
        if first is not handler:
            raise ConfigError(
                f"Agent(tools=...): two tools are named {handler.name!r} "
                f"({type(first).__name__} and {type(handler).__name__}); the model calls a "
                "tool by its name, so each name may be given once: rename one"
            )
