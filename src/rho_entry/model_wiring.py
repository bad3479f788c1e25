"""The model port built from config and environment: the adapter, its endpoint and key.

``build_model`` chooses the ``ChatModel`` for an ``AgentConfig`` (``rho_adapters.model``'s
``build_model``; the demo model too) with its base URL (the config's, else the environment's),
its API key (the variable the config or the provider's row names: one the config names must
be set) and its timeouts and retries (``transport_of``). Part of the composition root,
``rho_entry.wiring``, which names these too. The adapters are imported when a model is built.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

from rho_domain.config import AgentConfig
from rho_domain.errors import ConfigError
from rho_domain.ports.clock import Clock
from rho_domain.ports.model import ChatModel
from rho_entry.config.env_settings import base_url_of


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


def _with_base_url(config: AgentConfig, environ: Mapping[str, str]) -> AgentConfig:
    """``config`` with the environment's base URL when it names none (as the CLI does)."""
    if config.base_url:
        return config
    return attrs.evolve(config, base_url=base_url_of(config, environ))


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


def load_certificates_ahead(config: AgentConfig, environ: Mapping[str, str]) -> None:
    """When ``build_model(config, environ)`` will call an https endpoint (``calls_https``),
    start loading the CA certificates its client will verify with, in a thread
    (``tls_context.build_shared_context_ahead``), so that a caller's start-up before the
    model is built (the CLI's imports, store and session) goes on beside it. Nothing
    otherwise."""
    if calls_https(config, environ):
        from rho_adapters.model.tls_context import CaTrust, build_shared_context_ahead

        build_shared_context_ahead(CaTrust.from_environ(environ))  # the trust the client takes


def calls_https(config: AgentConfig, environ: Mapping[str, str]) -> bool:
    """True when ``build_model(config, environ)``'s calls go to an https URL: the config's
    base URL, else the environment's, else the provider's default one. False for the demo
    model and for a config ``build_model`` would refuse (an unknown provider)."""
    from rho_adapters.model.providers import DEMO_MODEL

    if config.model == DEMO_MODEL:
        return False
    url = base_url_of(config, environ)
    if not url:
        from rho_entry.config.settings import provider_of

        try:
            url = provider_of(config, environ).default_base_url
        except ConfigError:
            return False
    return bool(url) and url[:6].lower() == "https:"


def transport_of(config: AgentConfig) -> dict[str, Any]:
    """The model adapter's ``timeouts``, ``retry`` and ``limits`` for the config's
    ``model_*`` settings (only those it sets; the adapter's defaults stay for the rest)."""
    from rho_adapters.model import AnswerLimits, RetryPolicy, Timeouts

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
    seconds, size = config.model_answer_timeout, config.model_answer_bytes
    if seconds is not None or size is not None:
        limits = AnswerLimits()
        out["limits"] = attrs.evolve(
            limits,
            max_seconds=limits.max_seconds if seconds is None else seconds,
            max_bytes=limits.max_bytes if size is None else size,
        )
    return out
