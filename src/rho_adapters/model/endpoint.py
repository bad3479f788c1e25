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
from typing import TYPE_CHECKING, TypeAlias

import attrs

from rho_adapters.model._http import Timeouts
from rho_adapters.model.answer_limits import AnswerLimits
from rho_adapters.model.pool import ClientPool
from rho_adapters.model.proxies import NO_PROXIES, ProxyRoutes
from rho_adapters.model.retry import RetryPolicy
from rho_domain.header_names import check_header_names
from rho_domain.value_methods import value_eq, value_hash, value_repr

if TYPE_CHECKING:
    import httpx

Http: TypeAlias = "ClientPool | httpx.AsyncClient"
"""The one way HTTP is brought to an adapter (None: ``SHARED_POOL``)."""


def _frozen_headers(headers: Mapping[str, str]) -> Mapping[str, str]:
    return MappingProxyType(dict(headers))


@attrs.frozen(kw_only=True)
class ModelEndpoint:
    """One model server's address and credentials.

    ``base_url`` None means the provider's usual one (OpenAI's, Anthropic's). ``api_key`` is
    sent as the provider expects (Bearer, ``api-key``, ``x-api-key``) and never shown in a repr;
    ``key_variable`` names the environment variable it came from, for error messages.
    ``headers`` are sent with every request, over the adapter's own (one of the same name in
    any case is replaced: ``headers_over``).
    ``timeouts`` and ``retry`` replace ``Timeouts()`` and ``RetryPolicy()``; ``limits``
    bound one answer's bytes, duration and tool calls (``AnswerLimits``). ``proxies``
    route the requests (``ProxyRoutes.from_environ(os.environ)``: as httpx would; the facade
    and the CLI pass the process's); none by default.
    """

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    base_url: str | None = None
    api_key: str | None = attrs.field(default=None, repr=False)
    key_variable: str = ""
    headers: Mapping[str, str] = attrs.field(factory=dict, converter=_frozen_headers, eq=False)
    timeouts: Timeouts = attrs.field(factory=Timeouts)
    retry: RetryPolicy = attrs.field(factory=RetryPolicy)
    limits: AnswerLimits = attrs.field(factory=AnswerLimits)
    proxies: ProxyRoutes = NO_PROXIES

    def __attrs_post_init__(self) -> None:
        # Checked here, once: at the first request a key with a non-ASCII character raised a
        # bare UnicodeEncodeError, and one with a trailing space or a line break h11's
        # "Illegal header value", retried three times as a connection failure.
        if self.api_key:
            where = self.key_variable or "the API key"
            refuse_header_text(self.api_key, f"{where} (the API key)")
        check_header_names(self.headers, "ModelEndpoint.headers")
        for name, value in self.headers.items():
            refuse_header_text(value, f"header {name!r}")


def refuse_header_text(value: str, what: str) -> None:
    """Raise ``ConfigError`` when ``value`` cannot be an HTTP header's value: printable ASCII
    with spaces or tabs only between characters. The message names ``what`` and the
    character's position and kind, never the value (a credential)."""
    problem = _header_problem(value)
    if problem is not None:
        from rho_domain.errors import ConfigError

        raise ConfigError(
            f"{what} {problem}, which an HTTP header cannot carry: set it again without it "
            "(a paste often brings a space, a line break or a typographic quote)"
        )


def _header_problem(value: str) -> str | None:
    if value != value.strip(" \t"):
        return "begins or ends with a space or tab"
    for index, char in enumerate(value):
        if char in " \t" or "!" <= char <= "~":
            continue
        if char in "\r\n":
            return f"has a line break at character {index + 1}"
        if char < " " or char == "\x7f":
            return f"has a control character ({char!r}) at character {index + 1}"
        return f"has a non-ASCII character at character {index + 1}"
    return None
