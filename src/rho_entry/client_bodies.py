"""What ``AgentClient`` reads of a server's answers, bounded whatever the server sends.

The server may be hostile or broken (a proxy's page, another program on the port, a server
that lost its mind), so no answer may cost the client more than a bound: an answer's body
is read a piece at a time up to ``limit`` bytes decoded, its ``Content-Encoding`` undone
64 KiB a layer a step (``rho_adapters.model.encodings``; httpx's own ``aiter_bytes``
inflates each network chunk whole, a gzip bomb of 100 KB into 100 MB before anyone counts
a byte), an encoding that cannot be bounded so refused. Before, ``AgentClient._call`` read a
whole answer with ``response.json()``, and an answer of endless bytes grew the client until
the process died. An error answer becomes the ``ApiError`` it says (``refusal``,
``api_error``), another server's answer one that says whose it may be (``foreign``).
"""

from __future__ import annotations

import json
import zlib
from collections.abc import AsyncIterator, Mapping
from typing import Any

import httpx

from rho_adapters.model.encodings import (
    RefusedEncoding,
    decoded,
    layers,
    read_at_most,
    read_head,
)
from rho_domain.url_logins import hide_url_logins
from rho_entry.client_events import EVENT_BYTES
from rho_entry.server.errors import (
    ApiError,
    BodyTooLarge,
    Busy,
    Conflict,
    Forbidden,
    Internal,
    Invalid,
    MethodNotAllowed,
    NotFound,
    Unauthorized,
    UnsupportedMediaType,
    WrongHost,
)

ANSWER_BYTES = EVENT_BYTES
"""The largest answer (not a stream) the client reads: a session's detail shows the calls
waiting for approval, whose arguments are at most one model answer, JSON-escaped."""

ERROR_BYTES = 65_536
"""How much of an error answer is read: the API's ``{"error": ...}`` is far smaller, and of
another server's page the client shows 200 characters."""


def chunks(response: httpx.Response) -> AsyncIterator[bytes]:
    """The body of a streamed ``response`` with its ``Content-Encoding`` undone, a bounded
    piece at a time; ``ApiError`` for an encoding not read so (``br``, ``zstd``, more than
    four stacked) or a body its encoding does not decode. A body already in memory (a
    response built from bytes, as a test's transport makes it) comes from ``aiter_bytes``."""
    if response.is_stream_consumed:
        return response.aiter_bytes()
    encoding = response.headers.get("content-encoding", "identity")
    try:
        layers(encoding)  # refused before the first read
    except RefusedEncoding as exc:
        raise ApiError(_whose(response, f"Content-Encoding {encoding!r}: {exc}")) from None
    return _pieces(response, encoding)


async def _pieces(response: httpx.Response, encoding: str) -> AsyncIterator[bytes]:
    try:
        async for piece in decoded(response.aiter_raw(), encoding):
            yield piece
    except zlib.error as exc:
        raise ApiError(_whose(response, f"a body that is not valid {encoding}: {exc}")) from None


async def body(response: httpx.Response, limit: int) -> bytes:
    """The whole decoded body of a streamed ``response``: ``ApiError`` as soon as it passes
    ``limit`` bytes, before more of it is held."""
    content = await read_at_most(chunks(response), limit)
    if content is None:
        raise ApiError(_whose(response, f"an answer of more than {limit} bytes"))
    return content


async def error_head(response: httpx.Response) -> bytes:
    """The first ``ERROR_BYTES`` of an error answer's decoded body (the rest is never read;
    leaving the stream closes the connection), or what came before its encoding failed: its
    status says what failed."""
    try:
        pieces = chunks(response)
    except ApiError:  # an encoding not read here: nothing of it is shown
        return b""
    return await read_head(pieces, ERROR_BYTES, unread=ApiError)


def _whose(response: httpx.Response, what: str) -> str:
    request = response.request
    return (
        f"the server sent {what} to {request.method} {request.url.path}; is this a "
        "rho-agent serve server?"
    )


_ERRORS: Mapping[int, type[ApiError]] = {
    cls.status: cls
    for cls in (
        Unauthorized,
        Forbidden,
        NotFound,
        MethodNotAllowed,
        Conflict,
        BodyTooLarge,
        UnsupportedMediaType,
        WrongHost,
        Invalid,
        Internal,
    )
}


def parsed(content: bytes) -> Any:
    """The JSON of an answer's body, or None when it is not JSON (nesting past the parser
    included: a RecursionError was a crash)."""
    try:
        return json.loads(content)
    except (ValueError, RecursionError):
        return None


async def refusal(response: httpx.Response) -> ApiError:
    """The error an error answer says, read ``ERROR_BYTES`` deep (``api_error``)."""
    return api_error(response, await error_head(response))


def api_error(response: httpx.Response, content: bytes) -> ApiError:
    """The ``ApiError`` subclass of an error answer's status, with the API's message and
    field, or, for another server's answer, what it said (``foreign``)."""
    try:
        error = parsed(content)["error"]
        message, field = str(error["message"]), error.get("field")
    except (KeyError, TypeError):  # not this API's answer: say whose it may be
        message, field = foreign(response, content), None
    if response.status_code == 429:
        retry = response.headers.get("retry-after", "1").strip()
        # ASCII digits only: isdigit() is true for '²' (a Latin-1 byte), which int() refuses,
        # as it refuses 4,300 digits: a ValueError out of the client, not an ApiError
        plain = retry.isascii() and retry.isdigit() and len(retry) <= 9
        return Busy(message, retry_after=int(retry) if plain else 1)
    cls = _ERRORS.get(response.status_code, ApiError)
    return cls(message, field=field)


def foreign(response: httpx.Response, content: bytes, *, answered: bool = False) -> str:
    """An answer that is not this API's (an error that is not ``{"error": ...}``, or, when
    ``answered``, a success that is not a JSON object): its status, its reason and text, and,
    for a 404 or such a success, that the URL may not be a ``rho-agent serve`` server."""
    status = f"HTTP {response.status_code} {response.reason_phrase}".strip()
    text = " ".join(content[:800].decode("utf-8", "replace")[:200].split())
    url = hide_url_logins(str(response.request.url))  # a login typed in the server's URL
    message = f"{status} from {response.request.method} {url}"
    if text:
        message += f": {text}"
    if response.status_code == 404 or answered:
        message += (
            "; is this a rho-agent serve server? Give its base URL, as it printed it "
            "(e.g. http://127.0.0.1:8765), without /api"
        )
    return message
