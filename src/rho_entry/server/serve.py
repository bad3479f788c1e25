"""``rho-agent serve [--host 127.0.0.1] [--port 8765]``: run the HTTP server with uvicorn.

The model endpoint, key and default model come from the environment as for the CLI
(``OPENAI_BASE_URL``, ``OPENAI_API_KEY``, ``RHO_AGENT_MODEL``, ...); the server's limits from
``RHO_AGENT_SERVER_*`` (``rho_entry.server.settings``) or the flags below. Ctrl+C or SIGTERM
stops it: runs in progress are cancelled and end ``cancelled`` on disk, so ``--resume`` (or
``POST /resume``) continues them. Exit codes: 0 stopped, 1 configuration error (found before
listening: an unknown allowed profile, no model endpoint, a busy port).
"""

from __future__ import annotations

import argparse
import errno
import socket
import sys
from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from rho_domain.config import AgentConfig
from rho_domain.errors import ConfigError, MissingExtra, RhoError
from rho_entry.server.settings import (
    DEFAULT_HOST,
    DEFAULT_PORT,
    PROFILES_VARIABLE,
    ServerSettings,
    check_bind,
    check_roots,
)
from rho_entry.usage import UsageParser


def _parser() -> argparse.ArgumentParser:
    parser = UsageParser(
        prog="rho-agent serve",
        description="Serve sessions over HTTP: a JSON API and a Server-Sent Events stream "
        "(docs/server.md).",
    )
    parser.add_argument(
        "--host", default=DEFAULT_HOST, help=f"address to bind (default {DEFAULT_HOST}, loopback)"
    )
    parser.add_argument(
        "--port",
        type=int,
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
        "--max-runs", type=int, metavar="N", help="runs in progress at once (default 32)"
    )
    return parser


def main(argv: Sequence[str]) -> int:
    """Serve until interrupted; returns the exit code."""
    try:
        ns = _parser().parse_args(list(argv))
    except SystemExit as exc:  # --help exits 0; a usage error is 1, as documented (not 2)
        return 0 if exc.code == 0 else 1
    from rho_entry.home import sessions_dir
    from rho_entry.settings import environment

    env = environment()
    try:
        settings = ServerSettings.from_environ(env, sessions_root=sessions_dir(env))
        settings = attrs.evolve(settings, **_flag_changes(ns))
        check_bind(ns.host, settings)
        _check_profiles(settings, env, flag=bool(ns.allow_profile))
        from rho_entry.server.app import create_app, default_config

        config = default_config(env)
        _check_endpoint(config, env)
        from rho_entry.wiring import database_warnings

        for problem in database_warnings(config, env):  # the task may not need it: warn
            print(f"rho-agent serve: warning: {problem}", file=sys.stderr)
        app = create_app(settings, environ=env)
        server = _server(app, ns.host, ns.port, settings)
        listening = _listen(ns.host, ns.port)
    except RhoError as exc:
        print(f"rho-agent serve: {exc}", file=sys.stderr)
        return 1
    server.run(sockets=[listening])
    return 0


def _check_profiles(settings: ServerSettings, env: Mapping[str, str], *, flag: bool) -> None:
    """Every allowed profile must exist now: otherwise each client asking for it would get a
    422 that blames the request for the server's configuration."""
    from rho_entry.config_files import resolve_profile
    from rho_entry.home import config_dir

    origin = "--allow-profile" if flag else PROFILES_VARIABLE
    for name in settings.profiles:
        try:
            resolve_profile(name, config_dir=config_dir(env))
        except ConfigError as exc:
            raise ConfigError(f"{origin} {name!r}: {exc}") from None


def _check_endpoint(config: AgentConfig, env: Mapping[str, str]) -> None:
    """No base URL and no key: every run would fail calling the hosted API; say so now."""
    from rho_entry.settings import api_key_variable, missing_endpoint

    missing = missing_endpoint(config, env)
    if missing is not None:
        raise ConfigError(
            f"{missing}: export {api_key_variable(config, env)}=<key>, or "
            "OPENAI_BASE_URL=http://localhost:11434/v1 (any OpenAI-compatible server), or "
            "RHO_AGENT_MODEL=demo for the offline demo model"
        )


def _listen(host: str, port: int) -> socket.socket:
    """The listening socket, bound before uvicorn starts, so that a busy port is a
    configuration error (exit 1, naming --port) rather than uvicorn's exit 3."""
    try:
        family, kind, proto, _, address = socket.getaddrinfo(
            host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
        )[0]
        sock = socket.socket(family, kind, proto)
    except OSError as exc:
        raise ConfigError(f"--host {host}: {exc.strerror or exc}") from None
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
    except OSError as exc:
        sock.close()
        why = exc.strerror or str(exc)
        hint = " (another program listens there)" if exc.errno == errno.EADDRINUSE else ""
        raise ConfigError(
            f"cannot listen on {host}:{port}: {why}{hint}; choose another --port "
            "(--port 0 takes any free one)"
        ) from None
    return sock


def _flag_changes(ns: argparse.Namespace) -> dict[str, Any]:
    changes: dict[str, Any] = {}
    if ns.root:
        changes["roots"] = check_roots(tuple(ns.root), "--root")
    if ns.allow_profile:
        changes["profiles"] = tuple(ns.allow_profile)
    if ns.max_runs is not None:
        changes["max_runs"] = ns.max_runs
    return changes


def _server(app: Any, host: str, port: int, settings: ServerSettings) -> Any:
    try:
        import uvicorn
    except ImportError as exc:
        raise MissingExtra("uvicorn", "server", "rho-agent serve") from exc

    class Server(uvicorn.Server):
        def handle_exit(self, sig: int, frame: Any) -> None:
            # A stop signal is the documented way to stop: shut down gracefully and exit 0,
            # rather than re-raising the signal once uvicorn is done (its default).
            super().handle_exit(sig, frame)
            captured = getattr(self, "_captured_signals", None)
            if isinstance(captured, list):
                captured.clear()

        async def startup(self, sockets: Any = None) -> None:
            await super().startup(sockets)
            bound = [s.getsockname() for srv in self.servers for s in srv.sockets]
            where = ", ".join(f"http://{_host(h)}:{p}" for h, p, *_ in bound)
            auth = "bearer token required" if settings.token else "no token (loopback only)"
            roots = ", ".join(str(r) for r in settings.roots)
            print(
                f"rho-agent serve: listening on {where} · {auth} · sessions in "
                f"{settings.sessions_root} · roots {roots} · profiles "
                f"{', '.join(settings.profiles)}",
                file=sys.stderr,
                flush=True,
            )

    config = uvicorn.Config(app, host=host, port=port, log_level="warning", lifespan="on")
    return Server(config)


def _host(address: str) -> str:
    return f"[{address}]" if ":" in address else address
