"""Providers: every kind of model server we speak to, as one table.

A row says which adapter speaks to the server (``openai`` Chat Completions or ``anthropic``
Messages), where it usually lives, which environment variable holds its key, how to recognise
its base URL, and what it accepts (the quirks ``openai_request.build_body`` absorbs). A
provider is chosen by name (``provider`` in the config) or guessed from the base URL; every
field can be overridden with ``attrs.evolve``. The facts behind each row are in protocols.md
(§1.7, §3, §4 and the quirk matrix).

Adding an OpenAI-compatible server is one row in ``PROVIDERS``.
"""

from __future__ import annotations

from typing import Literal
from urllib.parse import urlsplit

import attrs

from rho_domain.errors import ConfigError

OPENAI_BASE_URL = "https://api.openai.com/v1"
OPENAI_KEY = "OPENAI_API_KEY"

Adapter = Literal["openai", "anthropic"]


@attrs.frozen(kw_only=True)
class Provider:
    """One kind of server, and how to talk to it.

    ``adapter`` names the ChatModel that speaks its protocol. ``key_variable`` is the
    environment variable its API key is read from unless the config names another.
    ``hosts`` are host-name fragments and ``port`` a local default port that identify it in a
    base URL. ``max_tokens_field`` is the name the server reads for the output limit.
    ``dropped_params`` are request keys the server rejects with 400 (never sent).
    ``stream_usage`` says whether to send ``stream_options.include_usage``.
    ``stream_tools`` False makes requests with tools non-streaming (older Cerebras models).
    ``reasoning_object`` sends ``reasoning: {effort}`` instead of ``reasoning_effort``.
    ``auth_header`` is ``authorization`` (Bearer) or ``api-key`` (Azure).
    """

    name: str
    adapter: Adapter = "openai"
    key_variable: str = OPENAI_KEY
    default_base_url: str = ""
    hosts: tuple[str, ...] = ()
    port: int | None = None
    max_tokens_field: str = "max_completion_tokens"
    dropped_params: frozenset[str] = frozenset()
    stream_usage: bool = True
    stream_tools: bool = True
    reasoning_object: bool = False
    auth_header: str = "authorization"
    obfuscation_opt_out: bool = False


# In the order base URLs are matched: host fragments first (row by row), then ports.
PROVIDERS: dict[str, Provider] = {
    p.name: p
    for p in (
        Provider(
            name="anthropic",
            adapter="anthropic",
            key_variable="ANTHROPIC_API_KEY",
            default_base_url="https://api.anthropic.com",
            hosts=("anthropic.com",),
        ),
        Provider(
            name="openai",
            default_base_url=OPENAI_BASE_URL,
            hosts=("api.openai.com",),
            obfuscation_opt_out=True,
        ),
        Provider(
            name="cerebras",
            default_base_url="https://api.cerebras.ai/v1",
            hosts=("cerebras.ai",),
            # Cerebras validates strictly and answers 400 to each of these (§3).
            dropped_params=frozenset(
                {
                    "parallel_tool_calls",
                    "service_tier",
                    "frequency_penalty",
                    "presence_penalty",
                    "logit_bias",
                    "store",
                }
            ),
        ),
        Provider(
            name="groq",
            default_base_url="https://api.groq.com/openai/v1",
            hosts=("groq.com",),
            dropped_params=frozenset({"logprobs", "logit_bias", "top_logprobs"}),
        ),
        Provider(
            name="openrouter",
            default_base_url="https://openrouter.ai/api/v1",
            hosts=("openrouter.ai",),
            reasoning_object=True,
        ),
        Provider(name="azure", hosts=("openai.azure.com", "azure.com"), auth_header="api-key"),
        Provider(
            name="ollama",
            default_base_url="http://localhost:11434/v1",
            hosts=("ollama",),
            port=11434,
            # Ollama's /v1 struct has no max_completion_tokens: it would be silently ignored.
            max_tokens_field="max_tokens",
            dropped_params=frozenset({"parallel_tool_calls", "tool_choice"}),
        ),
        Provider(
            name="llamacpp",
            default_base_url="http://localhost:8080/v1",
            port=8080,
            max_tokens_field="max_tokens",
        ),
        Provider(name="vllm", default_base_url="http://localhost:8000/v1", port=8000),
    )
}

# Other spellings users write for a provider.
_ALIASES = {"llama": "llamacpp", "llamacppserver": "llamacpp", "azureopenai": "azure"}


def guess_provider_name(base_url: str | None) -> str:
    """The provider a base URL most likely points at; ``openai`` for none, ``vllm`` (the
    plain OpenAI dialect) for an unknown host."""
    if not base_url:
        return "openai"
    parts = urlsplit(base_url)
    host = (parts.hostname or "").lower()
    for provider in PROVIDERS.values():
        if any(fragment in host for fragment in provider.hosts):
            return provider.name
    try:
        port = parts.port
    except ValueError:
        port = None
    for provider in PROVIDERS.values():
        if port is not None and provider.port == port:
            return provider.name
    return "vllm"


def resolve_provider(provider: str | None, base_url: str | None) -> Provider:
    """The named provider, or the guess from ``base_url``. Raises ConfigError for an unknown
    name, listing the known ones."""
    name = (provider or "").strip().lower().replace("-", "").replace(".", "")
    if name in ("", "auto", "openaicompatible"):
        return PROVIDERS[guess_provider_name(base_url)]
    name = _ALIASES.get(name, name)
    if name not in PROVIDERS:
        known = ", ".join(sorted(PROVIDERS))
        raise ConfigError(f"unknown provider {provider!r}: expected one of {known}")
    return PROVIDERS[name]
