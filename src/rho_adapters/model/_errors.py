"""The one place where transport exceptions (httpx's, httpcore's) and server error bodies
become rho_domain errors.

``map_httpx_errors()`` translates transport failures; ``error_from_response`` turns an HTTP error
status and body into the typed error the loop can act on (compact on context overflow, stop on
authentication, wait on rate limits); ``stream_error`` does the same for an error reported inside
a 200 stream. Those two, and the reading of error bodies, are ``error_bodies``'s, named here
and imported with the first name asked for (a run whose server answers never reads an error
body). ``explain`` adds, once, where the call went and what to check: the URL and model, the
variable the key came from, ``--model`` and the ``/v1`` path, the server's words less the
secrets they quote (``secret_hiding``'s, imported with the first failure explained).
"""

from __future__ import annotations

import contextlib
import socket
import sys
from collections.abc import Iterator
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from rho_domain.errors import (
    AuthenticationError,
    ContextLengthExceeded,
    ModelConnectionError,
    ModelError,
    ModelNotFoundError,
    ModelProtocolError,
    ModelTimeout,
)
from rho_domain.lazy_names import lazy_names

if TYPE_CHECKING:  # an error body's reading: with the first error a server sends
    from rho_adapters.model.error_bodies import SAID_CHARS as SAID_CHARS
    from rho_adapters.model.error_bodies import error_from_response as error_from_response
    from rho_adapters.model.error_bodies import error_payload as error_payload
    from rho_adapters.model.error_bodies import overflow_numbers as overflow_numbers
    from rho_adapters.model.error_bodies import said as said
    from rho_adapters.model.error_bodies import stream_error as stream_error

_BODIES = "rho_adapters.model.error_bodies"
__getattr__ = lazy_names(
    __name__,
    dict.fromkeys(
        (
            "SAID_CHARS",
            "error_from_response",
            "error_payload",
            "overflow_numbers",
            "said",
            "stream_error",
        ),
        _BODIES,
    ),
)


def _kinds(name: str) -> tuple[type[Exception], ...]:
    """The class ``name`` of httpcore (what a ``CoreClient`` raises) and httpx's (its clients),
    httpx's only once httpx is imported: before that, no httpx client exists to raise it."""
    import httpcore

    found: tuple[type[Exception], ...] = (getattr(httpcore, name),)
    httpx = sys.modules.get("httpx")
    return found if httpx is None else (*found, getattr(httpx, name))


def http_errors() -> tuple[type[Exception], ...]:
    """Every transport error a model client raises: httpcore's (``CoreClient``) and, once
    imported, httpx's (``httpx.HTTPError``, and ``httpx.StreamError``: a stream closed under
    its reader, a RuntimeError that left the adapter as httpx's own exception)."""
    import httpcore

    found: tuple[type[Exception], ...] = (
        httpcore.NetworkError,
        httpcore.TimeoutException,
        httpcore.ProtocolError,
        httpcore.ProxyError,
        httpcore.UnsupportedProtocol,
    )
    httpx = sys.modules.get("httpx")
    return found if httpx is None else (*found, httpx.HTTPError, httpx.StreamError)


@contextlib.contextmanager
def map_httpx_errors(*, idle_timeout: float | None = None) -> Iterator[None]:
    """Re-raise httpx's and httpcore's transport exceptions as ModelTimeout /
    ModelConnectionError / ModelProtocolError."""
    try:
        yield
    except ExceptionGroup as group:
        # anyio's happy-eyeballs connect wraps what the socket raised (OverflowError for a bad
        # port, OSError) in a group that httpcore lets through: say what the leaves said.
        leaves = "; ".join(f"{type(e).__name__}: {e}" for e in _leaves(group))
        raise ModelConnectionError(f"connection to the model server failed: {leaves}") from group
    except Exception as exc:
        mapped = _mapped(exc, idle_timeout)
        if mapped is None:
            raise
        raise mapped from exc


