"""The composition root: the one place that turns config and environment into adapters.

Every default is built inside a function (never at import, never as a default argument), and
every port can be overridden by the caller. Heavy adapters (httpx, drivers) are imported here
lazily, only when a session actually needs them.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import attrs

from rho_domain.agent import Agent
from rho_domain.config import AgentConfig
from rho_domain.errors import ConfigError
from rho_domain.loop.session_ports import Closeable, SessionPorts
from rho_domain.permissions import (
    DatabaseMode,
    PermissionProfile,
    ShellMode,
)
from rho_domain.ports.clock import Clock
from rho_domain.ports.executor import Executor
from rho_domain.ports.line_search import LineSearcher
from rho_domain.ports.model import ChatModel
from rho_domain.ports.signals import SignalSource
from rho_domain.ports.spreadsheet import SpreadsheetReader
from rho_domain.ports.store import SessionStore, SignalingStore
from rho_domain.pricing import PriceTable
from rho_domain.tools.source import ToolSource
from rho_entry.config.home import config_dir

if TYPE_CHECKING:
    from rho_domain.ports.approver import Approver
    from rho_domain.ports.database import Database

# Where the sandbox notice goes: the CLI prints it as a warning line, a service's logging
# configuration decides, and a script without one sees it on stderr (logging's last resort).
sandbox_log = logging.getLogger("rho_entry.sandbox")
_SAID: set[str] = set()


def profile_of(config: AgentConfig) -> PermissionProfile:
    """The config's permission profile (``config_files.resolve_profile`` under this
    environment's config directory)."""
    from rho_entry.config.config_files import resolve_profile as resolve

    return resolve(config.profile, config_dir=config_dir(os.environ))


def load_prices() -> PriceTable:
    """The price table of this environment (shipped prices, then the user's prices.yaml)."""
    from rho_entry.config.prices import load_prices as load

    return load(os.environ)


def working_dir_of(config: AgentConfig) -> str:
    """The config's working directory, absolute and real (the current one when unset)."""
    # On strings: every Session asks (build_executor), and pathlib's objects around the same
    # lookup cost several times the lookup itself.
    return os.path.realpath(os.path.expanduser(config.working_dir or os.getcwd()))


def build_spreadsheet_reader() -> SpreadsheetReader:
    """The reader ``read_excel`` uses (openpyxl, imported when a file is read)."""
    from rho_adapters.local.spreadsheet import OpenpyxlReader

    return OpenpyxlReader()


def build_line_searcher() -> LineSearcher:
    """Where ``grep`` runs its pattern without ripgrep: a killable worker process."""
    from rho_adapters.local.line_search import ProcessLineSearcher

    return ProcessLineSearcher()


def render_system_prompt(
    config: AgentConfig, profile: PermissionProfile, tools: tuple[str, ...] = ()
) -> str:
    """The system prompt for ``config`` and ``profile`` (template, facts, tool names)."""
    from rho_entry.config.templates import resolve_system_prompt

    return resolve_system_prompt(
        config, profile, working_dir_of(config), config_dir(os.environ), tools=tools
    )


def build_ports(
    agent: Agent,
    *,
    model: ChatModel | None = None,
    executor: Executor | None = None,
    store: SessionStore | str | Path | None = None,
    clock: Clock | None = None,
    signals: SignalSource | None = None,
    databases: Mapping[str, Database] | None = None,
    approver: Approver | None = None,
    environ: Mapping[str, str] | None = None,
    tool_source: ToolSource | None = None,
) -> SessionPorts:
    """Fill every port the caller did not pass (the adapters built here are ``owned``:
    the session closes them). The tool source (MCP servers) is built from the config and the
    profile when not passed; None when they start no server. ``store`` may be a URL or a
    path (``rho_entry.config.stores``)."""
    env = os.environ if environ is None else environ
    if isinstance(store, str | Path):
        from rho_entry.config.stores import as_store

        store = as_store(store, env)
        opened = store
    else:
        opened = None
    owned: list[Closeable] = []
    if opened is not None and hasattr(opened, "aclose"):
        owned.append(cast(Closeable, opened))  # a store opened here closes with the session
    config = agent.config
    if clock is None:
        from rho_adapters.clock import SystemClock

        clock = SystemClock()
    if model is None:
        model = build_model(config, env, clock)
        owned.append(model)
    if executor is None:
        executor = build_executor(config, agent.profile, store, environ=env)
        owned.append(executor)
    if signals is None and store is not None:
        signals = build_signals(store)
    if databases is None:
        databases = build_databases(config, agent.profile, env)
        owned.extend(databases.values())
    if tool_source is None:
        from rho_entry.config.mcp_servers import build_tool_source

        tool_source = build_tool_source(config, agent.profile, store, env)
        if tool_source is not None:
            owned.append(tool_source)
    return SessionPorts(
        model=model,
        executor=executor,
        clock=clock,
        store=store,
        signals=signals,
        approver=approver,
        databases=databases,
        owned=tuple(owned),
        tool_source=tool_source,
    )


