"""AgentConfig: everything that defines an agent, as one frozen value.

Loading from YAML, environment variables and flags is an entry concern (``rho_entry``); the
domain receives a validated value. Secrets are never stored here: a database password is an
environment variable *name*, resolved when the connection is made.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import attrs

from rho_domain import model_choices as choices
from rho_domain.config_checks import (
    amount,
    limit,
    not_negative,
    optional_path,
    optional_text,
    path_text,
    positive,
    retries,
    seconds,
    seconds_or_zero,
    text,
    variable_name,
)
from rho_domain.endpoint_url import check_endpoint_url
from rho_domain.errors import ConfigError
from rho_domain.hook_config import HookConfig as HookConfig
from rho_domain.lazy_names import lazy_names
from rho_domain.permissions import PermissionProfile
from rho_domain.value_methods import value_eq, value_hash, value_repr

if TYPE_CHECKING:
    from rho_domain.database_config import DatabaseConfig as DatabaseConfig
    from rho_domain.mcp_config import McpServerConfig as McpServerConfig

# A config names no database and no MCP server unless it is given some: the two classes
# (with the MCP module's checks) are built with the first one asked for, not with every
# AgentConfig (~10 M instructions of a one-shot). ``resolve_field_types`` hands them to
# whoever resolves the fields' annotations (the codec's cattrs converter).
__getattr__ = lazy_names(
    __name__,
    {"DatabaseConfig": "rho_domain.database_config", "McpServerConfig": "rho_domain.mcp_config"},
)

DEFAULT_MODEL = "gpt-5-mini"
DEFAULT_CONTEXT_WINDOW = 100_000
DEFAULT_COMPACT_THRESHOLD = 0.8
DEFAULT_TOOL_OUTPUT_LIMIT = 20_000
DEFAULT_MAX_TURNS = 100  # model calls per run; a loop that never answers still ends
DEFAULT_REPEAT_LIMIT = 3  # the same call this many times in a row: told once, then stuck


def _mcp_servers(
    instance: object, attribute: attrs.Attribute[Any], value: Mapping[str, Any]
) -> None:
    """``mcp_config.check_servers``, imported with the first config that names a server."""
    if value:
        from rho_domain.mcp_config import check_servers

        check_servers(instance, attribute, value)


def resolve_field_types() -> None:
    """Resolve the annotations of ``AgentConfig`` and ``PermissionProfile``
    (``attrs.resolve_types``, which cattrs relies on) with the classes this module and
    ``permissions`` name lazily (``DatabaseConfig``, ``McpServerConfig``):
    ``typing.get_type_hints`` looks names up in a module's globals, where a lazy name is not
    until it is asked for. Idempotent."""
    from rho_domain.database_config import DatabaseConfig
    from rho_domain.mcp_config import McpServerConfig

    names = {"DatabaseConfig": DatabaseConfig, "McpServerConfig": McpServerConfig}
    attrs.resolve_types(PermissionProfile, localns=names)
    attrs.resolve_types(AgentConfig, localns=names)


BACKENDS = ("local", "daytona")
"""Where tools may run (``AgentConfig.backend``)."""


def _backend(_: object, attribute: attrs.Attribute[Any], value: object) -> None:
    if value not in BACKENDS:
        raise ConfigError(f"{attribute.name} must be {' or '.join(BACKENDS)}, not {value!r}")


def _profile_text(value: str | os.PathLike[str] | PermissionProfile) -> str | PermissionProfile:
    """A profile file's ``pathlib.Path`` (any ``os.PathLike``) as its text, converted once:
    it was refused ("not PosixPath"), although the setting takes a profile file's path."""
    return os.fspath(value) if isinstance(value, os.PathLike) else value


def _profile(_: object, attribute: attrs.Attribute[Any], value: object) -> None:
    """A profile's name or file path, or a ``PermissionProfile``: an object or None ended
    ``Agent(...)`` on "expected str, bytes or os.PathLike object, not object"."""
    if not isinstance(value, str | PermissionProfile):
        raise ConfigError(
            f"{attribute.name} must be a profile's name (readonly, developer, eval...), a "
            f"profile file's path, or a PermissionProfile; not {type(value).__name__} "
            f"{value!r:.60}"
        )


def _endpoint_url(_: object, attribute: attrs.Attribute[Any], value: object) -> None:
    """A base URL the HTTP client can call (``check_endpoint_url``). Checked when the config
    is built, so a typo fails before a session starts, not after retries."""
    if value is None or value == "":  # "" is "not given", as everywhere else
        return
    check_endpoint_url(str(value), attribute.name)


