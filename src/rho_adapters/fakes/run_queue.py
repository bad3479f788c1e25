"""``MemoryRunQueue``: the ``RunQueue`` port in memory, for tests of what enqueues and answers.

It keeps the DBOS queue's rules (``rho_adapters.durable.run_queue``), checked by one contract
suite run on both (tests/durable/test_run_queue_contract.py): a run id is taken once, one run
of a session at a time, a waiting run's answer queues its continuation ``<run_id>~<n>`` with
the same settings (``durable.continuations``), a queued run cancelled never runs, a taken one
has its cancel recorded for it. There is no worker: a test plays one with ``take`` (the
oldest queued run, as a worker of concurrency one takes them) and ``finish`` (the status its
run ended with). What happened is recorded in ``queued`` (each run accepted, in order),
``refused`` (each refused enqueue), ``taken``, ``answered`` (run id, continuation) and
``cancelled`` (each ``CancelledRun``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Collection, Mapping

from rho_adapters.durable.continuations import (
    answered_otherwise,
    answers_of,
    continuation_ids,
    continuation_settings,
    not_waiting,
    session_busy,
)
from rho_domain.errors import SessionStateError
from rho_domain.ports.durable import CancelledRun, QueuedRun, RunQueue

_SETTLED = frozenset(
    {"completed", "cancelled", "max_turns", "budget_exceeded", "error", "awaiting_approval"}
)


class MemoryRunQueue(RunQueue):
    """The queue named ``queue`` (in the refusals' words), in this process."""

    def __init__(self, queue: str = "rho-runs") -> None:
        self.queue = queue
        self.runs: dict[str, QueuedRun] = {}  # every run accepted, by id
        self.queued: list[QueuedRun] = []
        self.refused: list[QueuedRun] = []
        self.taken: list[QueuedRun] = []
        self.answered: list[tuple[str, str]] = []
        self.cancelled: list[CancelledRun] = []
        self._status: dict[str, str] = {}
        self._cancel_asked: set[str] = set()
        self._changed = asyncio.Condition()

    async def enqueue(self, run: QueuedRun) -> None:
        """See ``RunQueue.enqueue``."""
        if run.run_id in self.runs:
            return  # the same run again: taken once
        if any(
            self.runs[other].session_id == run.session_id and status in ("queued", "running")
            for other, status in self._status.items()
        ):
            self.refused.append(run)
            raise session_busy(run.session_id, self.queue, run.run_id)
        self.runs[run.run_id] = run
        self.queued.append(run)
        await self._set(run.run_id, "queued")

    async def answer(
        self,
        run_id: str,
        answers: Mapping[str, bool],
        *,
        reasons: Mapping[str, str],
        always: Collection[str] = (),
        digests: Mapping[str, str] | None = None,
    ) -> str:
        """See ``RunQueue.answer``."""
        status = self._status.get(run_id)
        if status != "awaiting_approval":
            raise not_waiting(run_id, status)
        run = self.runs[run_id]
        answered, settings = continuation_settings(
            run.settings, answers, reasons, always, digests or {}
        )
        base, attempt = continuation_ids(run_id)
        while self._status.get(f"{base}~{attempt}") == "cancelled":
            attempt += 1
        continuation = f"{base}~{attempt}"
        await self.enqueue(
            QueuedRun(
                run_id=continuation, session_id=run.session_id, prompt=None, settings=settings
            )
        )
        theirs = answers_of(self.runs[continuation].settings)
        if theirs != answered:
            raise answered_otherwise(run_id, continuation, theirs, answered)
        self.answered.append((run_id, continuation))
        return continuation

    async def cancel_queued(self, session_id: str) -> CancelledRun | None:
        """See ``RunQueue.cancel_queued``."""
        for run_id, status in self._status.items():
            if self.runs[run_id].session_id == session_id and status in ("queued", "running"):
                cancelled = CancelledRun(run_id=run_id, taken=status == "running")
                if cancelled.taken:
                    self._cancel_asked.add(run_id)
                else:
                    await self._set(run_id, "cancelled")
                self.cancelled.append(cancelled)
                return cancelled
        return None

    async def cancel_asked(self, run_id: str) -> bool:
        """See ``RunQueue.cancel_asked``."""
        return run_id in self._cancel_asked

    async def status(self, run_id: str) -> str | None:
        """See ``RunQueue.status``."""
        return self._status.get(run_id)

    async def statuses(self, run_ids: Collection[str]) -> Mapping[str, str | None]:
        """See ``RunQueue.statuses``."""
        return {run_id: self._status.get(run_id) for run_id in dict.fromkeys(run_ids)}

    async def wait(self, run_id: str, timeout: float) -> str:
        """See ``RunQueue.wait``: returns as soon as ``finish`` settles the run."""

        def settled() -> bool:
            return self._status.get(run_id) in _SETTLED

        async with self._changed:
            try:
                await asyncio.wait_for(self._changed.wait_for(settled), timeout)
            except TimeoutError:
                status = self._status.get(run_id)
                raise TimeoutError(
                    f"run {run_id} is still {status} after {timeout:.0f} s"
                ) from None
        return self._status[run_id]

    # -- the worker's side, played by a test ----------------------------------------------

    async def take(self) -> QueuedRun | None:
        """The oldest queued run, now running (a worker took it); None when none waits."""
        for run in self.queued:
            if self._status[run.run_id] == "queued":
                self.taken.append(run)
                await self._set(run.run_id, "running")
                return run
        return None

    async def finish(self, run_id: str, status: str) -> None:
        """End the taken run ``run_id`` with ``status`` (a ``RunStatus`` value, or
        ``awaiting_approval``). Raises ``SessionStateError`` for a run not running."""
        if self._status.get(run_id) != "running":
            raise SessionStateError(f"run {run_id} is not running: nothing to finish")
        self._cancel_asked.discard(run_id)  # the record lives as long as its run
        await self._set(run_id, status)

    async def _set(self, run_id: str, status: str) -> None:
        async with self._changed:
            self._status[run_id] = status
            self._changed.notify_all()
