"""One request's cost through the model clients' pool beside httpx's own, alternating.

Two clients on one loopback HTTP/1.1 server (keep-alive, ``ok``), each first holding 20 idle
connections (20 requests at once), then ``--runs`` sequential GETs alternating between the
``LeanConnectionPool`` transport (``rho_adapters.model.tls.PlainTransport``) and
``httpx.AsyncHTTPTransport`` (httpcore's pool): median µs per request each.

Usage: python bench/bench_pool.py [--runs N] [--idle N]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import statistics
import time
from collections.abc import Sequence

import httpx

from rho_adapters.model.tls import PlainTransport


async def _answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    # Cancelled when the benchmark's loop ends with the connections still open: no answer due.
    with contextlib.suppress(Exception, asyncio.CancelledError):
        while await reader.readuntil(b"\r\n\r\n"):
            writer.write(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok")
            await writer.drain()
    writer.close()


async def main_async(runs: int, idle: int) -> None:
    server = await asyncio.start_server(_answer, "127.0.0.1", 0)
    url = f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}/"
    limits = httpx.Limits(max_connections=100, max_keepalive_connections=100, keepalive_expiry=30)
    load = os.getloadavg()[0]
    clients = {
        "lean": httpx.AsyncClient(transport=PlainTransport(limits)),
        "httpcore": httpx.AsyncClient(transport=httpx.AsyncHTTPTransport(limits=limits)),
    }
    times: dict[str, list[float]] = {name: [] for name in clients}
    for client in clients.values():
        await asyncio.gather(*(client.get(url) for _ in range(idle)))
    for _ in range(runs):
        for name, client in clients.items():
            started = time.perf_counter()
            await client.get(url)
            times[name].append((time.perf_counter() - started) * 1e6)
    for client in clients.values():
        await client.aclose()
    server.close()
    await asyncio.sleep(0.1)  # the handlers see the clients' closes
    print(f"load average {load:.1f} -> {os.getloadavg()[0]:.1f}; {runs} alternating requests")
    for name, samples in times.items():
        print(f"{name:>9} pool, {idle} idle connections: {statistics.median(samples):6.0f} µs")


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3000)
    parser.add_argument("--idle", type=int, default=20)
    args = parser.parse_args(argv)
    asyncio.run(main_async(args.runs, args.idle))


if __name__ == "__main__":
    main()
