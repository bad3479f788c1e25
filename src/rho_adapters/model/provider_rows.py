"""Every kind of model server we speak to, as one row each: ``Provider`` and ``PROVIDERS``.

A row says which adapter speaks to the server (``openai`` Chat Completions or ``anthropic``
Messages), where it usually lives, which environment variable holds its key, how to recognise
it (a hosted API by its base URL's host, a local server by the ``owned_by`` its
``/v1/models`` answers with) and what it accepts (the quirks ``openai_request.build_body``
absorbs). Adding an OpenAI-compatible server is one row here. Which row a config chooses is
``providers``'s (which names everything here too).
"""

from __future__ import annotations

from typing import Literal

import attrs

from rho_domain.value_methods import value_eq, value_hash, value_repr

OPENAI_BASE_URL = "https://api.openai.com/v1"
OPENAI_KEY = "OPENAI_API_KEY"
# The model name that selects the scripted, offline ``DemoModel`` (``model.demo``): no row of
# this table, but what settings and the wiring test before they look a provider up; here, so
# that telling it from a real model does not import the demo's script.
DEMO_MODEL = "demo"

Adapter = Literal["openai", "anthropic"]
# How a server takes an output schema (``response_format: {type: json_schema}``): with every
# request ("always": OpenAI's structured outputs work beside tools); only on a request that
# cannot call tools ("without_tools": vLLM's guided decoding and llama.cpp's grammars
# constrain the whole output, so a tool call could not come out; rho-agent asks such a
# request when it corrects an answer); or "never" (the schema is in the prompt and checked).
StructuredOutput = Literal["always", "without_tools", "never"]


@attrs.frozen(kw_only=True)
class Provider:
    """One kind of server, and how to talk to it.

    ``adapter`` names the ChatModel that speaks its protocol. ``key_variable`` is the
    environment variable its API key is read from unless the config names another.
    ``hosts`` are host-name fragments that identify it in a base URL; ``owners`` are the
    ``owned_by`` values its ``/v1/models`` answers with (how detection recognises a local
    server). ``max_tokens_field`` is the name the server reads for the output limit.
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
    ``model_prefixes`` are model-name beginnings that select this hosted provider when no base
    URL is given.
    ``structured_output`` says when an output schema is sent as ``response_format``
    (``StructuredOutput``; Anthropic's adapter uses a final tool instead).
    """

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    name: str
    adapter: Adapter = "openai"
    key_variable: str = OPENAI_KEY
    default_base_url: str = ""
    hosts: tuple[str, ...] = ()
    owners: tuple[str, ...] = ()
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
    model_prefixes: tuple[str, ...] = ()
    structured_output: StructuredOutput = "never"


# In the order base URLs are matched by host fragment.
PROVIDERS: dict[str, Provider] = {
    p.name: p
    for p in (
        Provider(
            name="anthropic",
            adapter="anthropic",
            key_variable="ANTHROPIC_API_KEY",
            default_base_url="https://api.anthropic.com",
            hosts=("anthropic.com",),
            model_prefixes=("claude",),
        ),
        Provider(
            name="openai",
            default_base_url=OPENAI_BASE_URL,
            hosts=("api.openai.com",),
            model_prefixes=("gpt-", "chatgpt-", "o1", "o3", "o4", "codex-"),
            obfuscation_opt_out=True,
            structured_output="always",
        ),
        Provider(
            name="cerebras",
            default_base_url="https://api.cerebras.ai/v1",
            hosts=("cerebras.ai",),
            # Cerebras validates strictly and answers 400 to each of these.
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
        Provider(
            name="azure",
            hosts=("openai.azure.com", "azure.com"),
            auth_header="api-key",
            structured_output="always",
        ),
        Provider(
            name="ollama",
            default_base_url="http://localhost:11434/v1",
            hosts=("ollama",),
            owners=("library", "ollama"),
            # Ollama's /v1 struct has no max_completion_tokens: it would be silently ignored.
            max_tokens_field="max_tokens",
            dropped_params=frozenset({"parallel_tool_calls", "tool_choice"}),
        ),
        Provider(
            # llama.cpp's llama-server (detection also knows it by /props).
            name="llamacpp",
            default_base_url="http://localhost:8080/v1",
            owners=("llamacpp",),
            max_tokens_field="max_tokens",
            tokenize_path="/tokenize",
            structured_output="without_tools",  # a JSON Schema becomes a grammar
        ),
        Provider(
            # python -m llama_cpp.server: its own dialect (captures 02, 05, 09-13).
            name="llama-cpp-python",
            default_base_url="http://localhost:8000/v1",
            owners=("me",),  # its /v1/models says owned_by "me"
            max_tokens_field="max_tokens",  # max_completion_tokens is ignored (05)
            stream_usage=False,  # stream_options is ignored (02)
            default_tool_choice="auto",  # without it the tools never reach the model (09, 12)
            stream_auto_tools=False,  # auto choice + stream: an empty 200 (13)
            tokenize_path="/extras/tokenize/count",
            tools_need_choice=True,  # chatml-function-calling renders tools=[] then
        ),
        Provider(
            name="vllm",
            default_base_url="http://localhost:8000/v1",
            owners=("vllm",),
            tokenize_path="/tokenize",
            structured_output="without_tools",  # guided decoding
        ),
        # Any other OpenAI-compatible server, until detection knows better.
        Provider(name="generic", max_tokens_field="max_tokens"),
    )
}
