"""A Daytona sandbox belongs to its session: labelled with its id, found again on resume."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from rho_adapters.daytona import DaytonaExecutor
from rho_adapters.fakes import FakeClock
from rho_adapters.fakes.daytona import FakeDaytona


def _executor(fake: FakeDaytona, ws: Path, session: str, *, resumed: bool) -> DaytonaExecutor:
    settings = fake.settings(working_dir=str(ws), session_id=session, reattach=resumed)
    return DaytonaExecutor(settings, transport=fake.transport, clock=FakeClock())


async def test_a_resumed_session_finds_its_sandbox_in_each_state(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    fake = FakeDaytona()
    first = _executor(fake, tmp_path, "s1", resumed=False)
    await first.stat(".")  # the process then dies: no aclose
    assert fake.created[0]["labels"] == {"created-by": "rho-agent", "rho-agent-session": "s1"}
    for state in ("started", "stopped", "archived"):
        if state != "started":
            fake.stop("sbx-1", state)
        again = _executor(fake, tmp_path, "s1", resumed=True)
        await again.stat(".")
        assert (again.sandbox_id, again.recreated, len(fake.created)) == ("sbx-1", None, 1)
        assert fake.starts == (["sbx-1"] if state == "stopped" else fake.starts)
    assert fake.starts == ["sbx-1", "sbx-1"]  # started as it was; stopped, archived: started
    other = _executor(fake, tmp_path, "s2", resumed=True)  # another session's is never taken
    await other.stat(".")
    assert other.sandbox_id == "sbx-2"
    fake.stop("sbx-2", "error")  # Daytona refuses to start it: a new one, said
    failed = _executor(fake, tmp_path, "s2", resumed=True)
    await failed.stat(".")
    assert failed.sandbox_id == "sbx-3"
    assert failed.recreated is not None
    await again.aclose()  # sbx-1 deleted, as a session's close does
    with caplog.at_level(logging.INFO, logger="rho_adapters.daytona.executor"):
        gone = _executor(fake, tmp_path, "s1", resumed=True)
        await gone.stat(".")
    assert gone.sandbox_id == "sbx-4"
    assert gone.recreated is not None
    assert "sandbox is gone" in gone.recreated
    assert "new, empty one (sbx-4)" in gone.recreated
    said = [r.getMessage() for r in caplog.records]
    assert any(m.startswith("session s1: this session's Daytona sandbox is gone") for m in said)
    assert "session s1: created Daytona sandbox sbx-4" in said
    for executor in (first, other, failed, gone):
        await executor.aclose()