def api_key_for(config: AgentConfig, environ: Mapping[str, str]) -> str | None:
    """The API key from the variable ``settings.api_key_variable`` names. A variable the
    config names explicitly must be set; the provider's usual one may be absent (local
    servers need no key)."""
    from rho_entry.config.settings import api_key_variable

    return _api_key(config, api_key_variable(_with_base_url(config, environ), environ), environ)


def _api_key(config: AgentConfig, variable: str, environ: Mapping[str, str]) -> str | None:
    key = environ.get(variable)
    if config.api_key_env and not key:
        raise ConfigError(
            f"api_key_env names {variable!r}, but that environment variable is empty or "
            "unset: export it, or change api_key_env"
        )
    return key


def base_url_from(environ: Mapping[str, str]) -> str | None:
    """The endpoint the environment names (``RHO_AGENT_BASE_URL``, then ``OPENAI_BASE_URL``,
    as for the CLI), for a config that names none."""
    from rho_entry.config.settings import ENV_VARS

    return next((environ[v] for v in ENV_VARS["base_url"] if environ.get(v)), None)


def _with_base_url(config: AgentConfig, environ: Mapping[str, str]) -> AgentConfig:
    """``config`` with the environment's base URL when it names none (as the CLI does)."""
    if config.base_url:
        return config
    return attrs.evolve(config, base_url=base_url_from(environ))


def build_model(config: AgentConfig, environ: Mapping[str, str], clock: Clock) -> ChatModel:
    """The ChatModel for ``config``, chosen by ``rho_adapters.model.build_model`` (the demo
    model too, which needs no endpoint, key or provider)."""
    from rho_adapters.model import build_model as build
    from rho_adapters.model.providers import DEMO_MODEL
    from rho_adapters.model.proxies import ProxyRoutes

    if config.model == DEMO_MODEL:
        return build(model=DEMO_MODEL, base_url=None, api_key=None, clock=clock)
    from rho_entry.config.settings import api_key_variable, missing_endpoint, provider_of

    missing = missing_endpoint(config, environ)
    if missing is not None:  # fail here, not at every run with "Name or service not known"
        raise ConfigError(
            f"{missing}: set {api_key_variable(config, environ)}, or give a base URL "
            "(AgentConfig.base_url, OPENAI_BASE_URL) for a local server, or use model "
            "'demo' to try offline"
        )
    config = _with_base_url(config, environ)
    # One provider row for the guess, the key's variable and the key (a Session builds its
    # model each time; the row was looked up three times here).
    row = provider_of(config, environ)
    guessed = row.name
    variable = config.api_key_env or row.key_variable  # api_key_variable's rule
    return build(
        model=config.model,
        base_url=config.base_url,
        api_key=_api_key(config, variable, environ),
        # a guess from the model name or the key must reach the adapter; "generic" must not
        # (a host that says nothing is probed)
        provider=config.provider or (guessed if guessed != "generic" else None),
        service_tier=config.service_tier,
        reasoning_effort=config.reasoning_effort,
        temperature=config.temperature,
        max_output_tokens=config.max_output_tokens,
        response_format=config.response_format,
        stream=config.stream,
        clock=clock,
        key_variable=variable,
        proxies=ProxyRoutes.from_environ(environ),  # HTTPS_PROXY, NO_PROXY...: as httpx reads them
        **transport_of(config),
    )


def transport_of(config: AgentConfig) -> dict[str, Any]:
    """The model adapter's ``timeouts`` and ``retry`` for the config's ``model_*`` settings
    (only those it sets; the adapter's defaults stay for the rest)."""
    from rho_adapters.model import RetryPolicy, Timeouts

    out: dict[str, Any] = {}
    idle, connect = config.model_timeout, config.model_connect_timeout
    if idle is not None or connect is not None:
        base = Timeouts()
        idle_s = base.idle if idle is None else idle
        out["timeouts"] = Timeouts(
            # a short --timeout also bounds connecting, unless that is set on its own
            connect=connect if connect is not None else min(base.connect, idle_s),
            idle=idle_s,
            flex_idle=base.flex_idle if idle is None else idle,
        )
    retries, cap = config.model_retries, config.model_retry_after_cap
    if retries is not None or cap is not None:
        policy = RetryPolicy()
        out["retry"] = attrs.evolve(
            policy,
            max_retries=policy.max_retries if retries is None else retries,
            max_server_delay=policy.max_server_delay if cap is None else cap,
        )
    return out


