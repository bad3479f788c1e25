"""Settings: one AgentConfig from flags, the environment and a config file.

Precedence, highest first: command-line flags > environment variables > the prompt template's
suggestions (profile, model) > the ``--config`` YAML file > built-in defaults. Besides the
wiring, this is the only module that reads ``os.environ``; everything else receives values.

The environment variables and how their values are read are ``env_settings``'s (its
docstring has the table; ``ENV_VARS`` is named here too).

API keys are read from the variable named by ``api_key_env`` (default: the provider's
``key_variable`` in ``rho_adapters.model.providers``, OPENAI_API_KEY or ANTHROPIC_API_KEY; with
no provider and no base URL, a ``claude-*`` model or ANTHROPIC_API_KEY alone selects Anthropic);
settings only checks that one is present, so the error can say how to set it.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import attrs

from rho_adapters.model.providers import DEMO_MODEL
from rho_domain.config import AgentConfig
from rho_domain.config_checks import check_model_name
from rho_domain.errors import ConfigError
from rho_domain.permissions import PermissionProfile, ShellMode
from rho_domain.url_logins import hide_url_logins
from rho_domain.value_methods import value_eq, value_hash, value_repr
from rho_entry.config import env_settings
from rho_entry.config.databases_config import with_configured_databases
from rho_entry.config.endpoint_checks import (
    api_key_variable,
    hosted_key_missing,
    missing_endpoint,
    provider_of,
)
from rho_entry.config.env_settings import ENV_VARS, base_url_of, parse_env
from rho_entry.config.home import absolute, config_dir

__all__ = [
    "ENV_VARS",
    "Settings",
    "api_key_variable",
    "check_endpoint",
    "endpoint_label",
    "environment",
    "missing_endpoint",
    "provider_of",
    "resolve_settings",
]


@attrs.frozen(kw_only=True)
class Settings:
    """The resolved configuration of one CLI invocation."""

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    config: AgentConfig
    config_dir: Path
    sources: Mapping[str, str] = attrs.field(factory=dict)  # field -> "flag", "env NAME", ...

    @property
    def is_demo(self) -> bool:
        """True when the offline demo model is selected."""
        return self.config.model == DEMO_MODEL


def environment() -> Mapping[str, str]:
    """The process environment (the one sanctioned read of os.environ in the CLI)."""
    return os.environ


def resolve_settings(
    flags: Mapping[str, Any],
    env: Mapping[str, str],
    *,
    base: AgentConfig | None = None,
    suggested: Mapping[str, str] | None = None,
    base_origin: str | None = None,
) -> Settings:
    """Merge ``flags`` (None = not given) over ``env`` over ``suggested`` over ``base``.

    ``base`` is the --config file's AgentConfig (or a resumed session's). Also resolves the
    profile (name, path, or config-dir name), applies ``shell_mode`` to it, and makes a local
    working directory absolute. Raises ConfigError naming the flag or variable at fault, or
    ``base_origin`` (the --config file's path) and the key for a value ``base`` gave.
    """
    home = config_dir(env)
    env_settings.warn_misspelt(env)  # said once, at the start
    config = base or AgentConfig()
    changes: dict[str, Any] = {}
    sources: dict[str, str] = {}
    if base_origin is not None:  # checked below: a bad one names the file and the key
        # tool_choice too: checked against the tools when the agent is built (origin_of)
        named = ("profile", "working_dir", "tool_choice")
        sources.update(dict.fromkeys(named, f"file {base_origin}"))
    for name, value in (suggested or {}).items():
        if value is not None:
            changes[name], sources[name] = value, "template"
    for name, variables in ENV_VARS.items():
        for variable in variables:
            if env.get(variable):
                changes[name] = parse_env(name, env[variable], variable)
                sources[name] = f"env {variable}"
                break
    for field in (*ENV_VARS, "system_prompt", "output_schema"):
        given = flags.get(field)
        # store_true flags are False when absent; --no-stream and --no-auto-approve are
        # Falses that were given
        if given is not None and (given is not False or field in ("stream", "auto_approve")):
            changes[field], sources[field] = given, "flag"
    if flags.get("vars"):
        changes["vars"] = {**config.vars, **flags["vars"]}
    if flags.get("budget"):  # limits given as flags, over the config file's
        changes["budget"], sources["budget"] = (
            attrs.evolve(config.budget, **flags["budget"]),
            "flag",
        )
    if isinstance(changes.get("model"), str):
        with _naming_the_origin("model", sources):
            check_model_name(changes["model"], "model")
    # Every setting a flag or a variable gives is checked one by one, to name its origin: a
    # hand-kept list left --service-tier Flex (RHO_AGENT_SERVICE_TIER) refused naming neither.
    # The profile and the working directory are resolved below, each naming its own.
    checked = ({*ENV_VARS, "output_schema"} - {"profile", "working_dir"}) & changes.keys()
    for name in sorted(checked):
        with _naming_the_origin(name, sources):
            config = attrs.evolve(config, **{name: changes.pop(name)})
    config = attrs.evolve(config, **changes)
    if config.provider is not None:
        with _naming_the_origin("provider", sources):
            _known_provider(config.provider)
    with _naming_the_origin("profile", sources):
        config = attrs.evolve(config, profile=_profile(config, flags.get("shell_mode"), home))
    with _naming_the_origin("working_dir", sources):
        config = attrs.evolve(config, working_dir=_working_dir(config))
    # also with --config (the public implementation skipped it)
    config = with_configured_databases(config, env)
    return Settings(config=config, config_dir=home, sources=sources)


def endpoint_label(config: AgentConfig, env: Mapping[str, str]) -> str:
    """Where the model calls go, for the run header: ``openai at https://...``, ``ollama at
    http://...``, or ``offline`` for the demo. Never raises (an unknown provider is named).
    A URL's password is shown as ``***``: the header goes to terminals and CI logs."""
    if config.model == DEMO_MODEL:
        return "offline (scripted demo)"
    url = base_url_of(config, env)
    shown = hide_url_logins(url) if url else None
    try:
        row = provider_of(attrs.evolve(config, base_url=url), env)
    except ConfigError:
        return f"provider {config.provider} at {shown or '?'}"
    name = "OpenAI-compatible server" if row.name == "generic" else row.name
    return f"{name} at {shown or row.default_base_url or '?'}"


def check_endpoint(settings: Settings, env: Mapping[str, str]) -> None:
    """Fail early, with instructions, when no endpoint and no API key are configured."""
    config = settings.config
    hosted = hosted_key_missing(config, env)  # https://api.openai.com/v1 without its key
    if hosted is not None:
        raise ConfigError(hosted)
    variable = api_key_variable(config, env)
    if settings.is_demo or config.base_url or env.get(variable):
        return
    from rho_adapters.model.providers import guessed_from_model

    provider = provider_of(config, env)
    why = ""
    if not config.api_key_env and guessed_from_model(provider, config.model):
        why = (
            f" (the model name {config.model!r} selects the {provider.name} provider; "
            "--provider and --base-url choose another)"
        )
    raise ConfigError(
        f"no model endpoint configured: {variable} is not set and no base URL is given"
        f"{why}.\n"
        f"  - for a hosted API:   export {variable}=<your key>\n"
        "  - for a local server: rho-agent --base-url http://localhost:11434/v1 --model <name>\n"
        "    (or export OPENAI_BASE_URL=...; any OpenAI-compatible server works)\n"
        '  - to try it offline:  rho-agent --model demo "what is in this directory?"'
    )


def _profile(config: AgentConfig, shell_mode: str | None, home: Path) -> PermissionProfile:
    from rho_entry.config.profile_files import resolve_profile

    profile = resolve_profile(config.profile, config_dir=home)
    if shell_mode is None:
        return profile
    try:
        mode = ShellMode(shell_mode)
    except ValueError:
        raise ConfigError(
            f"--shell-mode {shell_mode!r}: expected restricted or unrestricted"
        ) from None
    # Only the shell axis changes: tools, databases and approvals stay as the profile says.
    return attrs.evolve(profile, shell=mode)


_FLAGS = {
    "base_url": "--base-url",
    "model": "--model",
    "profile": "--profile",
    "working_dir": "--working-dir",
    "max_turns": "--max-turns",
    "repeat_limit": "--repeat-limit",
    "output_schema": "--output-schema",
    "context_window": "--context-window",
    "model_timeout": "--timeout",
    "model_retries": "--retries",
    "backend": "--backend",
    "provider": "--provider",
    "reasoning_effort": "--reasoning-effort",
}


def _known_provider(provider: str) -> None:
    """ConfigError listing the known providers when ``provider`` is none of them: said here,
    where its origin is known, not when the model is built."""
    from rho_adapters.model.providers import resolve_provider

    resolve_provider(provider, None)


@contextlib.contextmanager
def _naming_the_origin(name: str, sources: Mapping[str, str]) -> Iterator[None]:
    """Prefix a ConfigError about setting ``name`` with where its value came from (the flag,
    the variable, the template), so that the user knows what to change."""
    try:
        yield
    except ConfigError as exc:
        origin = origin_of(name, sources)
        if origin is None:
            raise
        raise ConfigError(f"{origin}: {exc}") from None


def origin_of(name: str, sources: Mapping[str, str]) -> str | None:
    """Where setting ``name``'s value came from, as a refusal names it (``--tool-choice``,
    ``RHO_AGENT_TOOL_CHOICE``, ``the template's model``, ``FILE: key``); None when it is
    the default's or a stored session's."""
    source = sources.get(name, "")
    if source == "flag":
        return _FLAGS.get(name, f"--{name.replace('_', '-')}")
    if source.startswith("env "):
        return source.removeprefix("env ")
    if source == "template":
        return f"the template's {name}"
    if source.startswith("file "):
        return f"{source.removeprefix('file ')}: {name}"
    return None


def _working_dir(config: AgentConfig) -> str | None:
    if config.backend != "local":
        return config.working_dir  # a path inside a sandbox: kept verbatim
    path = Path(absolute(config.working_dir or ".")).resolve()
    if path.exists() and not path.is_dir():
        raise ConfigError(f"working directory {config.working_dir!r} is a file, not a directory")
    if not path.is_dir():
        raise ConfigError(f"working directory {config.working_dir!r} does not exist")
    return str(path)
