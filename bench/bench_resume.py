"""Benchmarks for sessions on disk.

1. Resume: open a session whose trace holds N events and rebuild its State
   (``FileSessionStore.open`` + ``State.from_events``), for N = 10k, 50k, 100k. Target: 100k
   events under 1 second, growing linearly (constant time per event).
2. Write cost: the same scripted agent run (tool rounds with a model that answers instantly,
   or after a simulated latency) with no store, the in-memory store and the file store.
   Target: the file store slows a run by no more than 10%.

Usage: python bench/bench_resume.py [--quick] [--sizes 10000,50000,100000] [--repeat 5]
    [--appends 20000] [--rounds 300] [--slow-rounds 60]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from rho_adapters.codec import encode_event_line
from rho_adapters.fakes import (
    FakeClock,
    FunctionModel,
    MemoryExecutor,
    MemorySessionStore,
    Turn,
    call,
    text,
    tools,
)
from rho_adapters.store import FileSessionStore
from rho_domain import events as ev
from rho_domain.agent import Agent
from rho_domain.config import AgentConfig
from rho_domain.loop.session import Session
from rho_domain.messages import AssistantMessage, ToolCall, ToolResultMessage, Usage, UserMessage
from rho_domain.model import ModelRequest
from rho_domain.permissions import builtin_profile
from rho_domain.ports.store import SessionRecord
from rho_domain.run_status import RunStatus
from rho_domain.state import State
from rho_domain.tools.base import READ_ONLY, ToolContext, ToolHandler, ToolOutput, ToolPolicy
from rho_domain.tools.registry import ToolRegistry

RESULT = "drwxr-xr-x 2 root root 4096 Jan  1 00:00 log\n" * 6  # ~300 characters


def round_events(i: int) -> list[ev.Event]:
    """The 7 events of one tool round, as the session writes them."""
    c = ToolCall(f"call_{i}", "bash", '{"command": "ls -la /var/log"}')
    u = Usage(input_tokens=1200 + i, output_tokens=40, cached_tokens=1000)
    return [
        ev.LLMStarted(at=float(i), model="gpt-5-mini", call_index=i, context_tokens=1200 + i),
        ev.UsageRecorded(at=float(i), usage=u, prompt_tokens=1200 + i),
        ev.LLMEnded(
            at=float(i),
            model="gpt-5-mini",
            call_index=i,
            usage=u,
            finish_reason="tool_calls",
            duration=0.8,
        ),
        ev.MessageAdded(
            at=float(i), message=AssistantMessage(text="Let me look.", tool_calls=(c,))
        ),
        ev.ToolStarted(at=float(i), call=c),
        ev.ToolEnded(
            at=float(i),
            call_id=c.id,
            tool_name="bash",
            content=RESULT,
            is_error=False,
            duration=0.01,
            metadata={"exit_code": 0},
        ),
        ev.MessageAdded(
            at=float(i), message=ToolResultMessage(call_id=c.id, tool_name="bash", content=RESULT)
        ),
    ]


def write_trace(root: Path, session_id: str, n_events: int) -> None:
    """A session with ``n_events`` events: runs of 20 tool rounds each."""

    async def create() -> None:
        store = FileSessionStore(root)
        await store.create(SessionRecord(id=session_id, created_at=0.0, config=AgentConfig()))
        await store.release(session_id)

    asyncio.run(create())
    lines: list[bytes] = []
    i = 0
    while len(lines) < n_events:
        lines.append(encode_event_line(ev.RunStarted(at=float(i), run_id=f"r{i}", prompt="go")))
        lines.append(encode_event_line(ev.MessageAdded(at=float(i), message=UserMessage("go"))))
        for _ in range(20):
            lines.extend(encode_event_line(e) for e in round_events(i))
            i += 1
        lines.append(
            encode_event_line(ev.RunEnded(at=float(i), run_id=f"r{i}", status=RunStatus.COMPLETED))
        )
    (root / session_id / "trace.jsonl").write_bytes(b"".join(lines[:n_events]))


def time_resume(root: Path, session_id: str, repeat: int) -> tuple[float, int, int]:
    async def once() -> tuple[float, int, int]:
        store = FileSessionStore(root)
        start = time.perf_counter()
        _, events = await store.open(session_id)
        state = State.from_events(events)
        elapsed = time.perf_counter() - start
        await store.release(session_id)
        return elapsed, len(events), len(state.messages)

    runs = [asyncio.run(once()) for _ in range(repeat)]
    return min(runs)


def time_appends(kind: str, root: Path, n: int) -> float:
    """Microseconds per ``store.append`` of one event (as the session calls it)."""

    async def go() -> float:
        store = MemorySessionStore() if kind == "memory" else FileSessionStore(root)
        session_id = f"append-{kind}"
        await store.create(SessionRecord(id=session_id, created_at=0.0, config=AgentConfig()))
        batch = [e for i in range(n // 7 + 1) for e in round_events(i)][:n]
        start = time.perf_counter()
        for event in batch:
            await store.append(session_id, [event])
        elapsed = time.perf_counter() - start
        await store.release(session_id)
        return elapsed / n * 1e6

    return asyncio.run(go())


class LsTool(ToolHandler):
    name = "bash"
    description = "ls"
    parameters = {"type": "object", "properties": {"command": {"type": "string"}}}

    def policy_for(self, arguments: object) -> ToolPolicy:
        return READ_ONLY

    async def handle(self, arguments: object, ctx: ToolContext) -> ToolOutput:
        return ToolOutput(content=RESULT)


def time_run(store_kind: str, rounds: int, latency: float, root: Path) -> tuple[float, int]:
    async def go() -> tuple[float, int]:
        count = 0

        async def turn(request: ModelRequest) -> Turn:
            nonlocal count
            count += 1
            if latency:
                await asyncio.sleep(latency)
            if count > rounds:
                return text("done", input_tokens=100, output_tokens=5)
            return tools(
                call("bash", {"command": f"ls -la /var/log/r{count}"}),
                input_tokens=1200,
                output_tokens=40,
            )

        store = {"none": None, "memory": MemorySessionStore(), "file": FileSessionStore(root)}[
            store_kind
        ]
        config = AgentConfig(profile="eval", auto_compact=False, max_turns=rounds + 1)
        agent = Agent(
            config=config,
            profile=builtin_profile("eval"),
            registry=ToolRegistry([LsTool()]),
            system_prompt="bench",
        )
        events = 0

        def counted(event: ev.Event) -> None:
            nonlocal events
            events += ev.is_persistent(event)

        session = Session(
            agent,
            model=FunctionModel(turn),
            executor=MemoryExecutor(),
            clock=FakeClock(),
            store=store,
            on_event=counted,
        )
        start = time.perf_counter()
        result = await session.run("list the logs")
        elapsed = time.perf_counter() - start
        await session.close()
        assert result.ok, result
        return elapsed, events

    return asyncio.run(go())


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="--sizes 10000,50000 --rounds 100")
    parser.add_argument("--sizes", help="events of the resumed sessions (10000,50000,100000)")
    parser.add_argument("--repeat", type=int, default=5, help="best or median of how many")
    parser.add_argument("--appends", type=int, default=20_000, help="events appended one by one")
    parser.add_argument("--rounds", type=int, help="tool rounds of the instant run (300)")
    parser.add_argument("--slow-rounds", type=int, default=60, help="rounds of the 20 ms run")
    args = parser.parse_args(argv)
    default_sizes = "10000,50000" if args.quick else "10000,50000,100000"
    sizes = [int(n) for n in (args.sizes or default_sizes).split(",")]
    rounds = args.rounds or (100 if args.quick else 300)
    repeat = args.repeat
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "sessions"
        print(f"## resume (open + State.from_events), best of {repeat}")
        print(f"{'events':>8} {'seconds':>8} {'us/event':>9} {'messages':>9}")
        for n in sizes:
            write_trace(root, f"s{n}", n)
            seconds, count, messages = time_resume(root, f"s{n}", repeat)
            print(f"{count:>8} {seconds:>8.3f} {seconds / count * 1e6:>9.2f} {messages:>9}")
        print("\n## per-event append cost (store.append of one event, tool-round mix)")
        for kind in ("memory", "file"):
            print(f"{kind:>8}: {time_appends(kind, root, args.appends):6.1f} us/event")
        print(f"\n## agent run, median of {repeat} (seconds)")
        print(
            f"{'model latency':>14} {'rounds':>7} {'no store':>9} {'memory':>9} {'file':>9} "
            f"{'file vs memory':>15}"
        )
        for latency, n_rounds in ((0.0, rounds), (0.02, args.slow_rounds)):
            medians = {}
            for kind in ("none", "memory", "file"):
                times = [time_run(kind, n_rounds, latency, root)[0] for _ in range(repeat)]
                medians[kind] = statistics.median(times)
            _, events = time_run("memory", n_rounds, latency, root)
            overhead = (medians["file"] / medians["memory"] - 1) * 100
            print(
                f"{latency * 1000:>12.0f}ms {n_rounds:>7} {medians['none']:>9.3f} "
                f"{medians['memory']:>9.3f} {medians['file']:>9.3f} {overhead:>+14.1f}%"
                f"   ({events} events)"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
