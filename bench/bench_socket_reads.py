"""A streamed response's socket reads, three ways: what one read costs the event loop.

A loopback server in this process writes ``--reads`` small chunks (a 40-byte SSE delta each,
one per turn of the loop, as a model server streams); the client reads until the end, each
read waiting for the next chunk, through:

- protocol   ``rho_adapters.model.network.AsyncioStream`` (an ``asyncio.Protocol`` keeping
             what the loop received; the model clients' sockets)
- streams    asyncio's ``StreamReader.read`` under ``asyncio.timeout`` (the other asyncio-native
             read path)
- anyio      httpcore's ``AnyIOBackend`` stream (what httpcore's pool picks by itself)

Reported: CPU time per read (``time.process_time``, both ends in this process, so the
server's write is in every figure alike), medians and spread of ``--runs`` sets, the three
ways alternating set by set; the load average before and after.

Usage: python bench/bench_socket_reads.py [--runs 7] [--reads 2000]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import time
from collections.abc import Sequence

import httpcore

from rho_adapters.model.network import AsyncioBackend

CHUNK = b'data: {"choices":[{"delta":"word "}]}\n\n'


async def _reads(way: str, port: int) -> tuple[float, int]:
    """(CPU µs per read, reads) of one connection read to its end ``way``."""
    count = 0
    if way == "streams":
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(b"x")
        started = time.process_time()
        while True:
            async with asyncio.timeout(30):
                if not await reader.read(65536):
                    break
            count += 1
        ended = time.process_time()
        writer.close()
    else:
        backend = AsyncioBackend() if way == "protocol" else httpcore.AnyIOBackend()
        stream = await backend.connect_tcp("127.0.0.1", port)
        await stream.write(b"x")
        started = time.process_time()
        while await stream.read(65536, timeout=30):
            count += 1
        ended = time.process_time()
        await stream.aclose()
    return (ended - started) / max(count, 1) * 1e6, count


async def _measure(runs: int, reads: int) -> dict[str, list[float]]:
    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readexactly(1)
        for _ in range(reads):
            writer.write(CHUNK)
            await writer.drain()
            await asyncio.sleep(0)  # the next chunk on the next turn of the loop
        writer.close()

    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    per_read: dict[str, list[float]] = {"protocol": [], "streams": [], "anyio": []}
    for _ in range(runs):
        for way, samples in per_read.items():
            samples.append((await _reads(way, port))[0])
    server.close()
    await server.wait_closed()
    return per_read


def main(argv: Sequence[str] | None = None) -> None:
    """Measure and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--reads", type=int, default=2000)
    args = parser.parse_args(argv)
    load_before = os.getloadavg()[0]
    per_read = asyncio.run(_measure(args.runs, args.reads))
    print(f"load average {load_before:.1f} -> {os.getloadavg()[0]:.1f}; {args.runs} sets")
    print(f"{'read path':10} {'CPU per read':>14}  (min-max)")
    for way, samples in per_read.items():
        median = statistics.median(samples)
        print(f"{way:10} {median:11.2f} µs  ({min(samples):.2f}-{max(samples):.2f})")


if __name__ == "__main__":
    main()