def build_executor(
    config: AgentConfig,
    profile: PermissionProfile,
    store: SessionStore | None,
    *,
    search_path: tuple[str, ...] | None = None,
    environ: Mapping[str, str] | None = None,
) -> Executor:
    """The executor the config's ``backend`` names, enforcing ``profile``. A local one whose
    restricted commands run without the sandbox says so (``say_unprotected``); ``search_path``
    replaces the programs' default path (tests: a machine without bwrap). ``environ`` (default
    the process's, read live as each unrestricted command starts) is the commands' base
    environment, where the config directory kept from tools is found, and Daytona's settings;
    nothing below this function reads ``os.environ``."""
    env = os.environ if environ is None else environ
    if config.backend == "daytona":
        return build_daytona_executor(config, profile, env)
    if config.backend != "local":
        raise ConfigError(f"unknown backend {config.backend!r}: use local or daytona")
    from rho_adapters.local import LocalExecutor
    from rho_entry.config.home import config_dir_name

    root = working_dir_of(config)
    # Real paths as strings (a Session builds this each time: pathlib's objects cost more than
    # the two lookups). The agent's own configuration (databases.yaml, profiles, sessions) is
    # never read by a tool, unless the operator made the workspace part of it.
    home = os.path.realpath(config_dir_name(env))
    inside = root == home or root.startswith(home.rstrip("/") + "/")
    secret = () if inside else (home,)
    executor = LocalExecutor(
        root,
        file_write=profile.file_write,
        allow_shell=profile.shell is ShellMode.UNRESTRICTED,
        extra_read_roots=profile.extra_read_roots,
        read_outside=profile.read_outside_workspace,
        protected_paths=tuple(str(p) for p in _store_paths(store)),
        base_env=env,  # read as each command starts (os.environ stays live)
        secret_locations=secret,
        limits=profile.limits,
        search_path=search_path,
        resolved=True,  # root and home: real paths looked up above, for this Session
    )
    say_unprotected(executor.unprotected())
    return executor


def probe_sandbox_ahead(config: AgentConfig, profile: PermissionProfile) -> None:
    """Start the bubblewrap probe that ``build_executor`` will wait for with ``config`` and
    ``profile`` (a local backend, a restricted shell), in a thread, so that the probe's
    process runs while the caller does the rest of its start-up; nothing otherwise. The
    executor's answer and its notice are the same, and said at the same point."""
    if config.backend != "local" or profile.shell is ShellMode.UNRESTRICTED:
        return
    from rho_adapters.local.executor import default_search_path
    from rho_adapters.local.runner import probe_ahead

    probe_ahead(default_search_path())


def say_unprotected(notice: str | None) -> None:
    """Log ``notice`` (what restricted commands lose without bubblewrap) as a warning, once
    per process: the first session says it, at its start, and no later one repeats it."""
    if notice is not None and notice not in _SAID:
        _SAID.add(notice)
        sandbox_log.warning("%s", notice)


def build_daytona_executor(
    config: AgentConfig,
    profile: PermissionProfile,
    environ: Mapping[str, str],
    *,
    snapshot: str | None = None,
    dockerfile: str | None = None,
) -> Executor:
    """A Daytona sandbox executor. The sandbox enforces the same profile as a local one;
    host paths (extra read roots, the session directory) mean nothing there. ``snapshot`` or
    ``dockerfile`` (its text; ``--snapshot``, ``--dockerfile``) replace the environment's
    image and snapshot."""
    from rho_adapters.daytona import DaytonaExecutor, DaytonaSettings
    from rho_adapters.model.proxies import ProxyRoutes

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
        proxies=ProxyRoutes.from_environ(environ),
    )
    if snapshot is not None or dockerfile is not None:
        settings = attrs.evolve(settings, snapshot=snapshot, dockerfile=dockerfile, image=None)
    if remote_dir := environ.get("RHO_AGENT_DAYTONA_WORKING_DIR"):
        settings = attrs.evolve(settings, working_dir=remote_dir)
    return DaytonaExecutor(
        settings,
        file_write=profile.file_write,
        allow_shell=profile.shell is ShellMode.UNRESTRICTED,
        limits=profile.limits,
        read_outside=profile.read_outside_workspace,
    )


def _store_paths(store: SessionStore | None) -> tuple[Path, ...]:
    root = getattr(store, "root", None)
    return (Path(root),) if root is not None else ()


def build_signals(store: SessionStore) -> SignalSource | None:
    """The signals a store's sessions carry (``SignalingStore``: a file store's sentinel
    files), else None."""
    return store.signals() if isinstance(store, SignalingStore) else None


def database_warnings(config: AgentConfig, environ: Mapping[str, str]) -> list[str]:
    """Problems of the configured databases that would fail their first query (a missing
    driver, an unset password variable, a missing SQLite file), found without connecting,
    for the CLI and ``rho-agent serve`` to print when they start. Never raises for them."""
    if not config.databases:
        return []
    from rho_adapters.db import open_databases
    from rho_adapters.db.factory import database_problems

    try:
        databases = open_databases(config.databases, mode=DatabaseMode.READONLY, environ=environ)
    except ConfigError as exc:  # an unknown engine: the session itself will refuse it
        return [str(exc)]
    return database_problems(databases)


def build_databases(
    config: AgentConfig, profile: PermissionProfile, environ: Mapping[str, str]
) -> dict[str, Database]:
    """The configured databases, opened lazily in the profile's database mode."""
    if not config.databases:
        return {}
    from rho_adapters.db import open_databases

    return open_databases(config.databases, mode=profile.database, environ=environ)
