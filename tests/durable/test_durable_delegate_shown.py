"""``rho-agent queue approve RUN d1`` (no digest) refuses with the call as it waits now and
its digest; for a delegate call whose sub-agent waits, that digest approves the sub-agent's
call, so the refusal shows it too (it showed only the delegate's instruction)."""

from __future__ import annotations

import importlib.util
from collections.abc import Iterator
from pathlib import Path

import pytest
from durable_support import Rig, answer, bash, queue_here, rho, worker_rig

from rho_adapters.fakes.wire import call, tool_reply

if importlib.util.find_spec("dbos") is None:  # found, not imported: dbos costs 0.65 s
    pytest.skip("the durable extra (dbos) is not installed", allow_module_level=True)

SCRIPTS = {
    "deleg": [tool_reply(call("delegate", {"instruction": "child: write it"}, "d1")), answer("ok")],
    "child": [bash("echo hi > child.txt", "b1"), answer("child done")],
}


@pytest.fixture(scope="module")
def rig(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Rig]:
    with worker_rig(tmp_path_factory.mktemp("deleg"), "worker-deleg", SCRIPTS) as rig:
        yield rig


def test_the_queues_refusal_shows_the_sub_agents_call(rig: Rig) -> None:
    run_id, _ = queue_here(rig.root, rig.db, "enqueue", "deleg: go").split()
    assert queue_here(rig.root, rig.db, "wait", run_id, "--timeout", "40") == "awaiting_approval"
    bare = rho(
        *("queue", "--durable-db", rig.db, "--store", str(rig.store), "approve", run_id, "d1"),
        cwd=Path.cwd(),
        home=rig.root / "home",
    )
    assert bare.returncode == 1
    assert "it waits now as delegate" in bare.stderr
    assert "its sub-agent asks to run bash" in bare.stderr  # not before
    assert not (rig.work / "child.txt").exists()
