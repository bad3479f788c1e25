"""RunGate: one run at a time per session, and what a session refuses while one goes on.

``Session.run`` opens the gate (refused while a run or a compaction is in progress, and for a
stored session that was closed: its lock was given back), ``Session.compact`` passes through
it (refused while a run or another compaction is in progress, and for a closed stored session
too), and ``Session.close`` shuts it, first stopping a run in progress from outside it
(``stop_the_run``). The flags live here,
changed only through these methods, so the session's public methods read as their contracts.
``run_arguments`` refuses a run's arguments of the wrong kind before anything is recorded.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterator

import attrs

from rho_domain.errors import SessionStateError
from rho_domain.loop.control import RunControl
from rho_domain.loop.tally import RunTally
from rho_domain.value_methods import value_repr


def run_arguments(prompt: object, max_turns: object) -> None:
    """Refuse ``Session.run``'s arguments of the wrong kind before the run starts: a prompt
    that is not text (or None: continue after an approval) and a ``max_turns`` that is not a
    whole number >= 0 (or None: the config's) raise ``TypeError`` / ``ValueError`` naming the
    argument. Recorded first, a prompt of another type became a user message every later
    model call failed on, so one wrong call broke the conversation for good."""
    if prompt is not None and not isinstance(prompt, str):
        raise TypeError(
            f"Session.run: prompt must be a str (the task) or None (continue after an "
            f"approval), not {type(prompt).__name__} {prompt!r:.80}; nothing was run"
        )
    if max_turns is None:
        return
    if isinstance(max_turns, bool) or not isinstance(max_turns, int):
        raise TypeError(
            f"Session.run: max_turns must be a whole number >= 0 (0: no limit) or None (the "
            f"config's), not {type(max_turns).__name__} {max_turns!r:.80}; nothing was run"
        )
    if max_turns < 0:
        raise ValueError(
            f"Session.run: max_turns must be >= 0 (0: no limit), not {max_turns}; nothing was run"
        )


@attrs.define(eq=False)
class RunGate:
    """The run state of session ``session_id``: whether a run or a compaction is in progress,
    whether the session was closed, and the tally of the latest run (``tally``: None before
    the first)."""

    __repr__ = value_repr

    session_id: str
    tally: RunTally | None = attrs.field(default=None, init=False)
    _running: bool = attrs.field(default=False, init=False)
    # compact() waits for its summary (the history is read): no run may add to it meanwhile
    _compacting: bool = attrs.field(default=False, init=False)
    # close released the store's lock (a new run would not hold it)
    _closed: bool = attrs.field(default=False, init=False)
    _run_over: asyncio.Future[None] | None = attrs.field(default=None, init=False)  # on its loop
    _run_task: asyncio.Task[object] | None = attrs.field(default=None, init=False)

    @property
    def running(self) -> bool:
        """True from ``open`` to ``ended``."""
        return self._running

    def open(self, *, stored: bool) -> None:
        """Start a run in the current task (its caller then sets ``tally``). ``stored``: the
        session is created in a store (closing it gave the store's lock back).
        Raises ``SessionStateError`` if a run or a compaction is in progress, or if the
        session is stored and was closed."""
        if self._running:
            raise SessionStateError("this session is already running; wait or cancel it")
        if self._compacting:
            raise SessionStateError(
                "this session is compacting its history; wait for compact() to return"
            )
        self._refuse_closed(stored)
        self._running = True
        self._run_over = asyncio.get_running_loop().create_future()
        self._run_task = asyncio.current_task()

    def ended(self) -> None:
        """The run ``open`` started is over (``close`` waiting for it goes on)."""
        self._running = False
        if self._run_over is not None:
            self._run_over.set_result(None)

    def _refuse_closed(self, stored: bool) -> None:
        if self._closed and stored:
            # close gave the store's lock back: another process may have continued the
            # session since, and this one's history would be written over it.
            raise SessionStateError(
                f"session {self.session_id} was closed, which released its stored session to "
                f"other processes (run_sync closes it after each run); open it again to go on: "
                f"Session.resume({self.session_id!r}, store=...)"
            )

    @contextlib.contextmanager
    def compacting(self, *, stored: bool) -> Iterator[None]:
        """Hold the history for a compaction.
        Raises ``SessionStateError`` while a run or another compaction is in progress, or if
        the session is stored and was closed (as ``open``)."""
        self._refuse_closed(stored)
        if self._running or self._compacting:
            # its plan is the history read now; what a run adds while the summary is asked
            # for would be dropped when the history is replaced
            raise SessionStateError(
                "cannot compact while a run is in progress (or another compaction): compact "
                "after run() returns"
            )
        self._compacting = True
        try:
            yield
        finally:
            self._compacting = False

    async def close(self, control: RunControl) -> None:
        """Shut the gate: a run in progress is cancelled through ``control`` and its end
        awaited first (``stop_the_run``, whose refusals this raises, the gate left open)."""
        if self._running:
            await stop_the_run(self.session_id, control, self._run_over, self._run_task)
        self._closed = True


async def stop_the_run(
    session_id: str,
    control: RunControl,
    run_over: asyncio.Future[None] | None,
    run_task: asyncio.Task[object] | None,
) -> None:
    """Cancel the run in progress (in ``run_task``) and wait for its end (``run_over``, set
    as ``run`` returns).
    Raises ``SessionStateError``, the run left alone, when it cannot be awaited from here: it
    runs on another event loop (another thread), or the caller is inside the run itself (a
    listener or a tool: waiting would never end)."""
    if run_over is not None and run_over.done():
        return
    here = asyncio.get_running_loop()
    if run_over is None or run_over.get_loop() is not here:
        raise SessionStateError(
            f"session {session_id} has a run in progress on another event loop (another "
            f"thread): call cancel() and wait for its run() to return there before close()"
        )
    if asyncio.current_task() is run_task:
        raise SessionStateError(
            f"close() of session {session_id} from inside its own run (a listener or a "
            f"tool) would wait for itself: cancel() the run, and close after run() returns"
        )
    control.cancel()
    await asyncio.shield(run_over)
