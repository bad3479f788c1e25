"""ModelRequest → Chat Completions request (its URL, headers and body), shaped by the provider.

Request options left None in the ``ModelRequest`` fall back to ``RequestDefaults`` (what the
agent was configured with). Parameters a server rejects are never sent; the output limit goes
under the name the server reads (``max_completion_tokens`` or ``max_tokens``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import attrs

from rho_adapters.model.providers import Provider
from rho_domain.header_names import headers_over
from rho_domain.messages import Message
from rho_domain.model import ModelRequest, ToolSpec
from rho_domain.value_methods import value_eq, value_hash, value_repr


def chat_url(base_url: str) -> str:
    """``{base_url}/chat/completions``, keeping a query string (Azure's ``api-version``)."""
    parts = urlsplit(base_url)
    path = parts.path.rstrip("/")
    if not path.endswith("/chat/completions"):
        path += "/chat/completions"
    return urlunsplit((parts.scheme, parts.netloc, path, parts.query, ""))


def chat_headers(
    api_key: str | None, provider: Provider, extra: Mapping[str, str]
) -> dict[str, str]:
    """The headers of every request: the answers read, ``api_key`` under the provider's
    header (``Bearer`` in ``authorization``), the endpoint's ``extra`` headers over them
    (``headers_over``: one header a name)."""
    # only the encodings read a bounded piece at a time (``bodies.body_chunks``)
    headers = {
        "accept": "text/event-stream, application/json",
        "accept-encoding": "gzip, deflate",
    }
    if api_key:
        if provider.auth_header == "authorization":
            headers["authorization"] = f"Bearer {api_key}"
        else:
            headers[provider.auth_header] = api_key
    return headers_over(headers, extra)


@attrs.frozen(kw_only=True)
class RequestDefaults:
    """Configured request options; a request's own non-None values win."""

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    service_tier: str | None = None
    reasoning_effort: str | None = None
    temperature: float | None = None
    max_output_tokens: int | None = None
    response_format: Mapping[str, Any] | None = None


def effective(request: ModelRequest, defaults: RequestDefaults) -> ModelRequest:
    """The request with its None options filled from the defaults (``request`` itself when
    there is nothing to fill: every call passes here)."""
    if defaults == _NO_DEFAULTS:
        return request
    return attrs.evolve(
        request,
        service_tier=_pick(request.service_tier, defaults.service_tier),
        reasoning_effort=_pick(request.reasoning_effort, defaults.reasoning_effort),
        temperature=_pick(request.temperature, defaults.temperature),
        max_output_tokens=_pick(request.max_output_tokens, defaults.max_output_tokens),
        response_format=_pick(request.response_format, defaults.response_format),
    )


_NO_DEFAULTS = RequestDefaults()


def _pick(value: Any, default: Any) -> Any:
    return default if value is None else value


def wire_message(message: Message) -> dict[str, Any]:
    """One domain message in the Chat Completions shape (``Message.chat()``; no ``name``:
    Groq rejects it)."""
    return message.chat()


def build_body(request: ModelRequest, provider: Provider, *, stream: bool) -> dict[str, Any]:
    """The JSON body for ``POST {base_url}/chat/completions``."""
    messages = [{"role": "system", "content": request.system}] if request.system else []
    messages.extend(wire_message(m) for m in request.messages)
    body: dict[str, Any] = {"model": request.model, "messages": messages, "stream": stream}
    if stream and provider.stream_usage:
        options: dict[str, Any] = {"include_usage": True}
        if provider.obfuscation_opt_out:
            options["include_obfuscation"] = False
        body["stream_options"] = options
    if request.tools:
        body["tools"] = WireTools(request.tools)
        choice = tool_choice_of(request, provider)
        if choice is not None:
            body["tool_choice"] = wire_tool_choice(choice)
        if request.parallel_tool_calls is not None:
            body["parallel_tool_calls"] = request.parallel_tool_calls
    _answer_format(body, request, provider)
    if request.reasoning_effort is not None:
        if provider.reasoning_object:
            body["reasoning"] = {"effort": request.reasoning_effort}
        else:
            body["reasoning_effort"] = request.reasoning_effort
    if request.service_tier is not None:
        body["service_tier"] = request.service_tier
    if request.max_output_tokens is not None:
        body[provider.max_tokens_field] = request.max_output_tokens
    if request.temperature is not None:
        body["temperature"] = request.temperature
    for name in provider.dropped_params:
        body.pop(name, None)
    return body


class WireTools(list[dict[str, Any]]):
    """A body's ``tools``: the specs' entries (``ToolSpec.to_openai``), a list as any JSON
    encoder takes it, whose encoding ``CoreClient`` takes from ``encoded`` instead: the same
    schemas went out with every call of an agent, and encoding them was ~50 of a request
    body's ~55 µs (docs/benchmarks.md, "stall22"). The entries are not to be changed: their
    encoding is kept per tools tuple (a registry gives the same tuple while its tools are
    unchanged, ``ToolRegistry.specs``, and its specs are frozen)."""

    __slots__ = ("_specs",)

    def __init__(self, specs: tuple[ToolSpec, ...]) -> None:
        super().__init__([spec.to_openai() for spec in specs])
        self._specs = specs

    def encoded(self, encode: Callable[[Any], bytes]) -> bytes:
        """``encode(self)``, made once per tools tuple and kept (the last few tuples)."""
        global _encodings
        specs = self._specs
        kept = _ENCODED.get(id(specs))
        if kept is not None and kept[0] is specs:
            return kept[1]
        data = encode(self)
        _encodings += 1
        if len(_ENCODED) >= _ENCODED_KEPT:
            _ENCODED.clear()
        _ENCODED[id(specs)] = (specs, data)  # the tuple kept alive: its id is not reused
        return data


_ENCODED: dict[int, tuple[tuple[ToolSpec, ...], bytes]] = {}
_ENCODED_KEPT = 64
_encodings = 0


def tools_encodings() -> int:
    """How many tools tuples ``WireTools.encoded`` has encoded in this process."""
    return _encodings


def json_schema_format(schema: Mapping[str, Any]) -> dict[str, Any]:
    """``response_format`` asking for a JSON value that matches ``schema`` (not ``strict``:
    OpenAI's strict mode refuses schemas without ``additionalProperties: false``)."""
    return {
        "type": "json_schema",
        "json_schema": {"name": "final_answer", "schema": dict(schema), "strict": False},
    }


def _answer_format(body: dict[str, Any], request: ModelRequest, provider: Provider) -> None:
    """``response_format``: the configured one, or the output schema's where the provider
    constrains this request (``Provider.structured_output``)."""
    if request.response_format is not None:
        body["response_format"] = dict(request.response_format)
    if request.output_schema is not None and _constrains(request, provider):
        body["response_format"] = json_schema_format(request.output_schema)
        if provider.structured_output == "without_tools":  # the grammar leaves no room for them
            for name in ("tools", "tool_choice", "parallel_tool_calls"):
                body.pop(name, None)


def _constrains(request: ModelRequest, provider: Provider) -> bool:
    if provider.structured_output == "always":
        return True
    cannot_call = not request.tools or request.tool_choice == "none"
    return provider.structured_output == "without_tools" and cannot_call


KEYWORD_CHOICES = frozenset({"auto", "none", "required"})


def tool_choice_of(request: ModelRequest, provider: Provider) -> str | None:
    """The tool choice to send: the request's, else the provider's default (with tools)."""
    if request.tool_choice is not None:
        return request.tool_choice
    return provider.default_tool_choice if request.tools else None


def wire_tool_choice(choice: str) -> str | dict[str, Any]:
    """``auto``/``none``/``required`` as is; any other value names the one tool to call."""
    if choice in KEYWORD_CHOICES:
        return choice
    return {"type": "function", "function": {"name": choice}}


def streams(request: ModelRequest, provider: Provider) -> bool:
    """Whether this request can stream on this provider: tools under automatic choice cannot
    on some servers (llama-cpp-python: an empty 200), a named or no-tools request can."""
    if not request.tools:
        return True
    if not provider.stream_tools:
        return False
    choice = tool_choice_of(request, provider)
    return provider.stream_auto_tools or choice not in (None, "auto", "required")
