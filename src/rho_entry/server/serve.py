"""``rho-agent serve [--host 127.0.0.1] [--port 8765]``: run the HTTP server with uvicorn.

The model endpoint, key and default model come from the environment as for the CLI
(``OPENAI_BASE_URL``, ``OPENAI_API_KEY``, ``RHO_AGENT_MODEL``, ...); the server's limits from
``RHO_AGENT_SERVER_*`` (``rho_entry.server.settings``) or the flags below. Ctrl+C, SIGTERM,
SIGHUP (its terminal gone; left ignored under ``nohup``) or any other signal whose default ends
a process (SIGQUIT, SIGUSR1, ...) stops it: runs in progress are cancelled and end
``cancelled`` on disk, so ``--resume`` (or ``POST /resume``) continues them.
Exit codes: 0 stopped (128 + the signal's number for a signal other than SIGTERM, SIGINT,
SIGHUP), 1 configuration error (found before listening: an unknown allowed
profile, no model endpoint, a busy port; ``startup_checks``).

Every request needs the token: ``RHO_AGENT_SERVER_TOKEN``, else one generated per start,
written to ``<config dir>/server/<host>-<port>.token`` (0600, removed at exit; ``token_file``)
and printed once as the dashboard's URL, in its fragment (``/dashboard#token=...``: a fragment
never leaves the browser, so it is in no request line, log or Referer).

``--durable`` (the ``dbos`` extra) puts every run on a queue of durable runs (``--queue``, in
``--durable-db``: by default the PostgreSQL store's own database, else ``durable.sqlite`` in
the config directory) and consumes it in process: a server that dies mid-run is taken over by
the other durable servers of that queue (``rho_entry.server.durable_runs``, docs/durable.md).

Once it listens, the process's start-up heap (the modules, the app, the settings) is frozen
(``gc.freeze``): the collector's later full passes skip it, and a full pass holds the event
loop, every session's stream with it, for as long as it walks (issue 33: half of a busy
server's tracked objects are start-up's).
"""

from __future__ import annotations

import argparse
import secrets
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from rho_domain.errors import ConfigError, RhoError
from rho_entry import stop_signals
from rho_entry.config.home import expanded
from rho_entry.server.authority import LOOPBACK_HOSTS, host_name
from rho_entry.server.settings import (
    DEFAULT_HOST,
    DEFAULT_PORT,
    ServerSettings,
    check_bind,
)
from rho_entry.server.startup_checks import check_endpoint, check_profiles, listen
from rho_entry.server.uvicorn_server import build_server, freeze_start_up
from rho_entry.usage import UsageParser, at_least_one, port, seconds

if TYPE_CHECKING:
    from rho_entry.server.durable_runs import DurableSettings

# freeze_start_up moved with the server it belongs to (uvicorn_server): re-exported
__all__ = ["FROM_ENVIRONMENT", "WILDCARDS", "check_token_home", "freeze_start_up", "main"]


# The main command's endpoint options: serve reads them from the environment, as the CLI can
# (``rho_entry.config.settings.ENV_VARS``); given as options they are answered with the variable.
FROM_ENVIRONMENT = {
    "--model": "RHO_AGENT_MODEL",
    "--base-url": "RHO_AGENT_BASE_URL",
    "--provider": "RHO_AGENT_PROVIDER",
    "--api-key-env": "RHO_AGENT_API_KEY_ENV",
    "--reasoning-effort": "RHO_AGENT_REASONING_EFFORT",
    "--service-tier": "RHO_AGENT_SERVICE_TIER",
    "--context-window": "RHO_AGENT_CONTEXT_WINDOW",
    "--timeout": "RHO_AGENT_TIMEOUT",
    "--retries": "RHO_AGENT_RETRIES",
}


