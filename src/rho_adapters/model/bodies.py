"""Reading a model server's response body, bounded in time and size, for the model clients
and MCP over HTTP: a streamed body's chunks as they arrive, its ``Content-Encoding`` undone a
bounded piece at a time (``body_chunks``), a non-streamed answer's whole body (``whole_body``),
the head of an error answer (``error_body``) and a small JSON answer about the server itself
(``small_json``: its ``/props``, its models, a token count).
"""

from __future__ import annotations

import asyncio
import contextlib
import zlib
from collections.abc import AsyncIterator, Mapping
from typing import TYPE_CHECKING, Any

from rho_adapters.model.answer_limits import AnswerWatch
from rho_adapters.model.chunks import loads
from rho_domain.errors import ModelProtocolError

if TYPE_CHECKING:
    from rho_adapters.model.core_client import AnyClient, AnyResponse
    from rho_adapters.model.encodings import RefusedEncoding

BOM = b"\xef\xbb\xbf"
"""A UTF-8 byte order mark, dropped from the start of every body read here: JSON's RFC 8259
lets a reader ignore it, and ``json.loads`` refused such an answer as not JSON."""


def body_chunks(response: AnyResponse) -> AsyncIterator[bytes]:
    """A streamed response's body as it arrives: httpx's ``aiter_raw`` when the server did
    not compress it (no ``content-encoding``, or ``identity``: what every known server sends
    for a stream), whose chunks are already the content (no generator added for each network
    chunk, that is for each streamed delta). A compressed body is undone here
    (``encodings.decoded``: at most 64 KiB a layer a step, decoded only as the reader asks),
    never by httpx's ``aiter_bytes``, which inflates each network chunk whole: a gzip bomb
    of 1 KB became 900 MB before a reader could count a byte of it. An encoding that cannot be
    bounded so (``br``, ``zstd``, more than four stacked) is ``ModelProtocolError``, as is a
    body its encoding does not decode. A body already read (a response built from bytes)
    comes from ``aiter_bytes``, which serves it from memory."""
    encoding = response.headers.get("content-encoding", "identity")
    if response.is_stream_consumed:
        return response.aiter_bytes()
    if encoding == "identity":
        return response.aiter_raw()
    # the decoders with the first compressed body: no known server compresses a stream
    from rho_adapters.model.encodings import RefusedEncoding, layers

    try:
        layers(encoding)  # refused before the first read
    except RefusedEncoding as exc:
        raise _refused(encoding, exc) from exc
    return _decoded(response, encoding)


async def _decoded(response: AnyResponse, encoding: str) -> AsyncIterator[bytes]:
    from rho_adapters.model.encodings import decoded

    try:
        async for piece in decoded(response.aiter_raw(), encoding):
            yield piece
    except zlib.error as exc:
        raise ModelProtocolError(
            f"the model server's answer is not valid {encoding} (its Content-Encoding): {exc}"
        ) from exc


def _refused(encoding: str, exc: RefusedEncoding) -> ModelProtocolError:
    return ModelProtocolError(
        f"the model server compressed its answer with Content-Encoding {encoding!r}: {exc}, "
        "as it cannot be read a bounded piece at a time (gzip and deflate are; the client "
        "asks for those alone)"
    )


async def whole_body(response: AnyResponse, watch: AnswerWatch) -> bytes:
    """A non-streamed answer's whole body, within ``watch``'s limits (the body's decoded
    bytes, the answer's duration). Whitespace alone (what some servers send as a keep-alive
    before the JSON of a slow answer, and legal JSON) for its idle seconds is a
    ``ModelTimeout`` (make the watch with ``waited=BODY_WAIT``): httpx's read timeout, reset
    by every byte, let a body of spaces that never ended hold the run forever."""
    parts = []
    async for chunk in body_chunks(response):
        if chunk.strip():
            watch.heard(len(chunk))
        else:
            watch.quiet(len(chunk))
        parts.append(chunk)
    return b"".join(parts).removeprefix(BOM)


ERROR_BODY_BYTES = 65_536
"""How much of an error answer's body is read: enough for any server's message."""


async def error_body(
    response: AnyResponse, *, idle: float | None, limit: int = ERROR_BODY_BYTES
) -> str:
    """The text of an error answer (a 4xx or 5xx), as much of it as comes within ``idle``
    seconds (None: the caller's own deadline bounds it) and ``limit`` bytes; the rest is never
    read (leaving the stream closes the connection). The status says what failed, and a body
    that never ends (a proxy's, a byte at a time) or is huge held the run before it could be
    said. The model clients and MCP over HTTP read error answers through this."""
    received = bytearray()
    unread = ""
    with contextlib.suppress(TimeoutError):
        async with asyncio.timeout(idle):
            try:
                async for chunk in body_chunks(response):
                    received += chunk
                    if len(received) >= limit:
                        break
            except ModelProtocolError as exc:  # its encoding: the status still says what failed
                unread = f" [the rest of the body was not read: {exc}]"
    text = bytes(received[:limit]).removeprefix(BOM).decode("utf-8", "replace")
    return text + unread


SMALL_JSON_BYTES = 1 << 20
"""How much of a server's answer about itself is read: its ``/props`` (a chat template, some
KB), its model list, a token count (of a prompt that fits the context)."""


async def small_json(
    client: AnyClient, method: str, url: str, *, limit: int = SMALL_JSON_BYTES, **kw: Any
) -> tuple[Any, Mapping[str, str]]:
    """The JSON of a 200 answer to ``method url`` and the answer's headers; the JSON is None
    for another status, a body that is not JSON (or nests past the parser), more than
    ``limit`` bytes decoded or an encoding not read here. ``kw`` goes to ``client.stream``;
    httpx's errors are the caller's to map, the caller bounds the time. Before, these were
    ``client.get``/``post`` and ``response.json()``: the whole body inflated at once (a gzip
    body of 200 KB took 1 GB) and a deeply nested one raised RecursionError, a crash."""
    async with client.stream(method, url, **kw) as response:
        body = bytearray()
        try:
            # read whatever the status (a 404's page too), so that the connection goes
            # back to the pool: one closed with its body unread cannot be used again
            async for chunk in body_chunks(response):
                body += chunk
                if len(body) > limit:
                    return None, response.headers
        except ModelProtocolError:
            return None, response.headers
    if response.status_code != 200:
        return None, response.headers
    try:
        return loads(body.removeprefix(BOM).decode("utf-8", "replace")), response.headers
    except ValueError:
        return None, response.headers
