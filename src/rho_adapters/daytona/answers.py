"""What the executor reads of a Daytona answer, bounded whatever the server sends.

The toolbox daemon runs inside the sandbox, where the model's commands run too, and the
control plane may be a proxy's page: neither chooses what an answer costs here. An answer
is read a piece at a time, at most ``ANSWER_BYTES`` decoded, its ``Content-Encoding``
undone 64 KiB a layer a step (``rho_adapters.model.encodings``; httpx inflated each network
chunk whole, 16 KB of gzip into 16 MB), an encoding not read so refused, and whole within
its deadline (the read timeout counts silence only: a byte every few seconds held a call for
good). Before, ``SandboxAPI`` read every answer whole with ``client.request``.
"""

from __future__ import annotations

import asyncio
import json
import zlib
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import attrs
import httpx

from rho_adapters.model.encodings import RefusedEncoding, decoded, read_at_most, read_head
from rho_domain.errors import ExecutorError
from rho_domain.ports.clock import Clock
from rho_domain.value_methods import value_eq, value_hash, value_repr

ANSWER_BYTES = 256 * 1024 * 1024
"""The largest answer read: a command's output is capped by its script (``scripts.capped``)
and a file's bytes come base64-encoded in one, far below."""

ERROR_BYTES = 65_536
"""How much of an error answer is read: of its message, 300 characters are shown."""

QUOTED = 300
"""How much of a script's output an error quotes (the model, the trace and the log read it)."""


def quoted(text: str) -> str:
    """``text`` (what a failed script printed) cut to ``QUOTED`` characters, the cut said."""
    if len(text) <= QUOTED:
        return text
    return f"{text[:QUOTED]}... ({len(text) - QUOTED:,} more characters)"


RETRIES = 2  # a request turned away (429, 503 with Retry-After) is sent at most this often again
MAX_WAIT = 10.0  # seconds: a longer Retry-After is waited this long (then said, if refused again)


def come_back_after(response: httpx.Response, retried: int, now: float) -> float | None:
    """Seconds to wait before sending again the request ``response`` turned away, or None
    (not turned away, or already ``RETRIES`` times). A 429 is always retried (a second, or
    its ``Retry-After``), a 503 only with a ``Retry-After``; the wait is at most
    ``MAX_WAIT``. ``Retry-After`` is seconds or an HTTP date (RFC 9110 10.2.3), counted
    from ``now`` (the wall clock; a date past is no wait); a value that is neither, or
    negative, counts as a second. Before, a 429 failed the tool call at once, whatever the
    server said to wait, and then an HTTP date was a second however far it named."""
    status = response.status_code
    header = response.headers.get("retry-after")
    if retried >= RETRIES or not (status == 429 or (status == 503 and header is not None)):
        return None
    seconds = 1.0 if header is None else _seconds_of(header.strip(), now)
    return min(MAX_WAIT, seconds) if seconds >= 0 else 1.0  # NaN: compared False, so 1 s


def _seconds_of(header: str, now: float) -> float:
    """A ``Retry-After`` value in seconds from ``now``; -1 for one that is no value."""
    try:
        return float(header)
    except ValueError:
        pass
    from email.utils import parsedate_to_datetime  # only for a server that sends a date

    try:
        return max(0.0, parsedate_to_datetime(header).timestamp() - now)
    except (TypeError, ValueError, OverflowError):
        return -1.0


@attrs.frozen
class ExecAnswer:
    """``POST /process/execute`` answered: exit code and combined output."""

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    exit_code: int
    result: str


def exec_answer(response: httpx.Response, sandbox_id: str) -> ExecAnswer:
    """A command execution's answer, checked; ``ExecutorError`` for another shape, or for a
    program the daemon could not start (a negative exit code)."""
    data = json_object(response, f"command execution in sandbox {sandbox_id}")
    # Daemons before November 2025 (daytonaio/daytona #2406) name the exit code "code".
    code, result = data.get("exitCode", data.get("code")), data.get("result") or ""
    if type(code) is not int or not isinstance(result, str):  # True is no exit code
        raise ExecutorError(
            f"Daytona answered command execution in sandbox {sandbox_id} with exitCode "
            f"{str(code)[:40]!r} and a result of type {type(result).__name__}, not the "
            "daemon's {exitCode: integer, result: string}"
        )
    if code < 0:  # Go's error text (a few words), or whatever the daemon said
        raise ExecutorError(f"the sandbox could not start the command: {quoted(result)}")
    return ExecAnswer(exit_code=code, result=result)


