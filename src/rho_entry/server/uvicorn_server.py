"""The uvicorn server ``rho-agent serve`` runs: token files, stop signals, the banner.

Its connections are bounded (``connections``: a request head's deadline, 503 past
``max_runs + max_streams + 64``). Once it listens it writes the token files
(``token_file``), prints where it listens and the dashboard's URL, and freezes the start-up
heap; a stop signal shuts it down gracefully (SIGTERM, SIGINT, SIGHUP: exit 0; another whose
default ends a process, SIGQUIT, SIGUSR1, ...: exit 128 + its number); stopping removes the
token files. uvicorn is imported when a server
is built: ``MissingExtra`` names the ``server`` extra when it is not installed.
"""

from __future__ import annotations

import contextlib
import gc
import signal
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from rho_adapters.extras import missing_extra
from rho_domain.errors import RhoError
from rho_entry import stop_signals
from rho_entry.runtime.collector import hold
from rho_entry.server.connections import uvicorn_limits
from rho_entry.server.settings import ServerSettings

__all__ = ["build_server", "freeze_start_up"]

_UVICORN_STOPS = frozenset({int(signal.SIGINT), int(signal.SIGTERM)})  # uvicorn's own


def build_server(
    app: Any,
    host: str,
    port: int,
    settings: ServerSettings,
    token: str,
    token_home: Path | None,
    store_shown: str,
) -> Any:
    """The uvicorn server, which writes the token files once it listens (``token_home``:
    the config directory, or None when the operator gave the token) and removes them when
    it stops."""
    try:
        import uvicorn
    except ImportError as exc:
        raise missing_extra("uvicorn", "server", "rho-agent serve") from exc
    from rho_entry.server.token_file import remove_token, write_token

    written: list[Path] = []

    class Server(uvicorn.Server):
        failed = False
        stopped_by: int | None = None  # the first stop signal heard (``service_exit``)

        def handle_exit(self, sig: int, frame: Any) -> None:
            # A stop signal is the documented way to stop: shut down gracefully and exit 0
            # (128 + the signal for one other than SIGTERM, SIGINT, SIGHUP), rather than
            # re-raising the signal once uvicorn is done (its default).
            if self.stopped_by is None:
                self.stopped_by = int(sig)
            super().handle_exit(sig, frame)
            captured = getattr(self, "_captured_signals", None)
            if isinstance(captured, list):
                captured.clear()

        @contextlib.contextmanager
        def capture_signals(self) -> Iterator[None]:
            # uvicorn listens for SIGINT and SIGTERM only: SIGHUP (the terminal closed),
            # SIGQUIT, SIGUSR1... reached the CLI's start-up handler mid-request (a
            # traceback, the token file left on disk, exit 138) or killed the server; each
            # now stops it as SIGTERM does, but one that nohup or a profiler holds
            with super().capture_signals(), _more_stops(self.handle_exit):
                yield

        async def startup(self, sockets: Any = None) -> None:
            try:
                await super().startup(sockets)
            except SystemExit:  # the app's startup failed (a durable queue that cannot
                # be opened, said above by uvicorn's log): exit 1, a configuration error
                self.failed = self.should_exit = True
                return
            bound = [s.getsockname()[:2] for srv in self.servers for s in srv.sockets]
            if token_home is not None:
                try:
                    written.extend(write_token(token_home, h, p, token) for h, p in bound)
                except RhoError as exc:  # no token file, no client could find the token
                    print(f"rho-agent serve: {exc}", file=sys.stderr, flush=True)
                    self.failed = self.should_exit = True
                    for path in written:
                        remove_token(path, token)
                    return
            where = ", ".join(f"http://{_host(h)}:{p}" for h, p in bound)
            auth = (
                f"token in {', '.join(map(str, written))}"
                if written
                else "token from RHO_AGENT_SERVER_TOKEN"
            )
            roots = ", ".join(str(r) for r in settings.roots)
            print(
                f"rho-agent serve: listening on {where} · {auth} · sessions in "
                f"{store_shown} · roots {roots} · profiles "
                f"{', '.join(settings.profiles)}",
                file=sys.stderr,
                flush=True,
            )
            if bound:
                h, p = bound[0]
                # a wildcard bind is reached by loopback (and the Host check wants a name)
                shown = {"0.0.0.0": "127.0.0.1", "::": "::1"}.get(h, h)  # noqa: S104
                page = f"http://{_host(shown)}:{p}/dashboard"
                if written:
                    page += f"#token={token}"  # the fragment never leaves the browser
                print(f"rho-agent serve: dashboard {page}", file=sys.stderr, flush=True)
            freeze_start_up()

        async def shutdown(self, sockets: Any = None) -> None:
            try:
                await super().shutdown(sockets)
            finally:
                for path in written:
                    remove_token(path, token)

    config = uvicorn.Config(
        app, host=host, port=port, log_level="warning", lifespan="on", **uvicorn_limits(settings)
    )
    return Server(config)


@contextlib.contextmanager
def _more_stops(handler: Any) -> Iterator[None]:
    """``handler`` for the stop signals uvicorn leaves alone (``stop_signals.service_stops``)
    while inside, those before put back after; none from a thread that is not the main one
    (an embedding program's: it cannot listen)."""
    if not _main_thread():
        yield
        return
    extra = [s for s in stop_signals.service_stops() if s not in _UVICORN_STOPS]
    saved = {s: signal.signal(s, handler) for s in extra}
    try:
        yield
    finally:
        for signum, before in saved.items():
            signal.signal(signum, before)


def freeze_start_up() -> None:
    """Collect once, then move every object left to the collector's permanent generation:
    start-up's objects live as long as the process, and a full pass no longer walks them;
    and hold full passes off for the process's life (``runtime.collector``: one after 100
    middle passes, not 10). The process's own choice (a library never freezes its host's
    heap)."""
    gc.collect()
    gc.freeze()
    hold(freeze_start_up)  # the serving process itself holds: never let go


def _host(address: str) -> str:
    return f"[{address}]" if ":" in address else address


def _main_thread() -> bool:
    return threading.current_thread() is threading.main_thread()
