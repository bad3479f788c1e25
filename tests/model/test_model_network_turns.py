"""Answers that arrive on many connections at once are read a turn's share at a time.

A model client's socket read that had to wait (``network.AsyncioStream.read``) takes a share
of a turn of the loop (``fair_turns.take_turn``) before its caller goes on to parse the
answer: the selector reports every connection whose answer came during a busy turn together,
and without it each one's parsing and next step ran in one turn (1,000 sessions: turns of
20-80 ms of work). Real sockets (socket pairs under asyncio's transports); the steps' cost is
a fake clock each reader moves on, so nothing here depends on the machine's speed.
"""

from __future__ import annotations

import asyncio
import socket

from rho_adapters.model.asyncio_stream import AsyncioStream, Receiver
from rho_domain.fair_turns import FairTurns, use_fair_turns

READERS = 12
STEP = 0.001  # what each reader's step "costs", on the fake clock


class _Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


async def test_answers_on_many_connections_at_once_are_read_a_budgets_worth_a_turn() -> None:
    loop = asyncio.get_running_loop()
    clock = _Clock()
    turns = FairTurns(loop, budget=0.0035, clock=clock)  # 4 steps of 1 ms a turn
    use_fair_turns(turns)
    pairs = [socket.socketpair() for _ in range(READERS)]
    streams = []
    for ours, _ in pairs:
        transport, receiver = await loop.create_connection(Receiver, sock=ours)
        streams.append(AsyncioStream(transport, receiver))
    turn = [0]

    def tick() -> None:
        turn[0] += 1
        ticker[0] = loop.call_soon(tick)

    ticker = [loop.call_soon(tick)]
    read_in: list[int] = []

    async def read(stream: AsyncioStream) -> bytes:
        data = await stream.read(1024)
        read_in.append(turn[0])
        clock.now += STEP  # the answer's parsing and the session's next step
        return data

    try:
        readers = [asyncio.ensure_future(read(s)) for s in streams]
        await asyncio.sleep(0)  # every reader waits on its socket
        for _, theirs in pairs:  # every answer arrives before the loop looks again
            theirs.sendall(b"data: {}\n\n")
        assert await asyncio.gather(*readers) == [b"data: {}\n\n"] * READERS
    finally:
        ticker[0].cancel()
        for stream in streams:
            await stream.aclose()
        for _, theirs in pairs:
            theirs.close()
    per_turn = [read_in.count(t) for t in sorted(set(read_in))]
    # without the share, the twelve were read and parsed in one turn
    assert max(per_turn) <= 4, per_turn
    assert turns.parked >= READERS - 4
