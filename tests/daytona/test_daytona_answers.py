"""What ``SandboxAPI`` reads of a Daytona answer: never more than a bound (``answers.py``).

The toolbox daemon runs in the sandbox, beside the model's commands. Before, every answer was
read whole with ``client.request``: httpx inflated a gzip body one network chunk at a time
whole (16 KB of gzip became 16 MiB before anything counted it) and read an endless one until
the process died; an answer sent a byte at a time was never silent for the read timeout, so
it held the call for good; JSON nested past the parser raised ``RecursionError`` out of the
executor (a crash of the run, not an ``ExecutorError``); an error page was read whole for
the 300 characters shown of it.
"""

from __future__ import annotations

import asyncio
import gzip
import tracemalloc
from collections.abc import AsyncIterator

import httpx
import pytest

from rho_adapters.daytona.api import Sandbox, SandboxAPI
from rho_adapters.daytona.making import create
from rho_adapters.fakes.daytona import FakeDaytona
from rho_domain.errors import ExecutorError

LIMIT = 1 << 20
CHUNK = 4096


async def _sent(data: bytes) -> AsyncIterator[bytes]:
    """``data`` as a server sends it, a chunk at a time (bytes given whole are read by
    httpx before the client sees the response)."""
    for start in range(0, len(data), CHUNK):
        yield data[start : start + CHUNK]


async def _trickle() -> AsyncIterator[bytes]:
    yield b'{"id": "'
    while True:  # a byte each 50 ms: never silent for the 0.1 s read timeout
        await asyncio.sleep(0.05)
        yield b"x"


class Endless:
    """An error page that stops only after 8 MiB (so the old reader ends too), counting
    what was read of it."""

    def __init__(self) -> None:
        self.sent = 0

    async def __aiter__(self) -> AsyncIterator[bytes]:
        yield b"<html>"
        while self.sent < 8 << 20:
            self.sent += CHUNK
            yield b"x" * CHUNK


async def test_a_daytona_answer_is_bounded_in_bytes_in_time_and_in_nesting() -> None:
    fake = FakeDaytona()
    sandbox = Sandbox(id="sbx-1", toolbox_url=f"{fake.toolbox_url}/sbx-1")
    page = Endless()
    bomb = gzip.compress(b'{"result": "' + b"0" * (16 << 20), compresslevel=1)
    answers = iter([
        httpx.Response(200, headers={"content-encoding": "gzip"}, content=_sent(bomb)),
        httpx.Response(200, content=b"[" * 20_000),
        httpx.Response(200, headers={"content-encoding": "br"}, content=_sent(b"..")),
        httpx.Response(200, content=_trickle()),
        httpx.Response(404, json={"message": "not found"}),  # the cut creation's name looked up
        httpx.Response(502, content=page),
    ])  # fmt: skip

    def answer(request: httpx.Request) -> httpx.Response:
        return next(answers)

    settings = fake.settings(working_dir="/w", request_timeout=0.1)
    api = SandboxAPI(settings, transport=httpx.MockTransport(answer))
    api.answer_bytes = LIMIT
    try:
        tracemalloc.start()
        try:
            with pytest.raises(
                ExecutorError, match=f"command execution in sandbox sbx-1 with more than {LIMIT}"
            ):
                await api.execute(sandbox, "true", timeout=1)
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        with pytest.raises(
            ExecutorError, match="command execution in sandbox sbx-1 with something else than"
        ):
            await api.execute(sandbox, "true", timeout=1)
        with pytest.raises(ExecutorError, match="Content-Encoding 'br'"):
            await api.execute(sandbox, "true", timeout=1)
        async with asyncio.timeout(10):  # the old client: this TimeoutError
            with pytest.raises(ExecutorError, match=r"creation did not arrive whole within 0\.2"):
                await create(api, "rho-agent-test")
        with pytest.raises(ExecutorError, match=r"failed sandbox deletion \(502\): <html>xx"):
            await api.delete("sbx-1")
    finally:
        await api.aclose()
    assert peak < 4 << 20, peak  # httpx's own decoding held the whole 16 MiB at once
    assert page.sent <= 65_536 + CHUNK  # answers.ERROR_BYTES of an error: before, all of it
