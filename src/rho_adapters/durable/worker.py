"""One worker process: the ``rho.run`` workflow, the queue it consumes, its heartbeat.

The workflow is registered when this module is imported; its body is the ``Runner`` the
entry layer gives ``DbosWorker`` (open the session from the shared store, run it with
``DbosSteps``). DBOS is a process-wide singleton: one ``DbosWorker`` per process.

Code version: DBOS runs and recovers only the workflows of its own ``application_version``;
the worker is refused when its queue holds runs of another version (``VersionMismatch`` says
how to drain or pin), rather than leave them waiting forever.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import attrs

from rho_adapters.durable import load_dbos
from rho_adapters.durable.cancels import CancelRecords
from rho_adapters.durable.heartbeat import Heartbeat
from rho_adapters.durable.payloads import payload_of as payload_of  # re-exported
from rho_adapters.durable.payloads import run_of
from rho_adapters.durable.steps import DbosSteps
from rho_adapters.durable.system_db import (
    engine_settings,
    faster_sqlite_commits,
    said_by_database,
    shown,
)
from rho_adapters.finish import finished
from rho_domain.errors import ConfigError
from rho_domain.ports.durable import CancelAsked, DurableSteps, QueuedRun
from rho_domain.value_methods import value_eq, value_hash, value_repr

WORKFLOW = "rho.run"
LOG = logging.getLogger("rho_adapters.durable")

Runner = Callable[[QueuedRun, DurableSteps, CancelAsked], Awaitable[str]]

load_dbos()  # MissingExtra naming the extra, before the import below fails

from dbos import DBOS as _DBOS  # noqa: E402 - after the check above

_LIVE = ["PENDING", "ENQUEUED", "DELAYED"]  # DBOS's statuses of a run queued or running
_runner: Runner | None = None
_cancels: CancelRecords | None = None


@_DBOS.workflow(name=WORKFLOW)
async def run_workflow(payload: dict[str, Any]) -> str:
    """The durable run: the runner's status once the run settles. The runner reads the
    queue's record of a cancel of this run once the run has started (``cancels.py``)."""
    if _runner is None or _cancels is None:
        raise RuntimeError("no rho-agent worker runs in this process")
    run, records = run_of(payload, _DBOS.workflow_id or "?"), _cancels

    async def asked() -> bool:
        return await asyncio.to_thread(records.asked, run.run_id)

    status = await _runner(run, DbosSteps(), asked)
    # the run has ended: its cancel, if one was asked, is read no more (an execution that
    # raised keeps it, for the one that takes the run over; a worker's start forgets it,
    # as it does one this could not remove: the run's status is not made an error for it),
    # and those of other runs that ended are forgotten too: a canceller's record written
    # just after its run forgot its own stayed until a worker started
    try:
        await asyncio.to_thread(records.forget, run.run_id)
        await forget_ended_cancels(records)
    except Exception:  # a leftover row, forgotten at a worker's start
        LOG.warning("run %s: its cancel record was not removed", run.run_id, exc_info=True)
    return status


async def forget_ended_cancels(records: CancelRecords) -> None:
    """The cancels recorded for runs no longer queued or running, removed (``cancels``):
    runs whose workflow failed, or that ended before their canceller's record. One query
    when there are none."""
    among = await asyncio.to_thread(records.recorded)
    if not among:
        return
    live = await _DBOS.list_workflows_async(
        workflow_ids=among, status=_LIVE, load_input=False, load_output=False
    )
    ids = [str(w.workflow_id) for w in live]
    await asyncio.to_thread(records.forget_all_but, ids, among)


class VersionMismatch(ConfigError):
    """The queue holds runs started by another version of rho-agent."""


@attrs.frozen(kw_only=True)
class WorkerOptions:
    """How a worker runs: where, which queue, how many runs at once, as which version."""

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    url: str
    queue: str = "rho-runs"
    concurrency: int = 4
    app_version: str
    executor_id: str
    poll_interval: float = 1.0
    heartbeat: float = 2.0
    dead_after: float = 10.0


