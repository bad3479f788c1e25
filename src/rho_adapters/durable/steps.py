"""``DurableSteps`` as DBOS steps of the workflow that runs on this task.

DBOS identifies a step by its place in the workflow (its step id, counted from the start)
and checks its name when the workflow is executed again: the loop asks for its steps in the
same order every time (``rho_domain.loop.durable_steps``), and a different order fails loudly
(``DBOSUnexpectedStepError``) instead of handing one step another's result.

Outside a workflow, or inside another step (a sub-agent's calls inside its parent's
``delegate`` call), a step runs directly: DBOS records only the outermost step.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TypeVar

from rho_adapters.durable import load_dbos
from rho_domain.errors import RunSuperseded
from rho_domain.ports.durable import DurableSteps

load_dbos()  # MissingExtra naming the extra, before the import below fails

from dbos import DBOS  # noqa: E402 - after the check above
from dbos import error as dbos_errors  # noqa: E402

T = TypeVar("T")


class DbosSteps(DurableSteps):
    """Steps of the DBOS workflow running on the current task (``DBOS.run_step_async``)."""

    async def once(self, name: str, run: Callable[[], Awaitable[T]]) -> T:
        """See ``DurableSteps.once``: recorded in the workflow's system database."""
        if DBOS.workflow_id is None or DBOS.step_status is not None:
            return await run()

        async def call() -> T:  # DBOS awaits coroutine functions only, not lambdas
            return await run()

        try:
            return await DBOS.run_step_async({"name": f"rho.{name}"}, call)
        except dbos_errors.DBOSWorkflowConflictIDError as exc:
            # The run was handed to another execution while this one ran (its worker taken
            # for dead): a BaseException the loop does not stop for, so it would still have
            # written a run_end after the trace the owner goes on with.
            raise RunSuperseded(
                f"run {DBOS.workflow_id}: another execution owns it now; this one stops"
            ) from exc
