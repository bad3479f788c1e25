"""Shared set-up for the Daytona tests: a FakeDaytona and an executor on a temp workspace."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import attrs

from rho_adapters.daytona import DaytonaExecutor
from rho_adapters.fakes import FakeClock
from rho_adapters.fakes.daytona import FakeDaytona
from rho_domain.permissions import FileWriteMode


@attrs.define
class Rig:
    fake: FakeDaytona
    executor: DaytonaExecutor
    ws: Path

    def toolbox_calls(self, suffix: str) -> int:
        return sum(1 for _, path in self.fake.requests if path.endswith(suffix))


def make_rig(
    tmp_path: Path,
    *,
    file_write: FileWriteMode = FileWriteMode.FULL,
    allow_shell: bool = False,
    executor_class: type[DaytonaExecutor] = DaytonaExecutor,
    **settings: Any,
) -> Rig:
    ws = tmp_path / "ws"
    ws.mkdir(exist_ok=True)
    (ws / "src").mkdir(exist_ok=True)
    (ws / "src" / "a.txt").write_bytes(b"hello\nworld\n")
    fake = FakeDaytona(polls_until_started=2)
    executor = executor_class(
        fake.settings(working_dir=str(ws), **settings),
        file_write=file_write,
        allow_shell=allow_shell,
        transport=fake.transport,
        clock=FakeClock(),  # the sandbox "starts" on fake time: no real polling waits
    )
    return Rig(fake=fake, executor=executor, ws=ws)


async def closing(rig: Rig) -> AsyncIterator[Rig]:
    try:
        yield rig
    finally:
        await rig.executor.aclose()