async def patiently(send: Callable[[], Awaitable[httpx.Response]], clock: Clock) -> httpx.Response:
    """``send()``'s answer, sent again after ``come_back_after``'s wait (on ``clock``) while
    the server turns it away; the last answer when it still does."""
    for retried in range(RETRIES + 1):
        response = await send()
        if (wait := come_back_after(response, retried, clock.now())) is None:
            break
        await clock.sleep(wait)
    return response


async def fetched(
    client: httpx.AsyncClient,
    request: httpx.Request,
    what: str,
    *,
    deadline: float,
    limit: int = ANSWER_BYTES,
) -> httpx.Response:
    """``request`` sent and its answer read whole, decoded, within ``limit`` bytes (an error
    answer: its first ``ERROR_BYTES``) and ``deadline`` seconds (``ExecutorError`` naming
    ``what`` otherwise); httpx's transport errors pass through (``map_httpx_errors`` maps
    them). The answer returned holds the decoded body, without its ``Content-Encoding``."""
    timer = asyncio.timeout(deadline)
    try:
        async with timer:
            response = await client.send(request, stream=True)
            try:
                if response.is_error:  # its status says what failed; its message is short
                    content = await _head(response, what)
                else:
                    content = await _body(response, what, limit)
            finally:
                await response.aclose()
    except TimeoutError:
        if not timer.expired():
            raise
        raise ExecutorError(
            f"Daytona's answer to {what} did not arrive whole within {deadline:g} s"
        ) from None
    headers = [(k, v) for k, v in response.headers.raw if k.lower() != b"content-encoding"]
    return httpx.Response(response.status_code, headers=headers, content=content, request=request)


async def _body(response: httpx.Response, what: str, limit: int) -> bytes:
    content = await read_at_most(_pieces(response, what), limit)
    if content is None:
        raise ExecutorError(f"Daytona answered {what} with more than {limit} bytes")
    return content


async def _pieces(response: httpx.Response, what: str) -> AsyncIterator[bytes]:
    """The decoded body a bounded piece at a time; ``ExecutorError`` for an encoding not
    read so, or a body its encoding does not decode."""
    encoding = response.headers.get("content-encoding", "")
    # a body already in memory (a response built from bytes, as a test's transport makes
    # it) was decoded by httpx then; only its raw stream is gone
    raw = response.aiter_bytes() if response.is_stream_consumed else response.aiter_raw()
    try:
        async for piece in decoded(raw, "" if response.is_stream_consumed else encoding):
            yield piece
    except (RefusedEncoding, zlib.error) as exc:
        raise ExecutorError(
            f"Daytona answered {what} in Content-Encoding {encoding[:40]!r}, which could not "
            f"be read: {exc}"
        ) from None


async def _head(response: httpx.Response, what: str) -> bytes:
    """The first ``ERROR_BYTES`` of an error answer's decoded body, or what came before its
    encoding failed; the rest is never read (closing the stream ends the connection)."""
    return await read_head(_pieces(response, what), ERROR_BYTES, unread=ExecutorError)


def json_object(response: httpx.Response, what: str) -> dict[str, Any]:
    """The JSON object of an answer; ``ExecutorError`` for anything else, JSON nested past
    the parser included (its RecursionError was a crash of the run)."""
    try:
        data = json.loads(response.content)
    except (ValueError, RecursionError):
        raise ExecutorError(f"Daytona answered {what} with something else than JSON") from None
    if not isinstance(data, dict):
        raise ExecutorError(f"Daytona answered {what} with something else than an object")
    return data
