"""MCP over HTTP against answers that decode to far more than they weigh (bomb_http_server.py):
what we hold is bounded by what decodes, not by what httpx or a decoder makes of it first."""

from __future__ import annotations

import json
import subprocess
import sys
import zlib
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from rho_adapters.model.encodings import PIECE, RefusedEncoding, decoded

BOMB_HTTP = str(Path(__file__).with_name("bomb_http_server.py"))

# A child process, so that its peak RSS is this call's: it starts the bomb server in
# $BOMB, calls its tool through an HttpTransport bounded at argv[4] MB an answer, closes it, and
# prints how much it grew and what the call raised.
MEASURED = """
import asyncio, os, resource, socket, subprocess, sys
from rho_adapters.mcp.client import McpClient
from rho_adapters.mcp.http import HttpTransport


async def main():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = subprocess.Popen([sys.executable, sys.argv[1], str(port)], stdout=subprocess.PIPE,
                              env={**os.environ, "BOMB": sys.argv[2], "BOMB_MB": sys.argv[3]})
    assert server.stdout.readline() == b"ready\\n"
    transport = HttpTransport("h", f"http://127.0.0.1:{port}/mcp", headers={},
                              max_body=int(sys.argv[4]) << 20)
    client = McpClient("h", transport, lambda: None)
    try:
        await client.start(timeout=30)
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        try:
            said = repr(await client.call_tool("bomb", {}, timeout=60))[:200]
        except Exception as exc:
            said = f"{type(exc).__name__}: {exc}"[:300]
        await client.aclose()  # its DELETE's answer counts too
        grown = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
        print(grown // 1024, said)
    finally:
        await client.aclose()
        server.kill()
        server.wait()


asyncio.run(main())
"""


def measured(mode: str, megabytes: int, bound: int = 16) -> tuple[int, str]:
    ran = subprocess.run(
        [sys.executable, "-c", MEASURED, BOMB_HTTP, mode, str(megabytes), str(bound)],
        capture_output=True,
        text=True,
        check=True,
    )
    grown, said = ran.stdout.split(" ", 1)
    return int(grown), said


def test_a_body_gzipped_twice_is_decoded_only_as_far_as_its_bound() -> None:
    # 512 MB of zeros gzipped twice is a body of about 1 KB, and httpx inflated each network
    # chunk whole, every layer: one chunk was 512 MB before the 16 MB bound counted a byte.
    # Scaled down: 64 MB against a 1 MB bound (512 against 16 grew 11 MB, 1,020 before; the
    # server's compressing them cost 2 s of CPU more)
    grown, said = measured("gzip-gzip", 64, bound=1)
    assert "McpProtocolError" in said
    assert "sent more than 1048576 bytes in one answer" in said
    assert grown < 32  # MB; the answer's 1 MB and the decoder's pieces (123 before)


def test_the_answer_to_the_sessions_delete_is_never_read() -> None:
    # a session's DELETE at shutdown was httpx's client.delete, which reads and inflates the
    # whole answer: 64 MB of zeros gzipped twice (1 KB sent) grew the agent by 110 MB
    grown, _ = measured("delete-gzip", 64)
    assert grown < 32  # MB


async def _chunks(data: bytes, size: int) -> AsyncIterator[bytes]:
    for start in range(0, len(data), size):
        yield data[start : start + size]


def _compressed(data: bytes, wbits: int) -> bytes:
    compressor = zlib.compressobj(6, zlib.DEFLATED, wbits)
    return compressor.compress(data) + compressor.flush()


@pytest.mark.parametrize(
    ("header", "wbits"),
    [
        ("gzip", (31,)),
        ("deflate", (15,)),
        ("deflate", (-15,)),
        ("deflate, GZIP", (15, 31)),
        ("", ()),
    ],
)
async def test_what_httpx_decodes_decodes_the_same_in_bounded_pieces(
    header: str, wbits: tuple[int, ...]
) -> None:
    text = json.dumps({"result": ["x" * 300_000, list(range(50_000))]}).encode()
    body = text
    for bits in wbits:
        body = _compressed(body, bits)
    pieces = [piece async for piece in decoded(_chunks(body, 1000), header)]
    assert b"".join(pieces) == text
    if header:
        assert max(len(piece) for piece in pieces) <= PIECE


@pytest.mark.parametrize(
    ("header", "said"),
    [("br", "'br', which is not decoded here"), ("gzip," * 5, "5 encodings stacked, more than 4")],
)
async def test_an_encoding_not_decoded_here_is_refused(header: str, said: str) -> None:
    with pytest.raises(RefusedEncoding, match=said):
        [piece async for piece in decoded(_chunks(b"x", 1), header)]


def test_an_event_of_millions_of_lines_is_refused_before_it_is_held() -> None:
    # 200 MB of 'data:ab' lines in one event, under the bound of an answer: the SSE decoder
    # keeps each line as a string until the blank line ends the event, some 50 bytes for 8
    # sent (1,981 MB grown against a 256 MiB bound, and the call waited its timeout)
    grown, said = measured("data-lines", 200, bound=256)
    assert "McpProtocolError" in said
    assert "sent an event of more than 1000000 lines" in said
    assert grown < 150  # MB


def test_a_stream_of_many_short_events_is_read_whole(monkeypatch: pytest.MonkeyPatch) -> None:
    # 300,000 keep-alives of CRLF lines (1.2 million line ends, past the 1,000,000 an event
    # may have) then the answer: each event counts its own lines, so the stream is not
    # refused however long it runs (600,000 showed the same for 0.23 s of CPU more)
    monkeypatch.setenv("KEEPALIVES", "300000")  # the bomb server's environment is ours
    grown, said = measured("many-events", 0)
    assert "many ran" in said
    assert grown < 150
