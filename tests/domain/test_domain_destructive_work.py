"""The destructive-command check's work is bounded by the line, not by its square.

A wrapper's every suffix may be a command (``sudo tee``, ``env cp``, ``xargs bash``), and each
suffix read again whole (where it runs, what it writes, what it runs that the line wrote) made
a line of a few thousand program names cost a minute of CPU on the event loop (``eval eval ...
ls ls ls``: 110 million calls). Every suffix read is now counted against ``WORK_BUDGET``, and a
program whose words cannot name a destination or a written file is not read again.

The bound is counted in Python calls (``sys.setprofile``), not in time: the check stops at
``CALLS`` and fails at once instead of running for a minute."""

from __future__ import annotations

import sys
from types import FrameType
from typing import Any

import pytest

from rho_domain.shell.destructive import destructive_reason

CALLS = 1_000_000  # the fixed check takes 0.02-0.4 million on these lines, the old 30-110


class TooMuchWork(Exception):
    pass


def _calls_of(line: str) -> tuple[int, str]:
    calls = 0

    def count(frame: FrameType, event: str, arg: Any) -> None:
        nonlocal calls
        if event == "call":
            calls += 1
            if calls > CALLS:
                raise TooMuchWork(f"over {CALLS} calls")

    sys.setprofile(count)
    try:
        reason = destructive_reason(line)
    finally:
        sys.setprofile(None)
    return calls, reason


FILES = " ".join(f"f{i}" for i in range(600))
LINES = {
    "nested evals of program names": "eval " * 6 + "ls " * 2500,
    "nested evals of quoted words": "eval " * 5 + "'a b' " * 1200,
    "a writer in every suffix": "sudo " + "tee " * 1900,
    "a copier in every suffix": "env " + " ".join(f"cp a{i}" for i in range(1000)),
    "a runner in every suffix": "xargs " + "bash " * 1500,
    "written files, then run": "echo x | tee " + FILES + "; bash " + FILES,
}


@pytest.mark.parametrize("line", LINES.values(), ids=LINES.keys())
def test_a_long_line_of_commands_is_judged_in_bounded_work(line: str) -> None:
    calls, reason = _calls_of(line)
    assert reason, line[:60]
    assert calls <= CALLS


def test_an_ordinary_wrapped_copy_is_still_read_whole() -> None:
    # the suffix rule's skip keeps every writer's suffix: the destination of a wrapped cp
    # among a long list of sources still asks
    line = "sudo cp " + " ".join(f"src/a{i}.txt" for i in range(500)) + " .bashrc"
    calls, reason = _calls_of(line)
    assert reason.startswith("cp writes .bashrc: "), reason
    assert calls <= CALLS
