"""A service process gets SIGTERM mid-run: its handles are cancelled within the deadline, the
tools die, and ``rho-agent --resume`` continues every session it left on disk.

The service and the three resumes are forked from the CLI's zygote (``program_zygote``): each is
still a process of its own that gets the signal, its tools and its exit status; the 1 s of CPU
each start paid importing rho_entry (4 s of the test's 5) was not what the test is about.

SIGHUP (the terminal closing) and every other signal whose default ends a process (SIGUSR1...)
close the runtime too: before, ``shutdown_on_signals`` listened for SIGTERM and SIGINT only
(then SIGHUP too), and the others killed the service with its sessions unended. That check
runs in this process (the handler shares the SIGTERM path above)."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from runtime_support import clean_env, processes_with

from rho_adapters.fakes import ScriptedModel
from rho_adapters.fakes.loopback import LoopbackServer
from rho_adapters.fakes.wire import call, text_reply, tool_reply
from rho_entry import AgentConfig, create_runtime, shutdown_on_signals, start_runtime
from rho_entry.stop_signals import service_exit, service_stops

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "cli"))  # program_zygote
from program_zygote import popen

SERVICE = """\
import asyncio, sys
from rho_entry import (
    AgentConfig, SessionStore, create_runtime, dispatch_prompt, shutdown_on_signals,
    start_runtime,
)

async def main() -> None:
    config = AgentConfig(profile="eval", working_dir=sys.argv[1], model="fake-model")
    runtime = create_runtime(config, store=SessionStore())
    await start_runtime(runtime)
    shutdown_on_signals(runtime, deadline=10)
    handles = [await dispatch_prompt(runtime, f"task {i}", new_session=True) for i in range(3)]
    print(" ".join(h.session_id for h in handles), flush=True)
    await runtime.wait_closed()
    print(" ".join(h.status for h in handles), flush=True)

asyncio.run(main())
"""


def wait_for(condition: object, what: str) -> None:
    for _ in range(1000):
        if condition():  # type: ignore[operator]
            return
        time.sleep(0.01)
    raise AssertionError(f"gave up waiting for {what}")


def test_sigterm_cancels_handles_and_leaves_resumable_sessions(tmp_path: Path) -> None:
    work, home = tmp_path / "work", tmp_path / "home"
    work.mkdir()
    script = tmp_path / "service.py"
    script.write_text(SERVICE)
    markers = [f"300.{os.getpid() % 1000:03d}{i}{time.monotonic_ns() % 1000:03d}" for i in range(3)]
    replies = [tool_reply(call("bash", {"command": f"sleep {m}"})) for m in markers]
    replies += [text_reply("picked up where we stopped")] * 3
    with LoopbackServer(replies) as server:
        env = clean_env(home, OPENAI_BASE_URL=server.base_url, OPENAI_API_KEY="sk-test")
        service = popen(
            "rho",
            [sys.executable, str(script), str(work)],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            assert service.stdout is not None
            ids = service.stdout.readline().split()
            wait_for(lambda: all(processes_with(m) for m in markers), "the three tools")
            service.send_signal(signal.SIGTERM)
            out, err = service.communicate(timeout=60)
        finally:
            if service.poll() is None:
                service.kill()
        assert service.returncode == 0, err
        assert out.split() == ["cancelled"] * 3
        assert all(processes_with(m) == [] for m in markers)
        eval_profile = ("--profile", "eval")
        resuming = [  # all three at once: the suite stays fast
            popen(
                "rho",
                # the service ran them under eval: the resumer names that profile again
                [sys.executable, "-m", "rho_entry", "--resume", session_id, *eval_profile, "go on"],
                cwd=work,
                env=env,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            for session_id in ids
        ]
        for resumed in resuming:
            stdout, stderr = resumed.communicate(timeout=60)
            assert resumed.returncode == 0, stderr
            assert stdout.strip() == "picked up where we stopped"
        # Each resumed request carried the cancelled tool call and its (error) result.
        for request in server.requests[3:]:
            roles = [m["role"] for m in request["messages"]]
            assert roles == ["system", "user", "assistant", "tool", "user"]


@pytest.mark.parametrize("signum", [signal.SIGHUP, signal.SIGUSR1])
async def test_an_ending_signal_closes_a_runtime_as_sigterm_does(
    tmp_path: Path, signum: signal.Signals
) -> None:
    """SIGHUP, and SIGUSR1 for every other signal whose default ends a process (before,
    ``shutdown_on_signals`` did not listen for it: SIGUSR1 killed the service)."""
    runtime = create_runtime(AgentConfig(working_dir=str(tmp_path)), model=ScriptedModel([]))
    await start_runtime(runtime)
    loop = asyncio.get_running_loop()
    # the signal as a terminal gives it: under nohup (SIG_IGN) shutdown_on_signals rightly
    # leaves it ignored, and the runtime waited out the 30 s bound below
    before = signal.signal(signum, signal.SIG_DFL)
    stops = service_stops()
    try:
        shutdown_on_signals(runtime, deadline=5)
        # checked before it is sent: the signal's default would end this test process
        assert signal.getsignal(signum) is not signal.SIG_DFL
        os.kill(os.getpid(), signum)
        await asyncio.wait_for(runtime.wait_closed(), 30)
    finally:
        for number in stops:
            loop.remove_signal_handler(number)
        signal.signal(signum, before)


def test_a_service_stops_on_every_ending_signal_it_is_free_to_take() -> None:
    """SIGINT and SIGTERM always (asyncio.run's own SIGINT handler too: leaving it out made a
    worker's Ctrl+C exit 130 with a KeyboardInterrupt instead of stopping it); SIGUSR1 at its
    default; not SIGHUP ignored (nohup) nor SIGPROF held by a profiler. 0 for the documented
    stops, 128 + the number for another."""
    saved = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGHUP, signal.SIGPROF)}
    saved[signal.SIGUSR1] = signal.getsignal(signal.SIGUSR1)
    try:
        signal.signal(signal.SIGINT, lambda *_: None)  # as asyncio.run sets it
        signal.signal(signal.SIGHUP, signal.SIG_IGN)
        signal.signal(signal.SIGPROF, lambda *_: None)
        signal.signal(signal.SIGUSR1, signal.SIG_DFL)
        stops = service_stops()
    finally:
        for number, handler in saved.items():
            signal.signal(number, handler)
    assert stops[:2] == (signal.SIGINT, signal.SIGTERM)
    assert signal.SIGUSR1 in stops
    assert signal.SIGHUP not in stops
    assert signal.SIGPROF not in stops
    assert [service_exit(s) for s in (None, signal.SIGTERM, signal.SIGINT, signal.SIGHUP)] == [
        0
    ] * 4
    assert (service_exit(signal.SIGQUIT), service_exit(signal.SIGUSR1)) == (131, 138)
