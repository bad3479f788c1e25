"""The process's client pool over real sockets: connection reuse across sessions, event loops,
idle eviction, the in-flight bound (FIFO), and no SSL context for http:// endpoints.

Waiting here is for conditions (a request reaching the server), never for durations.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from _model_support import collect, text_of

from rho_adapters.codec import event_from_dict, event_to_dict
from rho_adapters.fakes import FakeClock, MemoryExecutor
from rho_adapters.fakes.loopback import LoopbackServer
from rho_adapters.fakes.wire import Exchange, Reply, call, stall, text_reply, tool_reply
from rho_adapters.model import ClientPool, ModelEndpoint, OpenAIChatModel
from rho_adapters.store import FileSessionStore
from rho_adapters.store.trace import read_trace
from rho_domain import events as ev
from rho_domain.messages import Usage, UserMessage
from rho_domain.model import ModelRequest, StreamFinished
from rho_entry import Agent, AgentConfig, Session


def next_reply(exchange: Exchange) -> Reply | None:
    """A ``list`` call first, then an answer once the tool result is in the conversation."""
    messages = exchange.body.get("messages") or []
    if not exchange.is_chat:
        return None
    if messages and messages[-1].get("role") == "tool":
        return text_reply("Two files.")
    return tool_reply(call("list", {"path": "."}, "c1"))


@pytest.fixture
def served() -> Iterator[LoopbackServer]:
    with LoopbackServer([], rules=[next_reply]) as server:
        yield server


def _request(text: str) -> ModelRequest:
    return ModelRequest(model="m", system="s", messages=(UserMessage(text),))


async def until(condition: Callable[[], bool], what: str) -> None:
    """Let the loop run until ``condition`` holds (bounded by a number of turns, not time)."""
    for _ in range(2000):
        if condition():
            return
        await asyncio.sleep(0.005)
    raise AssertionError(f"never happened: {what}")


async def test_a_new_session_per_request_reuses_the_connection(
    served: LoopbackServer, tmp_path: Path
) -> None:
    # What a service does: a fresh Session (and default model) for every request.
    agent = Agent(AgentConfig(model="m", base_url=served.base_url, working_dir=str(tmp_path)))
    for _ in range(3):
        async with Session(agent, executor=MemoryExecutor({"a.txt": "x"})) as session:
            assert (await session.run("what is here?")).text == "Two files."
    assert len(served.requests) == 6
    assert served.connections == 1  # the client outlived each session, and so did its socket
    # asked once, not once a session; or not at all, when an earlier test's server on this
    # port (the kernel reuses them) answered within REMEMBER_SECONDS: the pool keeps a URL's
    # facts, and in a full run a worker opens thousands of loopback servers
    assert served.other_requests.count("GET /v1/models") <= 1


def test_a_model_moves_to_a_new_event_loop_and_each_loop_closes_its_clients(
    served: LoopbackServer,
) -> None:
    served.rules = [lambda exchange: text_reply("hi") if exchange.is_chat else None]
    pool = ClientPool()
    model = OpenAIChatModel(
        model="m", endpoint=ModelEndpoint(base_url=served.base_url), http=pool, clock=FakeClock()
    )
    for _ in range(2):  # asyncio.run per request: a new loop each time
        assert text_of(asyncio.run(collect(model, _request("x")))) == "hi"
        # the loop's shutdown closed its client: nothing stays open for a dead loop
        assert pool.stats() == ()
    assert served.connections == 2
    asyncio.run(model.aclose())


async def test_an_unleased_client_stays_open_until_idle_then_closes(
    served: LoopbackServer,
) -> None:
    served.rules = [lambda exchange: text_reply("hi") if exchange.is_chat else None]
    kept, evicting = ClientPool(), ClientPool(idle_seconds=0)
    for pool in (kept, evicting):
        model = OpenAIChatModel(
            model="m",
            endpoint=ModelEndpoint(base_url=served.base_url),
            http=pool,
            clock=FakeClock(),
        )
        await collect(model, _request("x"))
        await model.aclose()
    assert [s.leases for s in kept.stats()] == [0]  # still warm for the next session
    await until(lambda: evicting.stats() == (), "the idle client is closed")
    await kept.aclose()
    assert kept.stats() == ()


async def test_a_model_whose_client_the_pool_closed_gets_a_new_one(
    served: LoopbackServer,
) -> None:
    served.rules = [lambda exchange: text_reply("hi") if exchange.is_chat else None]
    pool = ClientPool()
    model = OpenAIChatModel(
        model="m", endpoint=ModelEndpoint(base_url=served.base_url), http=pool, clock=FakeClock()
    )
    await collect(model, _request("x"))
    await pool.aclose()  # e.g. a service's shutdown hook, while the model is still held
    assert text_of(await collect(model, _request("y"))) == "hi"
    assert [s.leases for s in pool.stats()] == [1]
    await model.aclose()


async def test_requests_beyond_the_bound_wait_and_are_served_first_come_first_served(
    served: LoopbackServer,
) -> None:
    # Every answer stalls after its first chunk: each request holds its slot until cancelled.
    served.rules = [lambda exchange: text_reply("a b c", faults=(stall(after=1),))]
    pool = ClientPool(max_in_flight=2)
    models = [
        OpenAIChatModel(
            model="m",
            endpoint=ModelEndpoint(base_url=served.base_url),
            http=pool,
            clock=FakeClock(),
        )
        for _ in range(4)
    ]
    tasks: list[asyncio.Task[object]] = []

    def gate() -> tuple[int, int]:
        (stats,) = pool.stats()
        return stats.gate.in_flight, stats.gate.queued

    def has_sent(count: int) -> Callable[[], bool]:
        return lambda: len(served.requests) == count

    def has_queued(count: int) -> Callable[[], bool]:
        return lambda: gate() == (2, count)

    for index, model in enumerate(models):
        tasks.append(asyncio.create_task(collect(model, _request(f"request {index}"))))
        if index < 2:
            await until(has_sent(index + 1), f"request {index} sent")
        else:
            await until(has_queued(index - 1), f"request {index} queued")
    assert len(served.requests) == 2  # the third and fourth wait for a slot

    def sent(n: int) -> str:
        return str(served.requests[n]["messages"][-1]["content"])

    tasks[0].cancel()
    await until(lambda: len(served.requests) == 3, "a slot freed")
    tasks[1].cancel()
    await until(lambda: len(served.requests) == 4, "another slot freed")
    assert [sent(2), sent(3)] == ["request 2", "request 3"]  # in the order they queued
    (stats,) = pool.stats()
    assert stats.gate.waited == 2
    assert stats.gate.max_wait_seconds > 0
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    for model in models:
        await model.aclose()


def test_no_ssl_context_is_made_for_http_and_one_for_all_https_endpoints(
    served: LoopbackServer,
) -> None:
    # A fresh interpreter, so that nothing else in the test process made one first.
    code = textwrap.dedent(
        f"""
        import asyncio, ssl
        made = []
        original = ssl.SSLContext.__new__
        def counting(cls, *args, **kwargs):
            made.append(cls)
            return original(cls, *args, **kwargs)
        ssl.SSLContext.__new__ = counting
        from rho_adapters.fakes import FakeClock
        from rho_adapters.model import ModelEndpoint, OpenAIChatModel, SHARED_POOL
        from rho_domain.messages import UserMessage
        from rho_domain.model import ModelRequest

        async def main():
            endpoint = ModelEndpoint(base_url={served.base_url!r})
            model = OpenAIChatModel(model="m", endpoint=endpoint, clock=FakeClock())
            request = ModelRequest(model="m", system="s", messages=(UserMessage("x"),))
            [event async for event in model.stream(request)]
            await model.aclose()
            print("http", len(made))
            for url in ("https://a.example/v1", "https://b.example/v1"):
                SHARED_POOL.acquire(url, {{}})
            print("https", len(made))
            await SHARED_POOL.aclose()

        asyncio.run(main())
        """
    )
    served.rules = [lambda exchange: text_reply("hi") if exchange.is_chat else None]
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["http", "0", "https", "1"]


def test_loops_in_several_threads_each_get_their_own_client(served: LoopbackServer) -> None:
    import threading

    served.rules = [lambda exchange: text_reply("hi") if exchange.is_chat else None]
    pool = ClientPool()
    answers: list[str] = []

    def worker() -> None:
        async def run() -> str:
            model = OpenAIChatModel(
                model="m", endpoint=ModelEndpoint(base_url=served.base_url), http=pool
            )
            try:
                return text_of(await collect(model, _request("x")))
            finally:
                await model.aclose()

        answers.append(asyncio.run(run()))

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert answers == ["hi"] * 4
    assert served.connections == 4  # one client (and connection) per loop
    assert pool.stats() == ()  # each loop closed its own at its end


async def test_a_server_answer_is_remembered_but_an_unreachable_server_is_asked_again() -> None:
    import socket

    import httpx

    from rho_adapters.model.detect import probe

    pool = ClientPool()
    asked: list[int] = []

    async def ask() -> int:
        asked.append(1)
        return len(asked)

    answers = [await pool.remembered("x", ask, keep=lambda n: n > 1) for _ in range(3)]
    assert answers == [1, 2, 2]  # the first answer was not kept, the second was
    pool.forget()  # the server restarted: asked again
    assert await pool.remembered("x", ask) == 3
    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        port = free.getsockname()[1]
    async with httpx.AsyncClient() as client:  # nothing listens on that port now
        facts = await probe(client, f"http://127.0.0.1:{port}/v1")
    assert not facts.answered  # so OpenAIChatModel does not remember it


async def test_an_answer_is_remembered_per_trust_and_route_as_the_clients_are() -> None:
    """Before: two services in one process reaching one URL with different CA trust (or
    proxies) shared the pool's remembered probe: the second took the facts the first had
    asked for over its own route and trust, and never asked over its own."""
    from rho_adapters.model._http import Endpoint
    from rho_adapters.model.tls_context import CaTrust

    pool = ClientPool()
    asked: list[str] = []

    def endpoint(trust: CaTrust, proxy: str | None = None) -> Endpoint:
        return Endpoint({}, http=pool, pool_key="https://a", proxy=proxy, trust=trust)

    mine, theirs = CaTrust(cafile="/etc/mine.pem"), CaTrust(cafile="/etc/theirs.pem")
    for who, made in (
        ("mine", endpoint(mine)),
        ("mine again", endpoint(mine)),
        ("theirs", endpoint(theirs)),
        ("proxied", endpoint(mine, "http://proxy:3128")),
    ):

        async def ask(who: str = who) -> str:
            asked.append(who)
            return who

        await made.remembered("probe https://a", ask, keep=lambda _: True)
    assert asked == ["mine", "theirs", "proxied"]


async def test_a_server_that_answers_404_to_the_probe_still_answered(
    served: LoopbackServer,
) -> None:
    import httpx

    from rho_adapters.model.detect import probe

    async with httpx.AsyncClient() as client:
        facts = await probe(client, served.base_url)
    assert facts.answered
    assert facts.provider is None


async def test_each_call_reports_its_queue_wait_and_the_trace_keeps_it(
    served: LoopbackServer, tmp_path: Path
) -> None:
    # The first request stalls holding the only slot; the second queues behind it.
    served.rules = [
        lambda exchange: (
            text_reply("held", faults=(stall(after=1),))
            if exchange.body["messages"][-1]["content"] == "hold"
            else text_reply("Done.")
        )
    ]
    pool = ClientPool(max_in_flight=1)
    holder = OpenAIChatModel(
        model="m", endpoint=ModelEndpoint(base_url=served.base_url), http=pool, clock=FakeClock()
    )
    queued = OpenAIChatModel(
        model="m", endpoint=ModelEndpoint(base_url=served.base_url), http=pool, clock=FakeClock()
    )
    holding = asyncio.create_task(collect(holder, _request("hold")))
    await until(lambda: len(served.requests) == 1, "the first request holds the slot")
    waiting = asyncio.create_task(collect(queued, _request("next")))
    await until(lambda: pool.stats()[0].gate.queued == 1, "the second request queued")
    holding.cancel()
    events = await waiting
    (finished,) = [e for e in events if isinstance(e, StreamFinished)]
    assert finished.queue_wait is not None
    assert finished.queue_wait > 0
    # A free slot: measured, and zero.
    again = await collect(queued, _request("again"))
    assert [e.queue_wait for e in again if isinstance(e, StreamFinished)] == [0.0]
    await asyncio.gather(holding, return_exceptions=True)
    # Through a session, the wait lands on the trace's llm_end events (and reads back).
    store = FileSessionStore(tmp_path / "sessions")
    async with Session(Agent(AgentConfig(model="m")), model=queued, store=store) as session:
        result = await session.run("hello")
    trace = tmp_path / "sessions" / result.session_id / "trace.jsonl"
    ends = [e for e in read_trace(trace).events if isinstance(e, ev.LLMEnded)]
    assert ends
    assert all(e.queue_wait == 0.0 for e in ends)
    raw = [json.loads(line) for line in trace.read_text().splitlines()]
    assert [line["queue_wait"] for line in raw if line["kind"] == "llm_end"] == [0.0] * len(ends)
    for model in (holder, queued):
        await model.aclose()


def test_an_llm_end_without_queue_wait_still_reads() -> None:
    event = ev.LLMEnded(
        at=1.0, model="m", call_index=1, usage=Usage(), finish_reason="stop", duration=0.5
    )
    data = event_to_dict(event)
    del data["queue_wait"]  # as traces written before the field
    assert event_from_dict(data) == event
    decoded = event_from_dict({**data, "queue_wait": 2.5})
    assert isinstance(decoded, ev.LLMEnded)
    assert decoded.queue_wait == 2.5