def _output_schema(_: object, attribute: attrs.Attribute[Any], value: object) -> None:
    if value is None:
        return
    if not isinstance(value, Mapping):  # an answer is shaped by an object schema, not true
        raise ConfigError(f"{attribute.name} must be a JSON Schema object; got {value!r}")
    # the validator loads with the first schema given: a config without one never builds it
    from rho_domain.json_schema import check_schema

    check_schema(value, attribute.name)


@attrs.frozen(kw_only=True)
class Budget:
    """Limits for one run and for the whole session; a run that reaches one ends with status
    ``budget_exceeded`` (None: no limit).

    Per run: token and cost limits count this run's usage (its sub-agents' included);
    ``max_tool_calls`` the tool calls it and its sub-agents made; ``max_wall_seconds`` its
    elapsed time, enforced during a model call or a tool call too (the call is stopped at the
    deadline and answered as stopped). Per session (``session_*``), across every run and
    resume: its model calls, tool calls, active time (the runs' durations) and cost, its
    sub-agents' included (every run's: the delegate results record what each spent). A
    sub-agent gets what is left of each limit
    (``loop.tally.child_budget``). Counts and costs are checked
    before each model call, so a batch of tool calls in progress finishes first; the model
    calls of one run are bounded by ``AgentConfig.max_turns``.
    """

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    max_input_tokens: int | None = attrs.field(default=None, validator=limit)
    max_output_tokens: int | None = attrs.field(default=None, validator=limit)
    max_total_tokens: int | None = attrs.field(default=None, validator=limit)
    max_cost_usd: float | None = attrs.field(default=None, validator=amount)
    max_wall_seconds: float | None = attrs.field(default=None, validator=seconds)
    max_tool_calls: int | None = attrs.field(default=None, validator=limit)
    session_max_turns: int | None = attrs.field(default=None, validator=limit)
    session_max_tool_calls: int | None = attrs.field(default=None, validator=limit)
    session_max_wall_seconds: float | None = attrs.field(default=None, validator=seconds)
    session_max_cost_usd: float | None = attrs.field(default=None, validator=amount)

    @property
    def limits_anything(self) -> bool:
        """True when at least one limit is set: only then does a run watch its budget."""
        return any(value is not None for value in attrs.astuple(self, recurse=False))


