"""Time a test can judge on a loaded machine: wall time less the time this process's threads
waited for a core (Linux's ``/proc/<pid>/task/<tid>/schedstat``, its second field).

On 2 cores shared by 4 test workers and other engineers' benchmarks a process waits for a
core for hundreds of milliseconds at a time (a 3 ms task step read 335 ms, a gap between 10 ms
ticks 0.66 s). That time is the machine's, not the code's: a bound on what is left says
whether the code did its work in time, whatever the load. Other processes (a server the test
talks to, a child) wait in their own counts, which this does not see; time that crosses
processes is judged by a liveness bound and the mechanism instead (docs/testing.md).
"""

from __future__ import annotations

import os
import time


def waits() -> dict[str, int]:
    """Nanoseconds each thread of this process has waited for a core so far, by thread id;
    empty where there is no schedstat (the measures then fall back to wall time)."""
    found: dict[str, int] = {}
    try:
        tids = os.listdir("/proc/self/task")
    except OSError:
        return found
    for tid in tids:
        try:
            with open(f"/proc/self/task/{tid}/schedstat", "rb") as f:
                found[tid] = int(f.read().split()[1])
        except (OSError, IndexError, ValueError):
            continue  # the thread ended meanwhile
    return found


def waited(before: dict[str, int], after: dict[str, int]) -> float:
    """Seconds the threads alive at both readings waited for a core between them.

    Every thread counts, not only the caller's: a thread the OS took off a core while it held
    the GIL keeps the others waiting too, and that wait is the machine's, not the work's. A
    thread that ended between the readings is left out (its count went with it)."""
    return sum(after[tid] - before[tid] for tid in after.keys() & before.keys()) / 1e9


class Stopwatch:
    """Seconds since it was made, less the time this process's threads waited for a core."""

    def __init__(self) -> None:
        self._started = time.perf_counter()
        self._waits = waits()

    def seconds(self) -> float:
        """The time so far that the machine's load does not explain."""
        return time.perf_counter() - self._started - waited(self._waits, waits())
