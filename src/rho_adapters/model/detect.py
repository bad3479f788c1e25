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

A model asks once (``AskedOnce``): callers arriving while the probe is out wait for its
answer, and a probe cancelled midway is asked again by the next caller.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit, urlunsplit

import attrs

from rho_adapters.model._errors import http_errors
from rho_adapters.model.bodies import small_json
from rho_adapters.model.counts import token_count
from rho_adapters.model.providers import provider_owning
from rho_domain.errors import ModelError
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


class AskedOnce:
    """A model's facts about its server (``facts``: None until asked), asked once."""

    def __init__(self, facts: ServerFacts | None) -> None:
        self.facts = facts
        self._asking: asyncio.Future[None] | None = None  # the probe out now

    async def learn(
        self, ask: Callable[[], Awaitable[ServerFacts]], adopt: Callable[[ServerFacts], None]
    ) -> None:
        """Unless known, ``ask()`` once and ``adopt`` the answer, even a failed probe's (no
        facts; a ``ModelError`` is not raised). A caller arriving while the probe is out
        waits for its answer (a run asks for the window ahead, beside its start, and its
        first call must not go out without it); a probe cancelled midway is asked again by
        the next caller."""
        while self.facts is None:
            asking = self._asking
            if asking is not None:
                await asyncio.shield(asking)  # the asker's, not ours to cancel
                continue
            self._asking = asking = asyncio.get_running_loop().create_future()
            try:
                facts = ServerFacts()
                with contextlib.suppress(ModelError):
                    facts = await ask()
                self.facts = facts
                adopt(facts)
            finally:
                self._asking = None
                asking.set_result(None)


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