def _mapped(exc: Exception, idle_timeout: float | None) -> ModelError | None:
    """The domain's error for transport error ``exc``; None for any other exception."""
    if not isinstance(exc, http_errors()):
        return None
    if isinstance(exc, _kinds("ConnectTimeout")):
        return ModelTimeout(f"could not connect to the model server in time: {exc}")
    if isinstance(exc, _kinds("TimeoutException")):
        wait = f" for {idle_timeout:g} s" if idle_timeout else ""
        return ModelTimeout(f"the model server sent nothing{wait} (idle timeout)")
    detail = str(exc) or type(exc).__name__
    if isinstance(exc, _kinds("RemoteProtocolError")):
        if detail == _FRAMING_TOO_LONG:
            # h11's bound on one piece of HTTP framing (the response's head, a chunk's size
            # line): the server's answer, not a broken connection; not worth another attempt.
            return ModelProtocolError(
                "the model server sent a response head (or a chunk size line) longer than "
                "the 100 KiB the client reads: not an answer"
            )
        if _broke_http(exc):
            return ModelProtocolError(
                f"the model server's answer is not valid HTTP/1.1 ({detail}): not an answer; "
                "check the server or the proxy in front of it"
            )
    from rho_adapters.model.tls import PLAIN_HTTP_ANSWER, answered_plain_http

    if isinstance(exc, _kinds("ConnectError")) and answered_plain_http(exc):
        return ModelProtocolError(PLAIN_HTTP_ANSWER)  # the URL: explain() adds it
    return ModelConnectionError(f"connection to the model server failed: {detail}")


_FRAMING_TOO_LONG = "Receive buffer too long"  # h11's words, past httpcore's 100 KiB


def _broke_http(exc: BaseException) -> bool:
    """True when h11 refused what the server sent (a Transfer-Encoding other than chunked, two
    of them, an illegal chunk header or status line...): the same answer comes again, so it is
    not retried, nor called a broken connection ('try again'). A connection closed mid-answer
    is h11's error too, and stays a ``ModelConnectionError``."""
    import h11  # httpcore's HTTP/1.1 parser, there whenever httpx is; only on this path

    cause: BaseException | None = exc
    while cause is not None and not isinstance(cause, h11.RemoteProtocolError):
        cause = cause.__cause__ or cause.__context__
    return cause is not None and not str(cause).startswith("peer closed connection")


def _leaves(group: BaseExceptionGroup[BaseException]) -> list[BaseException]:
    out: list[BaseException] = []
    for inner in group.exceptions:
        out.extend(_leaves(inner) if isinstance(inner, BaseExceptionGroup) else [inner])
    return out


def add_hint(exc: BaseException, hint: str) -> None:
    """Append ``hint`` to an exception's message (its first argument), once."""
    message = str(exc.args[0]) if exc.args else str(exc)
    if hint not in message:
        exc.args = (f"{message} ({hint})", *exc.args[1:])


def explain(
    exc: ModelError,
    *,
    model: str,
    url: str,
    key_variable: str,
    has_key: bool,
    provider: str,
    key: str | None = None,
) -> None:
    """Say where a failed call went and what to check; the message keeps the server's words,
    less the secrets they may quote: ``key`` (the API key sent) and a URL's password.

    ``url`` is the endpoint called, ``key_variable`` the environment variable the key came
    from ("" when the caller passed the key itself), ``provider`` the provider row's name.
    """
    if not isinstance(exc, ContextLengthExceeded):
        _add_endpoint_hint(exc, model, url, key_variable, has_key, provider)
    if isinstance(exc, AuthenticationError) and key is not None:
        mismatch = _other_providers_key(key, provider)
        if mismatch:
            add_hint(exc, mismatch)
    # A gateway may quote the key it was sent, the base URL may carry a login, and httpx's
    # words may quote that URL: the message goes to the trace, --json and the terminal.
    if exc.args:
        from rho_adapters.model.secret_hiding import hide_secrets  # with the first failure

        exc.args = (hide_secrets(str(exc.args[0]), key), *exc.args[1:])


