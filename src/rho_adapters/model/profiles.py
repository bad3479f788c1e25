"""Endpoint profiles: what each OpenAI-compatible server accepts, and how to recognise it.

A profile is chosen by name (``provider`` in the config) or guessed from the base URL; every
field can be overridden with ``attrs.evolve``. The facts behind each profile are in
protocols.md (§1.7, §3, §4 and the quirk matrix).
"""

from __future__ import annotations

from urllib.parse import urlsplit

import attrs

from rho_domain.errors import ConfigError

OPENAI_BASE_URL = "https://api.openai.com/v1"


@attrs.frozen(kw_only=True)
class EndpointProfile:
    """How to talk to one kind of server.

    ``max_tokens_field`` is the name the server reads for the output limit.
    ``dropped_params`` are request keys the server rejects with 400 (never sent).
    ``stream_usage`` says whether to send ``stream_options.include_usage``.
    ``stream_tools`` False makes requests with tools non-streaming (older Cerebras models).
    ``reasoning_object`` sends ``reasoning: {effort}`` instead of ``reasoning_effort``.
    ``auth_header`` is ``authorization`` (Bearer) or ``api-key`` (Azure).
    """

    name: str
    default_base_url: str = ""
    max_tokens_field: str = "max_completion_tokens"
    dropped_params: frozenset[str] = frozenset()
    stream_usage: bool = True
    stream_tools: bool = True
    reasoning_object: bool = False
    auth_header: str = "authorization"
    obfuscation_opt_out: bool = False


PROFILES: dict[str, EndpointProfile] = {
    p.name: p
    for p in (
        EndpointProfile(name="openai", default_base_url=OPENAI_BASE_URL, obfuscation_opt_out=True),
        EndpointProfile(name="vllm", default_base_url="http://localhost:8000/v1"),
        EndpointProfile(
            name="cerebras",
            default_base_url="https://api.cerebras.ai/v1",
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
        EndpointProfile(
            name="groq",
            default_base_url="https://api.groq.com/openai/v1",
            dropped_params=frozenset({"logprobs", "logit_bias", "top_logprobs"}),
        ),
        EndpointProfile(
            name="ollama",
            default_base_url="http://localhost:11434/v1",
            # Ollama's /v1 struct has no max_completion_tokens: it would be silently ignored.
            max_tokens_field="max_tokens",
            dropped_params=frozenset({"parallel_tool_calls", "tool_choice"}),
        ),
        EndpointProfile(
            name="llamacpp",
            default_base_url="http://localhost:8080/v1",
            max_tokens_field="max_tokens",
        ),
        EndpointProfile(
            name="openrouter",
            default_base_url="https://openrouter.ai/api/v1",
            reasoning_object=True,
        ),
        EndpointProfile(name="azure", auth_header="api-key"),
    )
}

# Host fragments → profile, checked in order. Local ports are the servers' defaults.
_HOST_HINTS: tuple[tuple[str, str], ...] = (
    ("api.openai.com", "openai"),
    ("cerebras.ai", "cerebras"),
    ("groq.com", "groq"),
    ("openrouter.ai", "openrouter"),
    ("openai.azure.com", "azure"),
    ("azure.com", "azure"),
    ("ollama", "ollama"),
)
_PORT_HINTS = {11434: "ollama", 8080: "llamacpp", 8000: "vllm"}


def guess_profile_name(base_url: str | None) -> str:
    """The profile a base URL most likely points at; ``openai`` for none, ``vllm`` (the
    plain OpenAI dialect) for an unknown host."""
    if not base_url:
        return "openai"
    parts = urlsplit(base_url)
    host = (parts.hostname or "").lower()
    for fragment, name in _HOST_HINTS:
        if fragment in host:
            return name
    try:
        port = parts.port
    except ValueError:
        port = None
    if port in _PORT_HINTS:
        return _PORT_HINTS[port]
    return "vllm"


def resolve_profile(provider: str | None, base_url: str | None) -> EndpointProfile:
    """The named profile, or the guess from ``base_url``. Raises ConfigError for an unknown
    name, listing the known ones."""
    name = (provider or "").strip().lower().replace("-", "").replace(".", "")
    if name in ("", "auto", "openaicompatible"):
        return PROFILES[guess_profile_name(base_url)]
    aliases = {"llama": "llamacpp", "llamacppserver": "llamacpp", "azureopenai": "azure"}
    name = aliases.get(name, name)
    if name not in PROFILES:
        known = ", ".join(sorted([*PROFILES, "anthropic"]))
        raise ConfigError(f"unknown provider {provider!r}: expected one of {known}")
    return PROFILES[name]
