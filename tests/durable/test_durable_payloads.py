"""A queued run's payload of another shape (written by another rho-agent version pinned to
the same application version, or by hand) is refused naming the run and the field.

Before: a payload without ``session_id`` made ``queue approve`` and ``session_of`` fail on a
bare ``KeyError: 'session_id'`` (and the workflow on ``KeyError: 'run_id'``), and a field this
version did not know (a newer version's) was dropped unread. No engine is started here: the
queue reads workflows through a stand-in of the ``DBOSClient`` it holds.
"""

from __future__ import annotations

from typing import Any

import attrs
import pytest

from rho_adapters.durable.payloads import payload_of, run_of
from rho_domain.errors import ConfigError
from rho_domain.ports.durable import QueuedRun


@attrs.define
class _Workflow:
    workflow_id: str
    input: dict[str, Any]
    status: str = "SUCCESS"
    output: str = "awaiting_approval"


@attrs.define
class _Client:
    """The one ``DBOSClient`` member these reads use, over workflows by id."""

    workflows: dict[str, _Workflow]

    async def list_workflows_async(self, *, workflow_ids: list[str], **_: Any) -> list[_Workflow]:
        return [self.workflows[i] for i in workflow_ids if i in self.workflows]


GOOD = payload_of(QueuedRun(run_id="r1", session_id="s1", prompt="hi", settings={"a": "b"}))
WRONG = [
    ({k: v for k, v in GOOD.items() if k != "session_id"}, "lacks session_id"),
    ({**GOOD, "model": "gpt-9"}, r"holds fields this version does not know \(model\)"),
    ({**GOOD, "session_id": 7}, "has session_id 7, not an id"),
    ({**GOOD, "prompt": {"parts": []}}, "has a prompt of type dict, not a text or null"),
    ({**GOOD, "settings": ["a"]}, "has settings that are not an object of texts"),
    (["r1", "s1"], "is list, not an object of run_id, session_id, prompt, settings"),
]


def test_a_payload_of_another_shape_is_refused_naming_the_run_and_the_field() -> None:
    assert run_of(GOOD, "r1") == QueuedRun(
        run_id="r1", session_id="s1", prompt="hi", settings={"a": "b"}
    )
    for payload, problem in WRONG:
        with pytest.raises(ConfigError, match=rf"^queued run r1: its payload {problem}; .*"):
            run_of(payload, "r1")


async def test_the_queue_refuses_to_answer_or_place_a_run_of_another_shape() -> None:
    # here, not at import: run_queue imports SQLAlchemy (system_db), 0.2 s of every worker's
    # collection for this one test
    from rho_adapters.durable.run_queue import DbosRunQueue

    payload, problem = WRONG[0]
    queue = object.__new__(DbosRunQueue)  # no engine: the client below is all it reads
    queue.client = _Client({"r1": _Workflow("r1", {"args": [payload]})})
    queue.queue, queue.app_version = "rho", "test"
    for asked in (queue.session_of("r1"), queue.answer("r1", {"c1": True}, reasons={})):
        with pytest.raises(ConfigError, match=rf"^queued run r1: its payload {problem}; "):
            await asked
