"""Endpoint profiles: what each OpenAI-compatible server accepts, and how to recognise it.

A profile is chosen by name (``provider`` in the config) or from the base URL's host (the
hosted APIs). A local or unknown host gets ``generic`` (``max_tokens``, which every server
honours) until ``detect.probe`` asks the server what it is (``/props``, ``/v1/models``
``owned_by``, the ``server`` header): never from the port. Every field can be overridden
with ``attrs.evolve``. The facts behind each profile are in protocols.md (§1.7, §3, §4, the
quirk matrix) and the llama-cpp-python recordings.
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
    ``default_tool_choice`` is sent with tools when the request names none: llama-cpp-python
    hides the tools from the model unless ``tool_choice`` is sent.
    ``stream_auto_tools`` False sends requests with tools under automatic choice without
    streaming (llama-cpp-python answers them with an empty 200 stream); a named choice still
    streams.
    ``tokenize_path`` is the server's tokenizer endpoint (from the server root), "" for none.
    ``tools_need_choice`` says the tool schemas reach the prompt only under a tool choice
    other than ``none`` (so they are not counted otherwise).
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
    default_tool_choice: str | None = None
    stream_auto_tools: bool = True
    tokenize_path: str = ""
    tools_need_choice: bool = False


PROFILES: dict[str, EndpointProfile] = {
    p.name: p
    for p in (
        EndpointProfile(name="openai", default_base_url=OPENAI_BASE_URL, obfuscation_opt_out=True),
        EndpointProfile(
            name="vllm", default_base_url="http://localhost:8000/v1", tokenize_path="/tokenize"
        ),
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
            tokenize_path="/tokenize",
        ),
        EndpointProfile(
            # python -m llama_cpp.server: its own dialect (captures 02, 05, 09-13).
            name="llama-cpp-python",
            default_base_url="http://localhost:8000/v1",
            max_tokens_field="max_tokens",  # max_completion_tokens is ignored (05)
            stream_usage=False,  # stream_options is ignored (02)
            default_tool_choice="auto",  # without it the tools never reach the model (09, 12)
            stream_auto_tools=False,  # auto choice + stream: an empty 200 (13)
            tokenize_path="/extras/tokenize/count",
            tools_need_choice=True,  # chatml-function-calling renders tools=[] then
        ),
        # Any other OpenAI-compatible server, until detection knows better.
        EndpointProfile(name="generic", max_tokens_field="max_tokens"),
        EndpointProfile(
            name="openrouter",
            default_base_url="https://openrouter.ai/api/v1",
            reasoning_object=True,
        ),
        EndpointProfile(name="azure", auth_header="api-key"),
    )
}

# Host fragments → profile, checked in order. Ports say nothing: any server runs on any port.
_HOST_HINTS: tuple[tuple[str, str], ...] = (
    ("api.openai.com", "openai"),
    ("cerebras.ai", "cerebras"),
    ("groq.com", "groq"),
    ("openrouter.ai", "openrouter"),
    ("openai.azure.com", "azure"),
    ("azure.com", "azure"),
    ("ollama", "ollama"),
)


def guess_profile_name(base_url: str | None) -> str:
    """The profile a base URL names by its host: ``openai`` for none, ``generic`` for a host
    that says nothing (a local server: ``detect.probe`` finds out which)."""
    if not base_url:
        return "openai"
    host = (urlsplit(base_url).hostname or "").lower()
    for fragment, name in _HOST_HINTS:
        if fragment in host:
            return name
    return "generic"


def resolve_profile(provider: str | None, base_url: str | None) -> EndpointProfile:
    """The named profile, or the guess from ``base_url``. Raises ConfigError for an unknown
    name, listing the known ones."""
    name = (provider or "").strip().lower().replace("-", "").replace(".", "")
    if name in ("", "auto", "openaicompatible"):
        return PROFILES[guess_profile_name(base_url)]
    aliases = {
        "llama": "llamacpp",
        "llamacppserver": "llamacpp",
        "llamaserver": "llamacpp",
        "llamacpppython": "llama-cpp-python",
        "llamacpp_python": "llama-cpp-python",
        "azureopenai": "azure",
    }
    name = aliases.get(name, name)
    if name not in PROFILES:
        known = ", ".join(sorted([*PROFILES, "anthropic"]))
        raise ConfigError(f"unknown provider {provider!r}: expected one of {known}")
    return PROFILES[name]