class DbosWorker:
    """Consumes ``options.queue`` with at most ``options.concurrency`` runs at once."""

    def __init__(self, options: WorkerOptions, runner: Runner) -> None:
        self.options = options
        self.runner = runner
        self.heartbeat = Heartbeat(
            options.url,
            options.executor_id,
            options.app_version,
            recover=_recover,
            interval=options.heartbeat,
            dead_after=options.dead_after,
        )
        self.cancels = CancelRecords(options.url)

    async def start(self) -> None:
        """Launch DBOS (migrating the system database on first use), check versions, beat,
        and start consuming. Raises ``ConfigError`` naming the database (password hidden)
        when it cannot be reached, or the executor id when a live worker has it,
        ``VersionMismatch`` for runs of another version.

        A start that fails or is cancelled (``CancelledError``, ``KeyboardInterrupt``) leaves
        nothing running: the heartbeat stopped (its thread, its engine) and DBOS destroyed
        (its threads, its engines), whatever step it stopped at, and the error raised as it
        came (a failure to open or launch: that ``ConfigError``)."""
        global _runner, _cancels
        options = self.options
        _runner = self.runner
        _cancels = self.cancels
        faster_sqlite_commits()
        try:
            try:
                _DBOS(
                    config={
                        "name": "rho-agent",
                        "system_database_url": options.url,
                        "application_version": options.app_version,
                        "executor_id": options.executor_id,
                        "log_level": "WARNING",
                        "notification_listener_polling_interval_sec": min(options.poll_interval, 1),
                        "db_engine_kwargs": engine_settings(
                            options.url, concurrency=options.concurrency
                        ),
                    }
                )
                # beating from here on, on its own thread: DBOS's launch holds the loop
                await asyncio.to_thread(self.heartbeat.start)
                _DBOS.launch()
            except ConfigError:  # the heartbeat's own words (its executor id in use)
                raise
            except Exception as exc:
                raise ConfigError(
                    f"cannot open the durable runs' database {shown(options.url)}: "
                    f"{said_by_database(exc)}; "
                    "check that it is reachable with this URL and that its system tables "
                    "are DBOS's (a database of its own, or a schema no other program writes)"
                ) from exc
            await self._check_versions()
            await _DBOS.register_queue_async(
                options.queue,
                worker_concurrency=options.concurrency,
                polling_interval_sec=options.poll_interval,
            )
        except BaseException:
            try:
                await finished(asyncio.ensure_future(self.stop()))
            except Exception:  # the start's own error is the one to surface
                LOG.warning("cleaning up a failed worker start failed too", exc_info=True)
            raise
        self.heartbeat.watch()
        await forget_ended_cancels(self.cancels)

    async def _check_versions(self) -> None:
        others = await _DBOS.list_workflows_async(
            status=["PENDING", "ENQUEUED"], name=WORKFLOW, load_input=False, load_output=False
        )
        versions = sorted({w.app_version or "?" for w in others} - {self.options.app_version})
        if versions:
            count = sum(1 for w in others if w.app_version != self.options.app_version)
            raise VersionMismatch(
                f"{count} unfinished run(s) in {shown(self.options.url)} belong to rho-agent "
                f"version {', '.join(versions)}; this worker is {self.options.app_version}. "
                "Drain them with workers of that version (let them finish, or cancel them "
                "with `dbos workflow cancel`), or pin this worker to it with "
                f"`--application-version {versions[0]}` when its code is the same."
            )

    async def stop(self) -> None:
        """Stop beating and shut DBOS down (runs in flight are recovered elsewhere).
        Idempotent, and safe after a start that stopped at any step. The loop it is awaited
        on can run threads after it (``asyncio.to_thread``) as before the start."""
        await self.heartbeat.stop()
        await asyncio.to_thread(_DBOS.destroy, workflow_completion_timeout_sec=0)
        self.cancels.close()
        await _own_pool_again(asyncio.get_running_loop())


async def _own_pool_again(loop: asyncio.AbstractEventLoop) -> None:
    """DBOS makes its executor the default one of a loop that calls its async API (what
    ``asyncio.to_thread`` runs on), and ``destroy`` shuts that executor down: the loop gets a
    pool of its own again, or its code after a stop (the CLI closing the session store) could
    run nothing in a thread ("cannot schedule new futures after shutdown")."""
    try:
        probe = loop.run_in_executor(None, _nothing)
    except RuntimeError:  # DBOS's, shut down
        loop.set_default_executor(ThreadPoolExecutor(thread_name_prefix="asyncio"))
    else:
        await probe


def _nothing() -> None:
    return None


def _recover(executor_id: str) -> int:
    return len(_DBOS._recover_pending_workflows([executor_id]))