def _add_endpoint_hint(
    exc: ModelError, model: str, url: str, key_variable: str, has_key: bool, provider: str
) -> None:
    where = f"model {model!r} at {url}, provider {provider}"
    if isinstance(exc, ModelNotFoundError) and provider == "anthropic":
        # the URL already ends /v1/messages: a 404 there is mostly a server that does not
        # speak Anthropic's API (llama.cpp, vLLM...), the /v1 advice pointed the wrong way
        hint = (
            f"{where}: check --model, and that the server speaks Anthropic's Messages API "
            "(POST /v1/messages; the base URL is given without /v1); an OpenAI-compatible "
            "server takes --provider openai"
        )
    elif isinstance(exc, ModelNotFoundError):
        hint = (
            f"{where}: check --model (the server lists its models at GET .../models) and that "
            "the base URL includes the API path, usually /v1"
        )
    elif isinstance(exc, AuthenticationError):
        source = f"from {key_variable}" if key_variable else "given to the client"
        key = f"the API key {source} was refused" if has_key else "no API key was sent"
        variable = key_variable or "the provider's key variable"
        hint = f"{where}: {key}; check {variable} (or --api-key-env to name another variable)"
    elif isinstance(exc, (ModelConnectionError, ModelTimeout)) and _never_answered(exc):
        # the adapter serves the CLI and the library: name both spellings of the setting
        setting = "the base URL (--base-url, OPENAI_BASE_URL or AgentConfig.base_url)"
        hint = f"{where}: is the server running there? check {setting}"
        if _unresolved(exc):  # a typo'd host, or no DNS: "running there" misleads
            host = urlsplit(url).hostname
            hint = f"{where}: the host name {host!r} could not be resolved (DNS): check its "
            hint += f"spelling in {setting}, and that this machine reaches a name server"
    elif isinstance(exc, ModelTimeout):
        hint = f"{where}: the server took the call, then went quiet; a slow model may need a "
        hint += "longer timeout (--timeout, AgentConfig.model_timeout)"
    elif isinstance(exc, ModelConnectionError):
        # The server was up: it answered, then the connection broke (it crashed or restarted,
        # a proxy cut the stream). Pointing at the URL would send the user the wrong way.
        hint = f"{where}: the server answered, then closed the connection mid-response; try "
        hint += "again, or check the server's log"
    else:
        hint = where
    add_hint(exc, hint)


def _other_providers_key(key: str, provider: str) -> str:
    """What to say when the refused ``key`` is plainly another provider's: an Anthropic key
    (``sk-ant-``) sent to an OpenAI-compatible server, or an OpenAI one (``sk-proj-``, any
    other ``sk-``) to Anthropic; "" otherwise. Before, the hint said only that the key "was
    refused", and the user checked a key that was right, for another service."""
    anthropic = key.startswith("sk-ant-")
    if anthropic and provider != "anthropic":
        return (
            "the key is an Anthropic key (sk-ant-...): for Anthropic's API set "
            "ANTHROPIC_API_KEY and give no OpenAI base URL, or pass --provider anthropic"
        )
    if provider == "anthropic" and key.startswith("sk-") and not anthropic:
        return (
            "the key looks like an OpenAI key (sk-...), not an Anthropic one (sk-ant-...): "
            "check ANTHROPIC_API_KEY"
        )
    return ""


def _unresolved(exc: BaseException) -> bool:
    """True when a ``socket.gaierror`` is in ``exc``'s cause chain: the URL's host name has no
    address (``Name or service not known``, ``Temporary failure in name resolution``)."""
    seen: BaseException | None = exc
    for _ in range(8):  # a short chain; a cycle through __context__ must end
        if seen is None:
            return False
        if isinstance(seen, socket.gaierror):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


def _never_answered(exc: ModelError) -> bool:
    """True when the call failed before the server answered anything: no connection (refused,
    unknown host, bad port, connect timeout), as opposed to a connection that broke later."""
    cause = exc.__cause__
    before = (*_kinds("ConnectError"), *_kinds("ConnectTimeout"), *_kinds("UnsupportedProtocol"))
    return isinstance(cause, (*before, ExceptionGroup)) and not exc.partial_text
