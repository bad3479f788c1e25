"""What a run listens to while it runs (``interrupts.interruptible``), in this process: the
signals a process ignores stay ignored, and each handler from before is put back after."""

from __future__ import annotations

import asyncio
import os
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest

from rho_adapters.fakes.scripted_model import ScriptedModel
from rho_entry import Agent, AgentConfig, Session
from rho_entry.cli.interrupts import interruptible

_ENDING = (signal.SIGTERM, signal.SIGHUP)
_ALL = (signal.SIGINT, *_ENDING)


@pytest.fixture
def dispositions() -> Iterator[None]:
    saved = {signum: signal.getsignal(signum) for signum in _ALL}
    yield
    for signum, before in saved.items():
        signal.signal(signum, before)


def _never_called(signum: int, frame: object) -> None:
    raise AssertionError(f"signal {signum} reached the handler from before the run")


def test_nohup_is_kept_and_the_handlers_from_before_come_back(
    tmp_path: Path, dispositions: None
) -> None:
    # nohup's SIG_IGN was replaced by the run's handler (a hang-up cancelled a run started
    # with nohup), and the handlers from before were not put back: asyncio leaves SIG_DFL,
    # so SIGTERM at a REPL's prompt after a turn killed it and its history was lost.
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, _never_called)
    # as on a terminal: asyncio.run then sets a Ctrl+C handler of its own for its main task
    signal.signal(signal.SIGINT, signal.default_int_handler)
    session = Session(
        Agent(AgentConfig(model="m", working_dir=str(tmp_path))), model=ScriptedModel([])
    )
    said: list[str] = []

    async def run() -> signal.Signals | None:
        heard_one = asyncio.Event()

        def notice(text: str) -> None:
            said.append(text)
            heard_one.set()

        with interruptible(session, notice) as heard:
            assert signal.getsignal(signal.SIGHUP) is signal.SIG_IGN
            os.kill(os.getpid(), signal.SIGHUP)  # ignored: no notice, no cancel
            os.kill(os.getpid(), signal.SIGTERM)
            await asyncio.wait_for(heard_one.wait(), 30)
        # Ctrl+C after the run is KeyboardInterrupt (cli/app.py: 'cancelled', 130), as asyncio
        # leaves it; asyncio.run's own handler, put back, cancelled the rest of the one-shot
        # and the process died by SIGINT (status -2) after a second Ctrl+C
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
        return heard.ending

    assert asyncio.run(run()) is signal.SIGTERM
    assert said == ["cancelling… (another SIGTERM to stop at once)"]
    assert signal.getsignal(signal.SIGTERM) is _never_called
    assert signal.getsignal(signal.SIGHUP) is signal.SIG_IGN
