"""The composition root: the one place that turns config and environment into adapters.

Every default is built inside a function (never at import, never as a default argument), and
every port can be overridden by the caller. Heavy adapters (httpx, drivers) are imported here
lazily, only when a session actually needs them.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs

from rho_domain.agent import Agent
from rho_domain.config import AgentConfig
from rho_domain.errors import ConfigError
from rho_domain.permissions import (
    BUILTIN_PROFILES,
    PermissionProfile,
    ShellMode,
    builtin_profile,
)
from rho_domain.ports.clock import Clock
from rho_domain.ports.database import Database
from rho_domain.ports.executor import Executor
from rho_domain.ports.model import ChatModel
from rho_domain.ports.signals import SignalSource
from rho_domain.ports.store import SessionStore
from rho_domain.tools.registry import ToolRegistry

DEMO_MODEL = "demo"


@attrs.frozen(kw_only=True)
class Ports:
    model: ChatModel
    executor: Executor
    clock: Clock
    store: SessionStore | None
    signals: SignalSource | None
    databases: Mapping[str, Database]
    owned: tuple[Any, ...]  # adapters created here, closed with the session


def config_home(environ: Mapping[str, str] | None = None) -> Path:
    """The config directory (one rule, in ``rho_entry.settings.config_dir``)."""
    from rho_entry.settings import config_dir

    return config_dir(os.environ if environ is None else environ)


def resolve_profile(profile: str | PermissionProfile) -> PermissionProfile:
    """A PermissionProfile from a value, a built-in name, a YAML path or a name under
    <config home>/profiles/."""
    if isinstance(profile, PermissionProfile):
        return profile
    if profile in BUILTIN_PROFILES:
        return builtin_profile(profile)
    from rho_entry.config_files import load_profile

    return load_profile(profile, config_home())


def working_dir_of(config: AgentConfig) -> str:
    return str(Path(config.working_dir or os.getcwd()).expanduser().resolve())


def build_registry(config: AgentConfig, profile: PermissionProfile) -> ToolRegistry:
    """The profile's tools, the databases' tools, and ``delegate`` (one level deep)."""
    from rho_adapters.local.spreadsheet import OpenpyxlReader
    from rho_domain.tools.delegate import DelegateTool
    from rho_domain.tools.factory import build_registry as build

    extra = () if profile.bash_only else (DelegateTool(),)
    return build(
        profile,
        databases=config.databases,
        spreadsheet_reader=OpenpyxlReader(),
        extra=extra,
        output_limit=config.tool_output_limit,
    )


def render_system_prompt(
    config: AgentConfig, profile: PermissionProfile, tools: tuple[str, ...] = ()
) -> str:
    from rho_entry.templates import resolve_system_prompt

    return resolve_system_prompt(
        config, profile, working_dir_of(config), config_home(), tools=tools
    )


def build_ports(
    agent: Agent,
    *,
    model: ChatModel | None = None,
    executor: Executor | None = None,
    store: SessionStore | None = None,
    clock: Clock | None = None,
    signals: SignalSource | None = None,
    databases: Mapping[str, Database] | None = None,
    environ: Mapping[str, str] | None = None,
) -> Ports:
    """Fill every port the caller did not pass."""
    env = os.environ if environ is None else environ
    owned: list[Any] = []
    config = agent.config
    if clock is None:
        from rho_adapters.clock import SystemClock

        clock = SystemClock()
    if model is None:
        model = build_model(config, env, clock)
        owned.append(model)
    if executor is None:
        executor = build_executor(config, agent.profile, store)
        owned.append(executor)
    if signals is None and store is not None:
        signals = build_signals(store)
    if databases is None:
        databases = build_databases(config, agent.profile, env)
        owned.extend(databases.values())
    return Ports(
        model=model,
        executor=executor,
        clock=clock,
        store=store,
        signals=signals,
        databases=databases,
        owned=tuple(owned),
    )


def api_key_for(config: AgentConfig, environ: Mapping[str, str]) -> str | None:
    """The API key from the variable ``settings.api_key_variable`` names. A variable the
    config names explicitly must be set; the provider's usual one may be absent (local
    servers need no key)."""
    from rho_entry.settings import api_key_variable

    variable = api_key_variable(config)
    key = environ.get(variable)
    if config.api_key_env and not key:
        raise ConfigError(
            f"api_key_env names {variable!r}, but that environment variable is empty or "
            "unset: export it, or change api_key_env"
        )
    return key


def build_model(config: AgentConfig, environ: Mapping[str, str], clock: Clock) -> ChatModel:
    if config.model == DEMO_MODEL:
        from rho_entry.demo import DemoModel

        return DemoModel()
    from rho_adapters.model import build_model as build

    return build(
        model=config.model,
        base_url=config.base_url,
        api_key=api_key_for(config, environ),
        provider=config.provider,
        service_tier=config.service_tier,
        reasoning_effort=config.reasoning_effort,
        temperature=config.temperature,
        max_output_tokens=config.max_output_tokens,
        response_format=config.response_format,
        stream=config.stream,
        clock=clock,
    )


def build_executor(
    config: AgentConfig, profile: PermissionProfile, store: SessionStore | None
) -> Executor:
    if config.backend == "daytona":
        return build_daytona_executor(config, profile, os.environ)
    if config.backend != "local":
        raise ConfigError(f"unknown backend {config.backend!r}: use local or daytona")
    from rho_adapters.local import LocalExecutor

    return LocalExecutor(
        working_dir_of(config),
        file_write=profile.file_write,
        allow_shell=profile.shell is ShellMode.UNRESTRICTED,
        extra_read_roots=profile.extra_read_roots,
        protected_paths=tuple(str(p) for p in _store_paths(store)),
        base_env=dict(os.environ),
    )


def build_daytona_executor(
    config: AgentConfig, profile: PermissionProfile, environ: Mapping[str, str]
) -> Executor:
    """A Daytona sandbox executor. The sandbox enforces the same profile as a local one;
    host paths (extra read roots, the session directory) mean nothing there."""
    from rho_adapters.daytona import DaytonaExecutor, DaytonaSettings

    api_key = environ.get("DAYTONA_API_KEY")
    if not api_key:
        raise ConfigError(
            "backend daytona needs an API key: export DAYTONA_API_KEY=<key> "
            "(and DAYTONA_API_URL for a self-hosted server)"
        )
    settings = DaytonaSettings(
        api_key=api_key,
        api_url=environ.get("DAYTONA_API_URL")
        or environ.get("DAYTONA_SERVER_URL")
        or "https://app.daytona.io/api",
        target=environ.get("DAYTONA_TARGET") or None,
        image=environ.get("RHO_AGENT_DAYTONA_IMAGE") or None,
        snapshot=environ.get("RHO_AGENT_DAYTONA_SNAPSHOT") or None,
    )
    if remote_dir := environ.get("RHO_AGENT_DAYTONA_WORKING_DIR"):
        settings = attrs.evolve(settings, working_dir=remote_dir)
    return DaytonaExecutor(
        settings,
        file_write=profile.file_write,
        allow_shell=profile.shell is ShellMode.UNRESTRICTED,
    )


def _store_paths(store: SessionStore | None) -> tuple[Path, ...]:
    root = getattr(store, "root", None)
    return (Path(root),) if root is not None else ()


def build_signals(store: SessionStore) -> SignalSource | None:
    """File signals for a file store (sentinel files in each session directory)."""
    from rho_adapters.store import FileSessionStore, FileSignals

    if not isinstance(store, FileSessionStore):
        return None
    return FileSignals(store.session_dir)


def build_databases(
    config: AgentConfig, profile: PermissionProfile, environ: Mapping[str, str]
) -> dict[str, Database]:
    if not config.databases:
        return {}
    from rho_adapters.db import open_databases

    return open_databases(config.databases, mode=profile.database, environ=environ)
