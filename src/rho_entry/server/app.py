"""``create_app``: the ASGI application (Starlette) of ``rho-agent serve``.

Mount it in a service's own ASGI app, or serve it with any ASGI server. Safe by default
(``guard``): every request must name this server in ``Host`` and carry ``Authorization:
Bearer <token>`` (the settings' token, else one generated here: ``app.state.token``); a
state-changing request from another origin and a body that is not JSON are refused; CORS is
off unless origins are configured; bodies are size-limited (``bodies``). Extra routes (pages
such as a dashboard) are added with ``extra_routes`` or in ``pages``.
"""

from __future__ import annotations

import contextlib
import os
import secrets
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import attrs

from rho_adapters.extras import missing_extra
from rho_domain.config import AgentConfig
from rho_domain.errors import RhoError
from rho_entry.server.dashboard import PUBLIC_PATHS
from rho_entry.server.errors import (
    ApiError,
    BodyTooLarge,
    Busy,
    MethodNotAllowed,
    NotFound,
    SlowBody,
    as_api_error,
)
from rho_entry.server.settings import ServerSettings

if TYPE_CHECKING:
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import Response

    from rho_entry.config.stores import StoreChoice
    from rho_entry.server.durable_runs import DurableSettings


def create_app(
    settings: ServerSettings | None = None,
    *,
    base_config: AgentConfig | None = None,
    environ: Mapping[str, str] | None = None,
    session_ports: Mapping[str, Any] | None = None,
    extra_routes: Sequence[Any] = (),
    store: StoreChoice | None = None,
    durable: DurableSettings | None = None,
) -> Starlette:
    """The server as an ASGI app.

    ``settings`` default to ``ServerSettings.from_environ``; ``base_config`` (what clients
    cannot choose: endpoint, provider, key variable, default model) defaults to the CLI's
    settings from ``environ``. ``session_ports`` are passed to every session (tests give a
    scripted ``model=``). ``store`` is where sessions are kept (``rho_entry.config.stores``;
    default: the file store in ``settings.sessions_root``). ``durable`` puts the runs on a
    queue of durable runs that the app's own worker consumes from its start
    (``rho_entry.server.durable_runs``). Raises ``MissingExtra`` without the ``server`` extra.
    """
    try:
        from starlette.applications import Starlette
        from starlette.exceptions import HTTPException
        from starlette.middleware import Middleware
        from starlette.routing import Route
    except ImportError as exc:
        raise missing_extra("starlette", "server", "rho-agent serve") from exc
    from rho_entry.config.home import config_dir, sessions_dir
    from rho_entry.server.guard import HostCheck, RequestGuard
    from rho_entry.server.host import SessionHost
    from rho_entry.server.pages import page_routes
    from rho_entry.server.routes import API

    env = os.environ if environ is None else environ
    if settings is None:
        settings = ServerSettings.from_environ(env, sessions_root=sessions_dir(env))
    if base_config is None:
        base_config = default_config(env)
    host = SessionHost(
        settings,
        base_config=base_config,
        config_dir=config_dir(env),
        session_ports=session_ports,
        store=store,
        durable=durable,
    )

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        await host.start()
        try:
            yield
        finally:
            await host.aclose()

    token = settings.token if settings.token is not None else secrets.token_urlsafe(32)
    routes = [Route(r.routed, r.handler, methods=[r.method]) for r in API]
    middleware = [
        Middleware(HostCheck, allowed_hosts=settings.allowed_hosts),
        Middleware(
            RequestGuard,
            token=token,
            public=PUBLIC_PATHS,
            allowed_hosts=settings.allowed_hosts,
            allowed_origins=settings.cors_origins,
            slashed=[r.path.rpartition("{")[0] for r in API if r.slashed_tail],
        ),
    ]
    if settings.cors_origins:
        from starlette.middleware.cors import CORSMiddleware

        cors = Middleware(
            CORSMiddleware,
            allow_origins=list(settings.cors_origins),
            allow_methods=["GET", "POST", "DELETE"],
            allow_headers=["Authorization", "Content-Type", "Last-Event-ID"],
        )
        middleware.insert(1, cors)  # after the Host check; pre-flights carry no token
    app = Starlette(
        routes=[*routes, *page_routes(), *extra_routes],
        middleware=middleware,
        exception_handlers={RhoError: _rho_error, HTTPException: _http_error},
        lifespan=lifespan,
    )
    app.state.host = host
    app.state.token = token
    return app


def default_config(env: Mapping[str, str]) -> AgentConfig:
    """The CLI's settings from the environment (no flags): endpoint, model, provider."""
    from rho_entry.config.settings import resolve_settings

    # each session names its own working directory: the CLI's default (the current one) is
    # not read, which refused `serve --root /abs` from a removed current directory
    config = resolve_settings({"working_dir": "/"}, env).config
    return attrs.evolve(config, profile="readonly", working_dir=None)


def error_response(error: ApiError) -> Response:
    """The JSON answer of an API error (``Retry-After`` on 429)."""
    from rho_entry.server.json_answer import JsonAnswer

    headers = {"Retry-After": str(error.retry_after)} if isinstance(error, Busy) else {}
    if error.status == 401:
        headers["WWW-Authenticate"] = "Bearer"
    if isinstance(error, SlowBody | BodyTooLarge):
        # a body refused before it was read whole: the connection ends (RFC 9110 15.5.9),
        # rather than wait for the rest (uvicorn held it until its keep-alive timeout, after
        # an `Expect: 100-continue` too) and read it as the end of a request answered already
        headers["Connection"] = "close"
    return JsonAnswer(error.body(), status_code=error.status, headers=headers)


async def _rho_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, RhoError)
    return error_response(as_api_error(exc))


async def _http_error(request: Request, exc: Exception) -> Response:
    status = getattr(exc, "status_code", 500)
    if status == 405:
        return error_response(MethodNotAllowed(f"{request.method} {request.url.path}"))
    return error_response(NotFound(f"no route {request.method} {request.url.path}"))
