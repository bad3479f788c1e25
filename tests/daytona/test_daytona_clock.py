"""Sandbox start-up on the Clock port: polls back off, and the creation deadline holds."""

from __future__ import annotations

from pathlib import Path

import pytest

from rho_adapters.daytona import DaytonaExecutor
from rho_adapters.fakes import FakeClock
from rho_adapters.fakes.daytona import FakeDaytona
from rho_domain.errors import ExecutorError


async def test_a_creating_sandbox_is_polled_with_backoff_on_the_clock(tmp_path: Path) -> None:
    fake, clock = FakeDaytona(polls_until_started=4), FakeClock()
    executor = DaytonaExecutor(
        fake.settings(working_dir=str(tmp_path)), transport=fake.transport, clock=clock
    )
    try:
        await executor.stat(".")
    finally:
        await executor.aclose()
    assert clock.sleeps == pytest.approx([0.1, 0.11, 0.121, 0.1331])
    polls = [path for method, path in fake.requests if method == "GET" and path.endswith("sbx-1")]
    assert len(polls) == 4


async def test_a_sandbox_that_never_starts_fails_at_the_deadline(tmp_path: Path) -> None:
    fake, clock = FakeDaytona(polls_until_started=10_000), FakeClock()
    executor = DaytonaExecutor(
        fake.settings(working_dir=str(tmp_path), create_timeout=60.0),
        transport=fake.transport,
        clock=clock,
    )
    try:
        with pytest.raises(ExecutorError, match=r"sbx-1 not started after 60 s \(state creating\)"):
            await executor.stat(".")
    finally:
        await executor.aclose()
    assert 60.0 < sum(clock.sleeps) < 61.1  # stopped at the first poll past the deadline
    assert max(clock.sleeps) == 1.0  # the backoff is capped at one second
