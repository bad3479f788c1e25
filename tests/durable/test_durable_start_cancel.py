"""A Ctrl+C during a worker's start that a step of the start swallowed still stops it.

``asyncio.run`` answers the first SIGINT by cancelling the main task; a step of the start
that caught the ``CancelledError`` and went on (a library's ``except BaseException``, 3.11's
``wait_for`` racing a result) let the worker print "consuming" and wait for a second signal
(``test_durable_worker_ctrl_c``'s start case failed so under load). The cancel is still
pending on the task (``Task.cancelling``): ``_consume`` stops the worker and ends cancelled."""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

import pytest

from rho_entry.cli.worker import _consume


class SwallowingWorker:
    def __init__(self) -> None:
        self.stopped = False

    async def start(self) -> None:
        task = asyncio.current_task()
        assert task is not None
        task.cancel()  # what asyncio.run's SIGINT handler does
        with contextlib.suppress(asyncio.CancelledError):  # without uncancel(): it goes on
            await asyncio.sleep(0)

    async def stop(self) -> None:
        self.stopped = True


async def test_a_cancel_the_start_swallowed_stops_the_worker() -> None:
    worker = SwallowingWorker()
    options: Any = type(
        "Options", (), {"executor_id": "w1", "queue": "q", "app_version": "v", "concurrency": 1}
    )()
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(_consume(worker, options, "db"), 2)  # type: ignore[arg-type]
    assert worker.stopped
