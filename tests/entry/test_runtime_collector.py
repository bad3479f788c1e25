"""The collector's full passes held off while a service's runtime runs (``collector.py``)."""

from __future__ import annotations

import gc
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from rho_entry import AgentConfig, close_runtime, create_runtime, start_runtime
from rho_entry.runtime import collector

COLLECTOR = Path(collector.__file__)


@pytest.fixture(autouse=True)
def thresholds() -> Iterator[tuple[int, int, int]]:
    """The thresholds the test found, put back after it whatever it did; none held before."""
    found = gc.get_threshold()
    assert collector.holders() == 0
    assert 0 < found[2] < collector.HELD_THRESHOLD, found
    try:
        yield found
    finally:
        gc.set_threshold(*found)


async def test_a_service_runtime_holds_full_passes_off_until_it_closes(
    tmp_path: Path, thresholds: tuple[int, int, int]
) -> None:
    """``start_runtime(..., freeze_start_up=True)`` raises the third threshold (a full pass
    after 100 middle passes, not 10) until ``close_runtime``, which puts back what it found;
    a runtime started plainly leaves the process's collector alone."""
    plain = await start_runtime(create_runtime(AgentConfig(working_dir=str(tmp_path))))
    assert gc.get_threshold() == thresholds
    await close_runtime(plain)
    service = await start_runtime(
        create_runtime(AgentConfig(working_dir=str(tmp_path))), freeze_start_up=True
    )
    try:
        assert gc.get_threshold() == (*thresholds[:2], collector.HELD_THRESHOLD)
        assert collector.holders() == 1
    finally:
        await close_runtime(service)
    assert gc.get_threshold() == thresholds
    assert collector.holders() == 0


async def test_the_last_runtime_to_close_puts_the_thresholds_back(
    tmp_path: Path, thresholds: tuple[int, int, int]
) -> None:
    """Two service runtimes share the process's collector: the first to close leaves the
    passes held for the other; a runtime closed by ``async with`` lets go too."""
    config = AgentConfig(working_dir=str(tmp_path))
    first = await start_runtime(create_runtime(config), freeze_start_up=True)
    second = await start_runtime(create_runtime(config), freeze_start_up=True)
    held = (*thresholds[:2], collector.HELD_THRESHOLD)
    async with second:
        await close_runtime(first)
        assert gc.get_threshold() == held
        assert collector.holders() == 1
    assert gc.get_threshold() == thresholds
    assert collector.holders() == 0


async def test_the_start_up_collection_is_no_stall_of_the_runtime(tmp_path: Path) -> None:
    """``freeze_start_up``'s own full collection runs before the runtime's gauge starts: the
    service's start-up, not a stall of its sessions (it was the gauge's first full pass,
    18-163 ms of its longest stall, in ``bench_sessions.py``)."""
    service = await start_runtime(
        create_runtime(AgentConfig(working_dir=str(tmp_path))), freeze_start_up=True
    )
    try:
        assert service.stats().loop_lag.full_collections == 0
    finally:
        await close_runtime(service)


def test_thresholds_the_process_set_meanwhile_are_left_as_they_are(
    thresholds: tuple[int, int, int],
) -> None:
    """The process's own choice wins: thresholds changed while held are not overwritten by
    the last ``let_go``; a third threshold already high (or 0: automatic collection off) is
    not lowered by ``hold``; letting go twice, or a holder that never held, changes nothing."""
    holder = object()
    collector.hold(holder)
    gc.set_threshold(500, 5, 20)  # the host's, while held
    collector.let_go(holder)
    collector.let_go(holder)
    collector.let_go(object())
    assert gc.get_threshold() == (500, 5, 20)
    for third in (0, 1000):
        gc.set_threshold(700, 10, third)
        collector.hold(holder)
        assert gc.get_threshold() == (700, 10, third)
        collector.let_go(holder)
        assert gc.get_threshold() == (700, 10, third)


# In a fresh interpreter (a small heap the test controls): the module loaded by its path,
# 150,000 lists kept alive (what many sessions in flight hold), and the full passes counted.
_COUNT_FULL_PASSES = """
import gc, importlib.util, sys
spec = importlib.util.spec_from_file_location("collector", sys.argv[1])
collector = importlib.util.module_from_spec(spec)
spec.loader.exec_module(collector)
full = []
def counted(phase, info):
    if phase == "start" and info["generation"] == 2:
        full.append(1)
gc.callbacks.append(counted)
gc.collect()
full.clear()
if sys.argv[2] == "held":
    collector.hold(full)
kept = [[i] for i in range(150_000)]
print(len(full))
"""


@pytest.mark.parametrize(("mode", "expected"), [("held", 0), ("plain", None)])
def test_no_full_pass_runs_while_held_as_many_objects_stay_alive(
    mode: str, expected: int | None
) -> None:
    """Held, 150,000 objects that stay alive (over twenty middle passes) bring no full
    pass; the control, with the usual thresholds, brings at least one."""
    done = subprocess.run(
        [sys.executable, "-I", "-S", "-c", _COUNT_FULL_PASSES, str(COLLECTOR), mode],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    passes = int(done.stdout)
    if expected is None:
        assert passes >= 1, done.stdout
    else:
        assert passes == expected, done.stdout