def _parser() -> argparse.ArgumentParser:
    parser = UsageParser(
        prog="rho-agent serve",
        description="Serve sessions over HTTP: a JSON API and a Server-Sent Events stream "
        "(docs/server.md).",
    )
    parser.from_environment = FROM_ENVIRONMENT
    parser.add_argument(
        "--host", default=DEFAULT_HOST, help=f"address to bind (default {DEFAULT_HOST}, loopback)"
    )
    parser.add_argument(
        "--port",
        type=port,
        default=DEFAULT_PORT,
        help=f"port (default {DEFAULT_PORT}; 0: any free one)",
    )
    parser.add_argument(
        "--root",
        action="append",
        default=[],
        metavar="DIR",
        help="a directory working directories must lie in (repeatable; default: the cwd, or "
        "RHO_AGENT_SERVER_ROOTS)",
    )
    parser.add_argument(
        "--allow-profile",
        action="append",
        default=[],
        metavar="NAME",
        help="a profile clients may pick (repeatable; the first is the default; default: "
        "readonly, or RHO_AGENT_SERVER_PROFILES)",
    )
    parser.add_argument(
        "--max-runs", type=at_least_one, metavar="N", help="runs in progress at once (default 32)"
    )
    parser.add_argument(
        "--max-streams",
        type=at_least_one,
        metavar="N",
        help="event streams open at once (default 100; or RHO_AGENT_SERVER_MAX_STREAMS)",
    )
    parser.add_argument(
        "--mcp-config",
        metavar="FILE",
        help="YAML file with mcp_servers: (MCP servers whose tools sessions may use; docs/mcp.md)",
    )
    parser.add_argument(
        "--allow-host",
        action="append",
        default=[],
        metavar="NAME",
        help="a name the Host header may carry besides 127.0.0.1, localhost and ::1, such as "
        "a reverse proxy's (repeatable; or RHO_AGENT_SERVER_ALLOW_HOSTS)",
    )
    parser.add_argument(
        "--store",
        metavar="URL",
        help="where sessions are kept: postgresql://... (servers on other hosts share them), "
        "a directory or file:///path (default: $RHO_AGENT_STORE, else the config dir's)",
    )
    durable = parser.add_argument_group("durable runs (extra dbos; docs/durable.md)")
    durable.add_argument(
        "--durable",
        action="store_true",
        help="run sessions as durable runs on a queue this server and its peers consume",
    )
    durable.add_argument(
        "--durable-db",
        metavar="URL",
        help="the queue's database: a SQLite path or postgresql:// URL (default: the "
        "PostgreSQL --store, else durable.sqlite in the config directory)",
    )
    durable.add_argument("--queue", default="rho-runs", help="the queue (default rho-runs)")
    durable.add_argument(
        "--concurrency",
        type=at_least_one,
        metavar="N",
        help="durable runs at once here (default --max-runs)",
    )
    durable.add_argument(
        "--dead-after",
        type=seconds,
        default=10.0,
        metavar="S",
        help="a peer silent this long is dead and its runs taken over (seconds, default 10)",
    )
    durable.add_argument(
        "--poll",
        type=seconds,
        default=1.0,
        metavar="S",
        help="how often the worker looks for queued runs: at most this long before a run "
        "starts (seconds, default 1)",
    )
    return parser


