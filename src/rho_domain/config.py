"""AgentConfig: everything that defines an agent, as one frozen value.

Loading from YAML, environment variables and flags is an entry concern (``rho_entry``); the
domain receives a validated value. Secrets are never stored here: a database password is an
environment variable *name*, resolved when the connection is made.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

import attrs

from rho_domain.errors import ConfigError
from rho_domain.permissions import PermissionProfile

DEFAULT_MODEL = "gpt-5-mini"
DEFAULT_CONTEXT_WINDOW = 100_000
DEFAULT_COMPACT_THRESHOLD = 0.8
DEFAULT_TOOL_OUTPUT_LIMIT = 20_000
DEFAULT_MAX_TURNS = 100  # model calls per run; a loop that never answers still ends


@attrs.frozen(kw_only=True)
class Budget:
    """Limits for one run; a run that passes one ends with status ``budget_exceeded``.

    Token limits count this run's usage; ``max_wall_seconds`` its elapsed time.
    """

    max_input_tokens: int | None = None
    max_output_tokens: int | None = None
    max_total_tokens: int | None = None
    max_cost_usd: float | None = None
    max_wall_seconds: float | None = None


@attrs.frozen(kw_only=True)
class DatabaseConfig:
    """One database alias. ``password_env`` names the environment variable with the password."""

    engine: str
    dsn: str | None = None
    path: str | None = None
    host: str | None = None
    port: int | None = None
    user: str | None = None
    database: str | None = None
    password_env: str | None = None
    options: Mapping[str, Any] = attrs.field(factory=dict)


def _positive(_: object, attribute: attrs.Attribute[Any], value: object) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ConfigError(f"{attribute.name} must be a positive integer, not {value!r}")


def _not_negative(_: object, attribute: attrs.Attribute[Any], value: object) -> None:
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ConfigError(
            f"{attribute.name} must be a whole number >= 0 (0: no limit), not {value!r}"
        )


def _seconds(_: object, attribute: attrs.Attribute[Any], value: object) -> None:
    _check_seconds(attribute, value, zero=False)


def _seconds_or_zero(_: object, attribute: attrs.Attribute[Any], value: object) -> None:
    _check_seconds(attribute, value, zero=True)


def _check_seconds(attribute: attrs.Attribute[Any], value: object, *, zero: bool) -> None:
    if value is None:
        return
    number = value if isinstance(value, int | float) and not isinstance(value, bool) else None
    finite = number is not None and number == number and number != float("inf")
    if number is None or not finite or number < 0 or (number == 0 and not zero):
        least = "0 or more" if zero else "more than 0"
        raise ConfigError(f"{attribute.name} must be a number of seconds, {least}; got {value!r}")


def _endpoint_url(_: object, attribute: attrs.Attribute[Any], value: object) -> None:
    """A base URL the HTTP client can call: http(s), a host, a port in range. Checked when the
    config is built, so a typo fails before a session starts, not after retries."""
    if value is None or value == "":  # "" is "not given", as everywhere else
        return
    text = str(value)
    parts = urlsplit(text)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        # a host[:port][/path] without its scheme, the common slip; not a mangled scheme
        bare = not any(part in text for part in ("//", ":/", " ")) and not text.startswith("/")
        guess = f" (did you mean http://{text}?)" if bare else ""
        raise ConfigError(f"{attribute.name} {text!r} is not an http:// or https:// URL{guess}")
    try:
        port, host = parts.port, parts.hostname
    except ValueError:  # urllib's words: "Port out of range 0-65535", "Port could not be cast"
        raise ConfigError(
            f"{attribute.name} {text!r}: the port must be a number from 1 to 65535"
        ) from None
    if not host:
        raise ConfigError(f"{attribute.name} {text!r} names no host")
    if port == 0:
        raise ConfigError(f"{attribute.name} {text!r}: the port must be a number from 1 to 65535")


def _count(_: object, attribute: attrs.Attribute[Any], value: object) -> None:
    if value is None:
        return
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise ConfigError(f"{attribute.name} must be a whole number, 0 or more; got {value!r}")


@attrs.frozen(kw_only=True)
class AgentConfig:
    """The definition of an agent.

    ``profile`` is a built-in name, a path to a profile YAML (resolved by the entry layer), or
    a ``PermissionProfile``. ``system_prompt`` empty means the built-in default prompt; text
    ending in ``.md`` is a template path (entry layer). ``vars`` fill the prompt template.
    ``max_turns`` counts model calls in one run (default 100, ``DEFAULT_MAX_TURNS``; 0 or
    None: no limit); a run that reaches it ends with status ``max_turns``. ``tool_choice`` is
    ``auto``, ``none``, ``required`` or a tool's name (None: the endpoint's default); a
    forcing choice applies until the model has called a tool in the current turn, then
    ``auto``. ``stream`` None or
    True streams where the endpoint can (not tool turns on a provider that cannot stream
    tools); False asks OpenAI-compatible servers for whole responses (servers whose streamed
    tool calls are broken).

    ``tool_timeout`` is the deadline of every tool call in seconds (None: 600, or the
    profile's shell timeout plus 30 s when longer; a ``delegate`` call then has none, its
    sub-agent being bounded by its own limits); a call past it is stopped and answered
    "timed out".

    Model transport (None: the adapter's default): ``model_timeout`` is the longest wait in
    seconds for the next piece of a model response (default 120; connecting is bounded by
    it too when it is shorter than ``model_connect_timeout``, default 10); ``model_retries``
    the extra attempts after a failed call (default 2); ``model_retry_after_cap`` the longest
    server-requested wait (Retry-After) that is honoured (default 120; a longer one fails
    at once). A stalled endpoint holds a run at most about ``(retries + 1) x timeout``.

    ``store`` is where sessions are kept (a ``postgresql://`` URL, ``file://`` URL or a
    directory; None: the config directory), read by the entry layer (``rho_entry.stores``;
    ``--store`` and ``$RHO_AGENT_STORE`` win over it). It is never saved with a session: it
    says where, not what, and its URL may hold a password.
    """

    system_prompt: str = ""
    vars: Mapping[str, str] = attrs.field(factory=dict)
    model: str = DEFAULT_MODEL
    provider: str | None = None
    base_url: str | None = attrs.field(default=None, validator=_endpoint_url)
    api_key_env: str | None = None
    profile: str | PermissionProfile = "readonly"
    working_dir: str | None = None
    backend: str = "local"
    service_tier: str | None = None
    reasoning_effort: str | None = None
    response_format: Mapping[str, Any] | None = None
    temperature: float | None = None
    stream: bool | None = None
    max_output_tokens: int | None = None
    tool_choice: str | None = None
    databases: Mapping[str, DatabaseConfig] = attrs.field(factory=dict)
    auto_approve: bool = False
    context_window: int = attrs.field(default=DEFAULT_CONTEXT_WINDOW, validator=_positive)
    auto_compact: bool = True
    compact_threshold: float = DEFAULT_COMPACT_THRESHOLD
    max_turns: int | None = attrs.field(default=DEFAULT_MAX_TURNS, validator=_not_negative)
    budget: Budget = Budget()
    tool_output_limit: int = DEFAULT_TOOL_OUTPUT_LIMIT
    tool_timeout: float | None = attrs.field(default=None, validator=_seconds)
    model_timeout: float | None = attrs.field(default=None, validator=_seconds)
    model_connect_timeout: float | None = attrs.field(default=None, validator=_seconds)
    model_retries: int | None = attrs.field(default=None, validator=_count)
    model_retry_after_cap: float | None = attrs.field(default=None, validator=_seconds_or_zero)
    store: str | None = None
