"""A cancel sent to a durable server while its run is still queued reaches that run.

A durable run is in progress from its enqueuing on (the queue takes one run of a session at a
time), but until a worker opens its session the store knows of no run, and the session's stop
signal is cleared when a run starts: ``POST .../cancel`` answered 409 'no run in progress' and
the run then ran to its end. Here no worker consumes the queue, so the run stays queued."""

from __future__ import annotations

import asyncio
import importlib.util
from pathlib import Path

import pytest
from server_support import BASE, place, settings

from rho_entry.server.bodies import CreateSession
from rho_entry.server.durable_runs import DurableSettings
from rho_entry.server.errors import Conflict
from rho_entry.server.host import SessionHost

if importlib.util.find_spec("dbos") is None:  # found, not imported: dbos costs 0.65 s
    pytest.skip("the durable extra (dbos) is not installed", allow_module_level=True)


def test_a_cancel_takes_a_queued_run_off_the_queue_and_it_never_runs(tmp_path: Path) -> None:
    where = place(tmp_path)
    durable = DurableSettings(database=str(tmp_path / "runs.sqlite"), queue="nobody-consumes")

    async def drive() -> tuple[list[str], list[str], str]:
        host = SessionHost(
            settings(where), base_config=BASE, config_dir=where.home, durable=durable
        )
        assert host.durable is not None
        host.durable.open()  # the queue, without a worker: the run stays queued
        try:
            sid = await host.create(CreateSession(prompt="count", profile="readonly"))
            outcomes = [await host.cancel(sid)]
            # the session's turn on the queue is free again: a chat is queued, and cancelled
            await host.chat(sid, "again")
            outcomes.append(await host.cancel(sid))
            with pytest.raises(Conflict) as nothing:
                await host.cancel(sid)
            found = await host.durable.queue.client.list_workflows_async(load_input=False)
            return outcomes, sorted(w.status for w in found), str(nothing.value)
        finally:
            await host.aclose()

    outcomes, statuses, nothing = asyncio.run(drive())
    assert outcomes == ["cancelled", "cancelled"]
    assert statuses == ["CANCELLED", "CANCELLED"]  # neither run is left for a worker
    assert "has no run in progress" in nothing