def main(argv: Sequence[str]) -> int:
    """Serve until interrupted; returns the exit code."""
    try:
        ns = _parser().parse_args(list(argv))
    except SystemExit as exc:  # --help exits 0; a usage error is 1, as documented (not 2)
        return 0 if exc.code == 0 else 1
    from rho_entry.config.home import config_dir, sessions_dir
    from rho_entry.config.settings import environment
    from rho_entry.config.stores import choose_store, run_sync, store_setting

    env = environment()
    try:
        url, origin = store_setting(ns.store, env)
        chosen = choose_store(url, env, origin=origin)
        if chosen.root is None:  # a shared store: unreachable or refused is said now, once
            run_sync(chosen.sessions.sessions(limit=1))
        root = chosen.root if chosen.root is not None else sessions_dir(env)
        settings = ServerSettings.from_environ(env, sessions_root=root, roots=tuple(ns.root))
        settings = attrs.evolve(settings, **_flag_changes(ns, settings))
        check_bind(ns.host, settings)
        check_profiles(settings, env, flag=bool(ns.allow_profile))
        token_home = None if settings.token is not None else config_dir(env)
        if token_home is not None:
            check_token_home(token_home, settings.roots)
        token = settings.token if settings.token is not None else secrets.token_urlsafe(32)
        settings = attrs.evolve(settings, token=token)
        from rho_entry.server.app import create_app, default_config

        config = default_config(env)
        if ns.mcp_config:
            from rho_entry.config.mcp_servers import with_mcp_file

            config = with_mcp_file(config, expanded(ns.mcp_config))
        check_endpoint(config, env)
        from rho_entry.wiring import database_warnings

        for problem in database_warnings(config, env):  # the task may not need it: warn
            print(f"rho-agent serve: warning: {problem}", file=sys.stderr)
        durable = _durable(ns, url if chosen.root is None else None, settings, env)
        app = create_app(settings, base_config=config, environ=env, store=chosen, durable=durable)
        server = build_server(app, ns.host, ns.port, settings, token, token_home, chosen.shown)
        listening = listen(ns.host, ns.port)
    except RhoError as exc:
        print(f"rho-agent serve: {exc}", file=sys.stderr)
        return 1
    if set(settings.profiles) - {"developer", "eval", "unrestricted"}:  # a restricted shell
        from rho_adapters.local.programs import sandbox_notice
        from rho_entry.wiring import say_unprotected

        say_unprotected(sandbox_notice())  # at start, not at the first session
    server.run(sockets=[listening])
    return 1 if server.failed else stop_signals.service_exit(server.stopped_by)


def _durable(
    ns: argparse.Namespace,
    shared_store: str | None,
    settings: ServerSettings,
    env: Mapping[str, str],
) -> DurableSettings | None:
    """The durable runs' settings of ``--durable`` (None without it); ``ConfigError`` for the
    durable flags without it."""
    if not ns.durable:
        if ns.durable_db or ns.concurrency is not None:
            raise ConfigError("--durable-db and --concurrency go with --durable")
        return None
    from rho_entry.config.home import config_dir
    from rho_entry.server.durable_runs import DurableSettings

    database = ns.durable_db or shared_store
    if database is None:  # one host: a SQLite file in the config directory (made if new)
        home = config_dir(env)
        home.mkdir(mode=0o700, parents=True, exist_ok=True)
        database = str(home / "durable.sqlite")
    return DurableSettings(
        database=database,
        queue=ns.queue,
        concurrency=ns.concurrency if ns.concurrency is not None else settings.max_runs,
        dead_after=ns.dead_after,
        # a quarter of the window, as the store's beat: a 2 s beat under --dead-after 3 left
        # a live server one late second from being taken for dead
        heartbeat=min(2.0, ns.dead_after / 4),
        poll=ns.poll,
    )


def _flag_changes(ns: argparse.Namespace, settings: ServerSettings) -> dict[str, Any]:
    changes: dict[str, Any] = {}
    if ns.allow_profile:
        changes["profiles"] = tuple(ns.allow_profile)
    if ns.max_runs is not None:
        changes["max_runs"] = ns.max_runs
    if ns.max_streams is not None:
        changes["max_streams"] = ns.max_streams
    hosts = list(ns.allow_host)
    bound = host_name(ns.host)
    if bound is not None and bound not in LOOPBACK_HOSTS and bound not in WILDCARDS:
        hosts.append(bound)  # clients reach it by the address it was told to bind
    if hosts:
        changes["allowed_hosts"] = (*settings.allowed_hosts, *hosts)
    return changes


def check_token_home(home: Path, roots: tuple[Path, ...]) -> None:
    """Refuse to write the token where a session could read it: inside a root (a working
    directory), unless the secrets policy already hides it (``~/.config/rho-agent``)."""
    from rho_domain.secrets import DEFAULT_POLICY

    folder = expanded(home).resolve() / "server"
    if DEFAULT_POLICY.is_secret(str(folder / "x.token")):
        return
    for root in roots:
        if folder.is_relative_to(root):
            raise ConfigError(
                f"the token file would be in {folder}, inside the root {root}, where sessions "
                "read files: set RHO_AGENT_HOME outside the roots, or set "
                "RHO_AGENT_SERVER_TOKEN yourself"
            )


WILDCARDS = frozenset({"0.0.0.0", "::"})  # noqa: S104 - the names of "every address"
