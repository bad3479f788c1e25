"""``Session.cancel`` from another thread than the run's (a UI, a watchdog, a signal handler
of a program that runs ``run_sync`` in its main thread)."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

from rho_adapters.fakes import MemoryExecutor, ScriptedModel, call, text, tools
from rho_domain.ports.executor import Command, CommandResult
from rho_entry import Agent, AgentConfig, RunStatus, Session


def test_a_cancel_from_another_thread_stops_the_running_tool(tmp_path: Path) -> None:
    # The cancel set the run's asyncio.Event and cancelled its task from the other thread:
    # nothing woke the loop, so the tool ran on (a `sleep 20` to its end, 20 s later; this
    # one until the guard woke the loop), and asyncio's objects were touched off their
    # loop's thread.
    started = threading.Event()

    async def never_ends(command: Command) -> CommandResult:
        started.set()
        await asyncio.Event().wait()
        raise AssertionError("the tool ran on")

    executor = MemoryExecutor(commands={"wait": never_ends}, allow_shell=True)
    model = ScriptedModel([tools(call("bash", {"command": "wait"})), text("never asked")])
    agent = Agent(AgentConfig(model="m", profile="eval", working_dir=str(tmp_path)))
    session = Session(agent, model=model, executor=executor)

    ended = threading.Event()
    woken_by_the_guard: list[bool] = []

    def cancel_once_the_tool_runs(loop: asyncio.AbstractEventLoop) -> None:
        assert started.wait(60)
        session.cancel()
        if not ended.wait(60):  # a hang guard: the loop was never woken, wake it now
            woken_by_the_guard.append(True)
            loop.call_soon_threadsafe(lambda: None)

    async def run() -> RunStatus:
        canceller = threading.Thread(
            target=cancel_once_the_tool_runs, args=(asyncio.get_running_loop(),)
        )
        canceller.start()
        result = await session.run("go", max_turns=3)
        ended.set()
        await session.close()
        await asyncio.to_thread(canceller.join)
        return result.status

    assert asyncio.run(run()) is RunStatus.CANCELLED
    assert woken_by_the_guard == []
