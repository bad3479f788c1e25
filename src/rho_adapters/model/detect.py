"""What kind of server is behind a base URL, and how large its context window is: asked,
not guessed from the port.

``probe`` reads what servers publish about themselves, each a cheap GET:

- ``{root}/props`` (llama.cpp ``llama-server``): ``default_generation_settings.n_ctx``;
- ``{base}/models``: ``owned_by`` names the server, matched against the ``owners`` of the
  ``PROVIDERS`` rows (``vllm``, ``llamacpp``, ``me`` for llama-cpp-python,
  ``library``/``ollama``); vLLM adds ``max_model_len``;
- the ``server`` response header (``uvicorn`` for the Python servers).

Anything that fails or says nothing leaves that fact unknown; a probe never raises. Each
question is bounded as a whole (``timeout``, at most ``PROBE_SECONDS``): a server that never
answers, or answers a byte at a time forever, leaves the facts unknown after that time,
never holds the run (httpx's own read timeout is reset by every byte).
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit, urlunsplit

import attrs

from rho_adapters.model._errors import http_errors
from rho_adapters.model.bodies import small_json
from rho_adapters.model.counts import token_count
from rho_adapters.model.providers import provider_owning
from rho_domain.value_methods import value_eq, value_hash, value_repr

if TYPE_CHECKING:
    from rho_adapters.model.core_client import AnyClient

PROBE_SECONDS = 5.0
"""The longest one question of a probe may take, connecting included."""


@attrs.frozen(kw_only=True)
class ServerFacts:
    """``provider`` is a ``PROVIDERS`` row's name or None; ``evidence`` says where each fact
    came from; ``answered`` whether the server answered at all (not part of equality)."""

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    provider: str | None = None
    context_window: int | None = None
    evidence: tuple[str, ...] = ()
    # False when no request got an HTTP answer: the facts then say nothing about the server.
    answered: bool = attrs.field(default=False, eq=False)


def server_root(base_url: str) -> str:
    """``http://host:port/v1`` → ``http://host:port`` (where /props and /tokenize live)."""
    parts = urlsplit(base_url)
    path = parts.path.rstrip("/")
    if path.endswith("/v1"):
        path = path[: -len("/v1")]
    return urlunsplit((parts.scheme, parts.netloc, path, "", ""))


async def probe(
    client: AnyClient,
    base_url: str,
    *,
    headers: Mapping[str, str] | None = None,
    timeout: float = PROBE_SECONDS,
) -> ServerFacts:
    """Ask the server at ``base_url`` what it is (sending ``headers`` with each question,
    each over within ``timeout`` seconds, at most ``PROBE_SECONDS``); unknown facts stay
    None."""
    provider: str | None = None
    window: int | None = None
    evidence: list[str] = []
    timeout = min(timeout, PROBE_SECONDS)
    ask = functools.partial(_get_json, client, headers=headers, timeout=timeout)
    props, props_headers = await ask(server_root(base_url) + "/props")
    if isinstance(props, Mapping):
        settings = props.get("default_generation_settings")
        n_ctx = token_count((settings if isinstance(settings, Mapping) else props).get("n_ctx"))
        if n_ctx:
            provider, window = "llamacpp", n_ctx
            evidence.append(f"/props n_ctx {n_ctx}")
    models, answer = await ask(base_url.rstrip("/") + "/models")
    first = _first_model(models)
    owner = str(first.get("owned_by") or "").lower()
    owning = provider_owning(owner) if owner else None
    if provider is None and owning is not None:
        provider = owning
        server = answer.get("server", "")
        evidence.append(f"/models owned_by {owner!r}" + (f", server {server}" if server else ""))
    max_len = token_count(first.get("max_model_len"))
    if window is None and max_len:
        window = max_len
        evidence.append(f"/models max_model_len {max_len}")
    return ServerFacts(
        provider=provider,
        context_window=window,
        evidence=tuple(evidence),
        answered=bool(props_headers) or bool(answer),
    )


async def _get_json(
    client: AnyClient, url: str, *, headers: Mapping[str, str] | None, timeout: float
) -> tuple[Any, Mapping[str, str]]:
    """The JSON at ``url`` (None if none) and the answer's headers (empty: no answer, or
    none whole within ``timeout`` seconds)."""
    from rho_adapters.model.core_client import RequestTimeout  # with the first request

    failures: tuple[type[BaseException], ...] = (*http_errors(), TimeoutError)
    try:
        async with asyncio.timeout(timeout):
            return await small_json(
                client,
                "GET",
                url,
                headers=headers,
                timeout=RequestTimeout(timeout, connect=min(3.0, timeout)),
            )
    except failures:
        return None, {}


def _first_model(models: Any) -> Mapping[str, Any]:
    data = models.get("data") if isinstance(models, Mapping) else None
    if isinstance(data, list) and data and isinstance(data[0], Mapping):
        return data[0]
    return {}
