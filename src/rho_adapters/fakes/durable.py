"""``RecordingSteps``: the ``DurableSteps`` port without an engine, for tests.

It remembers each step's name and result in order, as an engine would. A second instance
given those records answers the recorded steps from them, in order, and runs the rest: a run
executed again after its worker died, in one process.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any, TypeVar, cast

from rho_domain.errors import ReplayDiverged
from rho_domain.ports.durable import DurableSteps

T = TypeVar("T")


class RecordingSteps(DurableSteps):
    """Steps recorded in ``records`` (name, result); ``ran`` names the steps whose ``run``
    was called by this instance (not answered from ``recorded``)."""

    def __init__(self, recorded: Sequence[tuple[str, Any]] = ()) -> None:
        self.records: list[tuple[str, Any]] = list(recorded)
        self.ran: list[str] = []
        self._next = 0

    async def once(self, name: str, run: Callable[[], Awaitable[T]]) -> T:
        """See ``DurableSteps.once``; a recorded step of another name raises
        ``ReplayDiverged`` (an engine refuses it too)."""
        index, self._next = self._next, self._next + 1
        if index < len(self.records):
            recorded, value = self.records[index]
            if recorded != name:
                raise ReplayDiverged(f"step {index + 1} is {recorded!r}, not {name!r}")
            return cast("T", value)
        value = await run()
        self.ran.append(name)
        self.records.append((name, value))
        return value