@attrs.frozen(kw_only=True)
class AgentConfig:
    """The definition of an agent.

    ``profile`` is a built-in name, a path to a profile YAML (a text or a ``pathlib.Path``,
    kept as its text; resolved by the entry layer), or a ``PermissionProfile``.
    ``system_prompt`` empty means the built-in default prompt; text ending in ``.md`` is a
    template path (entry layer). ``vars`` fill the prompt template.
    ``working_dir`` is the workspace's directory (None: the current one), a text or an
    ``os.PathLike`` such as ``pathlib.Path``, kept as its text (``str``).
    ``max_turns`` counts model calls in one run, its sub-agents' included (default 100,
    ``DEFAULT_MAX_TURNS``; 0 or None: no limit); a run that reaches it ends with status
    ``max_turns``. ``tool_choice`` is ``auto``, ``none``, ``required`` or a tool's name
    (None: the endpoint's default); a forcing choice applies until the model has called a
    tool in the current turn, then ``auto``. ``stream`` None or
    True streams where the endpoint can (not tool turns on a provider that cannot stream
    tools); False asks OpenAI-compatible servers for whole responses (servers whose streamed
    tool calls are broken).

    ``output_schema`` is a JSON Schema the final answer must match (``rho_domain.json_schema``
    lists the keywords checked): the answer is parsed as JSON into ``RunResult.output``; one
    that fails is sent back once with the problem, then the run ends ``error`` naming the
    failing path (``rho_domain.loop.output_check``). It is sent as ``response_format`` where the
    server supports it and as a final tool to Anthropic; not together with ``response_format``.

    ``temperature`` is a number from 0 to 2, ``reasoning_effort`` one of
    ``model_choices.REASONING_EFFORTS``, ``compact_threshold`` the share of ``context_window``
    past which a run compacts its history first (``auto_compact``): above 0, at most 1
    (default 0.8); the switches are booleans. All are checked when the config is built.

    ``repeat_limit`` is how many times in a row the same tool call (equal arguments, same
    result) or the same failing call may come before the model is told it is repeating
    itself; repeating it once more ends the run with status ``stuck`` (default 3; 0 or None:
    never; ``rho_domain.loop.stuck``).

    ``tool_timeout`` is the deadline of every tool call in seconds (None: 600, or the
    profile's shell timeout plus 30 s when longer; a ``delegate`` call then has none, its
    sub-agent being bounded by its own limits); a call past it is stopped and answered
    "timed out".

    ``mcp_servers`` are the MCP servers whose tools the agent may use, by name
    (``rho_domain.mcp_config``; a read-only profile starts only those it names).

    Model transport (None: the adapter's default): ``model_timeout`` is the longest wait in
    seconds for the next piece of a model response (default 120; connecting is bounded by
    it too when it is shorter than ``model_connect_timeout``, default 10); ``model_retries``
    the extra attempts after a failed call (default 2, at most 100);
    ``model_retry_after_cap`` the longest server-requested wait (Retry-After) that is
    honoured (default 120; a longer one fails at once). A stalled endpoint holds a run at
    most about ``(retries + 1) x timeout``. ``model_answer_timeout`` bounds one answer from
    its request to its end, its head included, however steadily it comes (default 3600 s:
    a stream of deltas or keep-alives that never ends), ``model_answer_bytes`` its body's
    size once decompressed (default 64 MiB); an answer past either ends the call with an
    error naming the setting.

    ``hooks`` names the hooks run around tool calls, model calls and runs (``HookConfig``);
    a resumed session does not take them from its directory (``rho_entry.resume_policy``).
    ``store`` is where sessions are kept (a ``postgresql://`` URL, ``file://`` URL or a
    directory; None: the config directory), read by the entry layer (``rho_entry.config.stores``;
    ``--store`` and ``$RHO_AGENT_STORE`` win over it). It is never saved with a session: it
    says where, not what, and its URL may hold a password.
    """

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    system_prompt: str = attrs.field(default="", validator=text)
    vars: Mapping[str, str] = attrs.field(factory=dict)
    model: str = attrs.field(default=DEFAULT_MODEL, validator=text)
    provider: str | None = attrs.field(default=None, validator=optional_text)
    base_url: str | None = attrs.field(default=None, validator=_endpoint_url)
    api_key_env: str | None = attrs.field(default=None, validator=variable_name)
    profile: str | PermissionProfile = attrs.field(
        default="readonly", converter=_profile_text, validator=_profile
    )
    working_dir: str | None = attrs.field(
        default=None, converter=path_text, validator=optional_path
    )
    backend: str = attrs.field(default="local", validator=_backend)
    service_tier: str | None = attrs.field(default=None, validator=choices.service_tier)
    reasoning_effort: str | None = attrs.field(default=None, validator=choices.reasoning_effort)
    response_format: Mapping[str, Any] | None = None
    output_schema: Mapping[str, Any] | None = attrs.field(default=None, validator=_output_schema)
    temperature: float | None = attrs.field(default=None, validator=choices.temperature)
    stream: bool | None = attrs.field(default=None, validator=choices.optional_switch)
    # a count, never 'none': -1 is llama.cpp's unlimited, and a stored one won resume's min()
    max_output_tokens: int | None = attrs.field(default=None, validator=limit)
    tool_choice: str | None = None
    databases: Mapping[str, DatabaseConfig] = attrs.field(factory=dict)
    mcp_servers: Mapping[str, McpServerConfig] = attrs.field(factory=dict, validator=_mcp_servers)
    auto_approve: bool = attrs.field(default=False, validator=choices.switch)
    context_window: int = attrs.field(default=DEFAULT_CONTEXT_WINDOW, validator=positive)
    auto_compact: bool = attrs.field(default=True, validator=choices.switch)
    compact_threshold: float = attrs.field(
        default=DEFAULT_COMPACT_THRESHOLD, validator=choices.fraction
    )
    max_turns: int | None = attrs.field(default=DEFAULT_MAX_TURNS, validator=not_negative)
    repeat_limit: int | None = attrs.field(default=DEFAULT_REPEAT_LIMIT, validator=not_negative)
    budget: Budget = Budget()
    # 0 or less cut nothing (truncate_middle), and a stored one won resume's min()
    tool_output_limit: int = attrs.field(default=DEFAULT_TOOL_OUTPUT_LIMIT, validator=positive)
    tool_timeout: float | None = attrs.field(default=None, validator=seconds)
    model_timeout: float | None = attrs.field(default=None, validator=seconds)
    model_connect_timeout: float | None = attrs.field(default=None, validator=seconds)
    model_retries: int | None = attrs.field(default=None, validator=retries)
    model_retry_after_cap: float | None = attrs.field(default=None, validator=seconds_or_zero)
    model_answer_timeout: float | None = attrs.field(default=None, validator=seconds)
    model_answer_bytes: int | None = attrs.field(default=None, validator=limit)
    hooks: HookConfig = HookConfig()
    store: str | None = None
