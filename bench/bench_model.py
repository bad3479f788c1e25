"""Model client benchmark: one agent run against the loopback server vs the raw-httpx floor.

One agent run = the real domain Session driving OpenAIChatModel through two streamed calls (a
`list` tool call, then a 50-delta text answer) plus one `list` tool call (MemoryExecutor). The
floor = raw httpx POSTing the same two requests and reading both streams line by line, without
parsing. Both run in this process, against the same LoopbackServer, alternating rounds. Also
measures SSE decode throughput on a 10 MB stream of small chunks.

Usage: python bench/bench_model.py [--runs 200] [--warm-up 10] [--megabytes 10]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import time
from collections.abc import Sequence

import httpx

from rho_adapters.fakes import FakeClock, MemoryExecutor
from rho_adapters.fakes.loopback import LoopbackServer
from rho_adapters.fakes.wire import call, text_reply, tool_reply
from rho_adapters.fakes.wire_render import render_events
from rho_adapters.model import build_model
from rho_adapters.model.chunks import ChunkAssembler
from rho_adapters.model.sse import SSEDecoder
from rho_domain.agent import Agent
from rho_domain.config import AgentConfig
from rho_domain.loop.session import Session
from rho_domain.permissions import builtin_profile
from rho_domain.ports.model import ChatModel
from rho_domain.tools.listing import ListHandler
from rho_domain.tools.registry import ToolRegistry

ANSWER = "word " * 100  # 500 characters in 50 deltas


async def agent_run(model: ChatModel, executor: MemoryExecutor, agent: Agent) -> float:
    started = time.perf_counter()
    session = Session(agent, model=model, executor=executor, clock=FakeClock())
    result = await session.run("What is here?")
    elapsed = time.perf_counter() - started
    assert result.text == ANSWER, result.error
    return elapsed


async def floor_run(client: httpx.AsyncClient, url: str, bodies: list[dict[str, object]]) -> float:
    started = time.perf_counter()
    for body in bodies:
        async with client.stream("POST", url, json=body) as response:
            async for _line in response.aiter_lines():
                pass
    return time.perf_counter() - started


async def bench_run(runs: int, warm_up: int) -> dict[str, float]:
    replies = [tool_reply(call("list", {"path": "."}, "c1")), text_reply(ANSWER, deltas=50)]
    server = LoopbackServer(replies, repeat=True).start()
    try:
        profile = builtin_profile("readonly")
        agent = Agent(
            config=AgentConfig(profile=profile, model="fake-model"),
            profile=profile,
            registry=ToolRegistry([ListHandler()]),
            system_prompt="You are a benchmark agent.",
        )
        executor = MemoryExecutor({f"file{i}.txt": "x" for i in range(20)})
        model = build_model(model="fake-model", base_url=server.base_url, api_key="k")
        # The floor sends requests of the same size as the agent's two calls.
        await agent_run(model, executor, agent)
        bodies = [dict(server.requests[0]), dict(server.requests[1])]
        url = server.base_url + "/chat/completions"
        client = httpx.AsyncClient(headers={"authorization": "Bearer k"})
        agent_times, floor_times = [], []
        for _ in range(warm_up):
            await agent_run(model, executor, agent)
            await floor_run(client, url, bodies)
        for _ in range(runs):
            agent_times.append(await agent_run(model, executor, agent))
            floor_times.append(await floor_run(client, url, bodies))
        await client.aclose()
        await model.aclose()
    finally:
        server.stop()
    agent_ms = statistics.median(agent_times) * 1000
    floor_ms = statistics.median(floor_times) * 1000
    return {"agent_ms": agent_ms, "floor_ms": floor_ms, "ratio": agent_ms / floor_ms}


def bench_sse(megabytes: float) -> dict[str, float]:
    one = b"".join(render_events(text_reply("tok " * 4000, deltas=4000))[1:-3])
    body = one * (int(megabytes * 1024 * 1024) // len(one) + 1)
    pieces = [body[i : i + 1024] for i in range(0, len(body), 1024)]
    started = time.perf_counter()
    decoder, events = SSEDecoder(), 0
    for piece in pieces:
        events += len(decoder.feed(piece))
    events += len(decoder.flush())
    decode_s = time.perf_counter() - started
    started = time.perf_counter()
    decoder, assembler = SSEDecoder(), ChunkAssembler()
    for piece in pieces:
        for sse in decoder.feed(piece):
            assembler.feed(json.loads(sse.data))
    full_s = time.perf_counter() - started
    mb = len(body) / 1e6
    return {
        "mb": mb,
        "events": events,
        "decode_mb_s": mb / decode_s,
        "decode_events_s": events / decode_s,
        "full_mb_s": mb / full_s,
    }


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--warm-up", type=int, default=10, help="runs of each before timing")
    parser.add_argument("--megabytes", type=float, default=10, help="size of the SSE stream")
    args = parser.parse_args(argv)
    run = asyncio.run(bench_run(args.runs, args.warm_up))
    print(f"agent run (2 streamed calls + list): median {run['agent_ms']:.2f} ms")
    print(f"floor (raw httpx, same 2 streams, line by line): median {run['floor_ms']:.2f} ms")
    print(f"ratio: {run['ratio']:.2f}x (goal <= 2x)")
    sse = bench_sse(args.megabytes)
    print(
        f"SSE decode: {sse['mb']:.1f} MB, {sse['events']:.0f} events in 1 KiB network chunks: "
        f"{sse['decode_mb_s']:.0f} MB/s ({sse['decode_events_s'] / 1e6:.2f} M events/s); "
        f"decode + JSON + assembly: {sse['full_mb_s']:.0f} MB/s"
    )


if __name__ == "__main__":
    main()
