"""``rho-agent serve [--host 127.0.0.1] [--port 8765]``: run the HTTP server with uvicorn.

The model endpoint, key and default model come from the environment as for the CLI
(``OPENAI_BASE_URL``, ``OPENAI_API_KEY``, ``RHO_AGENT_MODEL``, ...); the server's limits from
``RHO_AGENT_SERVER_*`` (``rho_entry.server.settings``) or the flags below. Ctrl+C or SIGTERM
stops it: runs in progress are cancelled and end ``cancelled`` on disk, so ``--resume`` (or
``POST /resume``) continues them. Exit codes: 0 stopped, 1 configuration error.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import Any

import attrs

from rho_domain.errors import MissingExtra, RhoError
from rho_entry.server.settings import (
    DEFAULT_HOST,
    DEFAULT_PORT,
    ServerSettings,
    check_bind,
    check_roots,
)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="rho-agent serve",
        description="Serve sessions over HTTP: a JSON API and a Server-Sent Events stream "
        "(docs/server.md).",
    )
    parser.add_argument("--host", default=DEFAULT_HOST, help="address to bind (default: loopback)")
    parser.add_argument("--port", type=int, default=DEFAULT_PORT, help="port (0: any free one)")
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
    parser.add_argument("--max-runs", type=int, help="runs in progress at once (default 32)")
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
        from rho_entry.server.app import create_app

        app = create_app(settings, environ=env)
        server = _server(app, ns.host, ns.port, settings)
    except RhoError as exc:
        print(f"rho-agent serve: {exc}", file=sys.stderr)
        return 1
    if set(settings.profiles) - {"developer", "eval", "unrestricted"}:  # a restricted shell
        from rho_adapters.local.executor import sandbox_notice
        from rho_entry.wiring import say_unprotected

        say_unprotected(sandbox_notice())  # at start, not at the first session
    server.run()
    return 0


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
