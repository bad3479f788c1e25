"""The composition root: the one place that turns config and environment into adapters.

Every default is built inside a function (never at import, never as a default argument), and
every port can be overridden by the caller. Heavy adapters (httpx, drivers) are imported here
lazily, only when a session actually needs them.

``build_ports`` fills a session's ports; the model is built by ``rho_entry.model_wiring``, the
executor by ``rho_entry.executor_wiring``, whose names are imported from here (``__all__``).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, cast

from rho_domain.agent import Agent
from rho_domain.config import AgentConfig
from rho_domain.loop.guarded_clock import GuardedClock
from rho_domain.loop.session_ports import Closeable, SessionPorts
from rho_domain.permissions import (
    DatabaseMode,
    PermissionProfile,
)
from rho_domain.ports.clock import Clock
from rho_domain.ports.executor import Executor
from rho_domain.ports.line_search import LineSearcher
from rho_domain.ports.model import ChatModel
from rho_domain.ports.signals import SignalSource
from rho_domain.ports.spreadsheet import SpreadsheetReader
from rho_domain.ports.store import SessionStore, signals_of
from rho_domain.pricing import PriceTable
from rho_domain.tools.source import ToolSource
from rho_entry.config.env_settings import base_url_from
from rho_entry.config.home import config_dir
from rho_entry.executor_wiring import (
    build_daytona_executor,
    build_executor,
    probe_sandbox_ahead,
    say_unprotected,
    serve_session,
    working_dir_of,
)
from rho_entry.model_wiring import api_key_for, build_model, transport_of

if TYPE_CHECKING:
    from rho_domain.ports.approver import Approver
    from rho_domain.ports.database import Database

__all__ = [
    "api_key_for",
    "base_url_from",
    "build_databases",
    "build_daytona_executor",
    "build_executor",
    "build_line_searcher",
    "build_model",
    "build_ports",
    "build_signals",
    "build_spreadsheet_reader",
    "database_warnings",
    "load_prices",
    "probe_sandbox_ahead",
    "profile_of",
    "render_system_prompt",
    "say_unprotected",
    "transport_of",
    "working_dir_of",
]


def profile_of(config: AgentConfig) -> PermissionProfile:
    """The config's permission profile (``profile_files.resolve_profile`` under this
    environment's config directory)."""
    from rho_entry.config.profile_files import resolve_profile as resolve

    return resolve(config.profile, config_dir=config_dir(os.environ))


def load_prices() -> PriceTable:
    """The price table of this environment (shipped prices, then the user's prices.yaml)."""
    from rho_entry.config.prices import load_prices as load

    return load(os.environ)


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
    from rho_entry.config.system_prompt import resolve_system_prompt

    return resolve_system_prompt(
        config, profile, working_dir_of(config), config_dir(os.environ), tools=tools
    )


def build_ports(
    agent: Agent,
    *,
    model: ChatModel | None = None,
    executor: Executor | None = None,
    store: SessionStore | str | os.PathLike[str] | None = None,
    clock: Clock | None = None,
    signals: SignalSource | None = None,
    databases: Mapping[str, Database] | None = None,
    approver: Approver | None = None,
    environ: Mapping[str, str] | None = None,
    tool_source: ToolSource | None = None,
    session_id: str | None = None,
    resumed: bool = False,
) -> SessionPorts:
    """Fill every port the caller did not pass (the adapters built here are ``owned``:
    the session closes them). The tool source (MCP servers) is built from the config and the
    profile when not passed; None when they start no server. ``store`` may be a URL or a
    path (``rho_entry.config.stores``). A port given as something else (``model="gpt-5"``)
    raises ``TypeError`` naming the keyword (``given_ports``). ``session_id`` and ``resumed``
    reach the executor built here (``build_executor``: a Daytona sandbox's label), and a
    Daytona executor given without a session whose sandbox is not created yet
    (``serve_session``)."""
    from rho_entry.given_ports import refuse_non_ports

    refuse_non_ports(
        {
            "model": model,
            "executor": executor,
            "store": None if isinstance(store, str | Path) else store,
            "clock": clock,
            "signals": signals,
            "approver": approver,
            "databases": databases,
            "tool_source": tool_source,
        }
    )
    env = os.environ if environ is None else environ
    if isinstance(store, str | os.PathLike):
        from rho_entry.config.stores import as_store

        store = as_store(store, env)
        opened = store
    else:
        opened = None
    owned: list[Closeable] = []
    if opened is not None and hasattr(opened, "aclose"):
        owned.append(cast(Closeable, opened))  # a store opened here closes with the session
    config = agent.config
    from rho_adapters.clock import SYSTEM_CLOCK

    if clock is None:
        clock = SYSTEM_CLOCK  # one per process: it and its guard are shared by the sessions
    else:  # a given clock that fails before it ever tells the time: dated by this one
        GuardedClock.of(clock, fallback=SYSTEM_CLOCK)
    if model is None:
        model = build_model(config, env, clock)
        owned.append(model)
    if executor is None:
        executor = build_executor(
            config, agent.profile, store, environ=env, session_id=session_id, resumed=resumed
        )
        owned.append(executor)
    elif session_id is not None:  # the CLI's --dockerfile/--snapshot sandbox: labelled now
        serve_session(executor, session_id, resumed=resumed)
    if signals is None and store is not None:
        signals = build_signals(store)
    if databases is None:
        databases = build_databases(config, agent.profile, env, executor)
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
        line_searcher=build_line_searcher(),  # the output schema's patterns, off the loop
    )


def build_signals(store: SessionStore) -> SignalSource | None:
    """The signals a store's sessions carry (``SignalingStore``: a file store's sentinel
    files), else None."""
    return signals_of(store)


def database_warnings(config: AgentConfig, environ: Mapping[str, str]) -> list[str]:
    """Problems of the configured databases that would fail their first query (a missing
    driver, an unset password variable, a missing SQLite file), found without connecting,
    for the CLI and ``rho-agent serve`` to print when they start. Never raises for them; raises
    the ``ConfigError`` every session would (an alias databases.yaml would refuse, an unset
    ``${VAR}``), so that it is said once, as the error it is, before anything starts."""
    if not config.databases:
        return []
    from rho_adapters.db import open_databases
    from rho_adapters.db.factory import database_problems

    databases = open_databases(config.databases, mode=DatabaseMode.READONLY, environ=environ)
    return database_problems(databases)


def build_databases(
    config: AgentConfig,
    profile: PermissionProfile,
    environ: Mapping[str, str],
    executor: Executor | None = None,
) -> dict[str, Database]:
    """The configured databases, opened lazily in the profile's database mode; a SQLite
    file judged by ``executor``'s secrets policy where it is a local one (its homes, the
    agent's directories, what its environment names), else by this machine's homes and the
    agent's configuration directory (a Daytona sandbox's policy is the sandbox's; the file
    is opened here)."""
    if not config.databases:
        return {}
    from rho_adapters.db import open_databases
    from rho_adapters.local import LocalExecutor
    from rho_adapters.local.homes import agent_homes
    from rho_domain.secrets import SecretPolicy
    from rho_entry.config.home import config_dir_name

    if isinstance(executor, LocalExecutor):
        policy = executor.policy
    else:
        own = os.path.realpath(config_dir_name(environ))
        policy = SecretPolicy(locations=(own,), homes=agent_homes(environ))
    return open_databases(
        config.databases, mode=profile.database, environ=environ, file_policy=policy
    )
