"""ModelEndpoint: where a model server lives and how to reach it, as one value.

Every model adapter takes one (``OpenAIChatModel(model=..., endpoint=...)``) and one HTTP seam
(``http``: a ``ClientPool``, the process's ``SHARED_POOL`` by default, or the caller's
``httpx.AsyncClient``; a transport, for tests or a recording, is a ``ClientPool(transport=...)``).
What to send (model options, the provider's quirks) stays with the adapter; this is only the
wire: URL, credentials, extra headers, how long to wait and how often to try again.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import TypeAlias

import attrs
import httpx

from rho_adapters.model._http import Timeouts
from rho_adapters.model.answer_limits import AnswerLimits
from rho_adapters.model.pool import ClientPool
from rho_adapters.model.proxies import NO_PROXIES, ProxyRoutes
from rho_adapters.model.retry import RetryPolicy

Http: TypeAlias = ClientPool | httpx.AsyncClient
"""The one way HTTP is brought to an adapter (None: ``SHARED_POOL``)."""


def _frozen_headers(headers: Mapping[str, str]) -> Mapping[str, str]:
    return MappingProxyType(dict(headers))


@attrs.frozen(kw_only=True)
class ModelEndpoint:
    """One model server's address and credentials.

    ``base_url`` None means the provider's usual one (OpenAI's, Anthropic's). ``api_key`` is
    sent as the provider expects (Bearer, ``api-key``, ``x-api-key``) and never shown in a repr;
    ``key_variable`` names the environment variable it came from, for error messages.
    ``headers`` are sent with every request, after (and over) the adapter's own.
    ``timeouts`` and ``retry`` replace ``Timeouts()`` and ``RetryPolicy()``; ``limits``
    bound one answer's bytes, duration and tool calls (``AnswerLimits``). ``proxies``
    route the requests (``ProxyRoutes.from_environ(os.environ)``: as httpx would; the facade
    and the CLI pass the process's); none by default.
    """

    base_url: str | None = None
    api_key: str | None = attrs.field(default=None, repr=False)
    key_variable: str = ""
    headers: Mapping[str, str] = attrs.field(factory=dict, converter=_frozen_headers, eq=False)
    timeouts: Timeouts = attrs.field(factory=Timeouts)
    retry: RetryPolicy = attrs.field(factory=RetryPolicy)
    limits: AnswerLimits = attrs.field(factory=AnswerLimits)
    proxies: ProxyRoutes = NO_PROXIES
