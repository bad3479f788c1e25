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


def test_a_failure_while_taking_the_signals_gives_back_what_was_taken(
    tmp_path: Path, dispositions: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a signal that cannot be taken partway (an OSError from siginterrupt) left the run's
    # listener registered and the signals taken so far on its handler: a later ending
    # signal went to a run that had ended
    from rho_entry import stop_signals

    signal.signal(signal.SIGTERM, _never_called)
    signal.signal(signal.SIGHUP, signal.SIG_DFL)  # taken (under nohup it is ignored: left)
    session = Session(
        Agent(AgentConfig(model="m", working_dir=str(tmp_path))), model=ScriptedModel([])
    )
    real = signal.siginterrupt

    def refusing(signum: int, flag: bool) -> None:
        if signum == signal.SIGHUP:
            raise OSError(22, "refused")
        real(signum, flag)

    monkeypatch.setattr(signal, "siginterrupt", refusing)

    async def run() -> None:
        with pytest.raises(OSError, match="refused"), interruptible(session, print):
            pass

    asyncio.run(run())
    assert signal.getsignal(signal.SIGTERM) is _never_called
    # no run listens: main's handler cancels the command (a listener left behind was
    # handed the signal, on a loop that had closed)
    stop_signals.forget()
    try:
        with pytest.raises(KeyboardInterrupt):
            stop_signals.interrupt_at_start(signal.SIGTERM, None)
    finally:
        stop_signals.forget()
