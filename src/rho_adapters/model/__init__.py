"""Model adapters: ChatModel implementations on httpx, and ``build_model`` for the wiring.

- ``OpenAIChatModel``: every OpenAI-compatible Chat Completions server, shaped by its
  ``Provider`` row (openai, vllm, cerebras, groq, ollama, llamacpp, llama-cpp-python,
  openrouter, azure, generic); it is also a ``ContextMeter``.
- ``AnthropicModel``: the Anthropic Messages API (the ``anthropic`` row).
- ``DemoModel`` (``demo``): ``--model demo``, scripted and offline, for a first try.

Each takes one ``ModelEndpoint`` (URL, key, headers, timeouts, retry) and one HTTP seam
(``http``: a ``ClientPool``, default ``SHARED_POOL``, or an ``httpx.AsyncClient``).

Nothing here opens a connection at import or construction: clients are leased from a shared
pool on the first call.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import attrs

from rho_adapters.model.openai_request import RequestDefaults
from rho_adapters.model.providers import (
    DEMO_MODEL,
    MODEL_QUIRKS,
    PROVIDERS,
    ModelQuirk,
    Provider,
    resolve_provider,
)
from rho_adapters.model.retry import RetryPolicy
from rho_domain.lazy_names import lazy_names
from rho_domain.ports.clock import Clock
from rho_domain.ports.model import ChatModel

if TYPE_CHECKING:
    from rho_adapters.model._http import Timeouts
    from rho_adapters.model.answer_limits import AnswerLimits
    from rho_adapters.model.anthropic import AnthropicModel
    from rho_adapters.model.endpoint import ModelEndpoint
    from rho_adapters.model.openai_chat import OpenAIChatModel
    from rho_adapters.model.pool import SHARED_POOL, ClientPool
    from rho_adapters.model.pool_stats import EndpointStats
    from rho_adapters.model.proxies import ProxyRoutes
    from rho_adapters.model.tls_context import ssl_contexts_created

__all__ = [
    "MODEL_QUIRKS",
    "PROVIDERS",
    "SHARED_POOL",
    "AnswerLimits",
    "AnthropicModel",
    "ClientPool",
    "EndpointStats",
    "ModelEndpoint",
    "ModelQuirk",
    "OpenAIChatModel",
    "Provider",
    "ProxyRoutes",
    "RequestDefaults",
    "RetryPolicy",
    "Timeouts",
    "build_model",
    "resolve_provider",
    "ssl_contexts_created",
]

# Imported on first use: the provider table is what most commands need (settings, --list,
# monitor, the demo model), and httpx alone is a sixth of the CLI's start-up.
_LAZY = {
    "AnswerLimits": "rho_adapters.model.answer_limits",
    "AnthropicModel": "rho_adapters.model.anthropic",
    "OpenAIChatModel": "rho_adapters.model.openai_chat",
    "SHARED_POOL": "rho_adapters.model.pool",
    "ClientPool": "rho_adapters.model.pool",
    "EndpointStats": "rho_adapters.model.pool_stats",
    "ModelEndpoint": "rho_adapters.model.endpoint",
    "ProxyRoutes": "rho_adapters.model.proxies",
    "Timeouts": "rho_adapters.model._http",
    "ssl_contexts_created": "rho_adapters.model.tls_context",
}


__getattr__ = lazy_names(__name__, _LAZY)


def build_model(
    *,
    model: str,
    base_url: str | None,
    api_key: str | None,
    provider: str | None = None,
    service_tier: str | None = None,
    reasoning_effort: str | None = None,
    temperature: float | None = None,
    max_output_tokens: int | None = None,
    response_format: Mapping[str, Any] | None = None,
    stream: bool | None = None,
    clock: Clock | None = None,
    key_variable: str = "",
    timeouts: Timeouts | None = None,
    retry: RetryPolicy | None = None,
    proxies: ProxyRoutes | None = None,
    limits: AnswerLimits | None = None,
) -> ChatModel:
    """The ChatModel for a configured endpoint.

    ``provider`` names a row of ``PROVIDERS``; None guesses it from ``base_url``'s host (no
    base URL means OpenAI), and a host that says nothing (a local server) is asked what it is
    before the first call (``detect.probe``). The row's ``adapter`` picks the ChatModel.
    Request options here are defaults that a ``ModelRequest``'s own values override;
    ``stream=False`` asks for whole responses (OpenAI-compatible servers only). Raises
    ConfigError for an unknown provider or a provider without a default URL (Azure) and no
    base URL. ``key_variable`` names where ``api_key`` came from, for error messages.
    ``timeouts``, ``retry`` and ``limits`` (the bounds of one answer) replace the adapters'
    defaults (``Timeouts()``, ``RetryPolicy()``, ``AnswerLimits()``). ``proxies`` route the
    requests (``ProxyRoutes.from_environ``; none when None). Model ``demo`` is the offline
    ``DemoModel``, whatever else is given.
    """
    if model == DEMO_MODEL:
        from rho_adapters.model.demo import DemoModel

        return DemoModel()
    defaults = RequestDefaults(
        service_tier=service_tier,
        reasoning_effort=reasoning_effort,
        temperature=temperature,
        max_output_tokens=max_output_tokens,
        response_format=response_format,
    )
    from rho_adapters.model.endpoint import ModelEndpoint

    endpoint = ModelEndpoint(base_url=base_url, api_key=api_key, key_variable=key_variable)
    if timeouts is not None:
        endpoint = attrs.evolve(endpoint, timeouts=timeouts)
    if retry is not None:
        endpoint = attrs.evolve(endpoint, retry=retry)
    if proxies is not None:
        endpoint = attrs.evolve(endpoint, proxies=proxies)
    if limits is not None:
        endpoint = attrs.evolve(endpoint, limits=limits)
    row = resolve_provider(provider, base_url)
    if row.adapter == "anthropic":
        from rho_adapters.model.anthropic import AnthropicModel

        return AnthropicModel(model=model, endpoint=endpoint, defaults=defaults, clock=clock)
    if not base_url and not row.default_base_url:
        from rho_domain.errors import ConfigError

        raise ConfigError(f"provider {row.name!r} needs base_url (the endpoint's URL)")
    # Each adapter is imported where it is chosen: an OpenAI-compatible run never loads the
    # Anthropic one (and the other way round).
    from rho_adapters.model.openai_chat import OpenAIChatModel

    return OpenAIChatModel(
        model=model,
        endpoint=endpoint,
        provider=row,
        defaults=defaults,
        stream=stream,
        clock=clock,
        # Named "generic" is a choice; guessed "generic" only means the host said nothing.
        detect=row.name == "generic" and _unnamed(provider),
    )


def _unnamed(provider: str | None) -> bool:
    """No provider was chosen, so a guessed ``generic`` only means the host said nothing."""
    return (provider or "").strip().lower().replace("-", "") in ("", "auto", "openaicompatible")
