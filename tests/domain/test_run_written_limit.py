"""What one run may write with the write and edit tools, in all (``limits.run_written_mib``).

Before, each write was bounded (10 MB, the file-size limit) but a run was not: a developer
agent could fill the disk one 10 MB write at a time. Now the run's writes are counted and the
one that would pass the limit is refused, naming the key; the next run counts from zero.
"""

from __future__ import annotations

import attrs
from domain_support import make_session

from rho_adapters.fakes import MemoryExecutor, MemorySessionStore, call, text, tools
from rho_domain import events as ev
from rho_domain.messages import ToolResultMessage
from rho_domain.permissions import builtin_profile
from rho_domain.run import RunStatus
from rho_domain.tools.delegate import DelegateTool
from rho_domain.tools.write import EditHandler, WriteHandler

KIB = 1 << 10
BIG = "x" * (600 * KIB)  # two of them pass the 1 MiB limit set below


def _write(path: str, id: str) -> object:
    return tools(call("write", {"path": path, "content": BIG}, id=id))


async def test_a_run_may_write_its_limit_in_all_and_the_next_run_starts_again() -> None:
    profile = builtin_profile("eval")
    profile = attrs.evolve(profile, limits=attrs.evolve(profile.limits, run_written_mib=1))
    executor = MemoryExecutor()
    edit = {"path": "c.txt", "old_string": "x", "new_string": "y", "replace_all": True}
    session = make_session(
        [
            _write("a.txt", "w1"),
            _write("b.txt", "w2"),  # 1,200 KiB in this run: refused
            text("first run done"),
            _write("c.txt", "w3"),  # a new run counts from zero: written
            tools(call("edit", edit, id="e1")),  # rewrites c.txt whole: 1,200 KiB, refused
            text("second run done"),
        ],
        tools=[WriteHandler(create_only=False), EditHandler()],
        profile=profile,
        executor=executor,
        context_window=10_000_000,  # the 600 KiB arguments stay in the history
    )

    assert (await session.run("write two")).status is RunStatus.COMPLETED
    assert (await session.run("write and edit")).status is RunStatus.COMPLETED

    results = {
        m.call_id: (m.is_error, m.content)
        for m in session.state.messages
        if isinstance(m, ToolResultMessage)
    }
    assert results["w1"][0] is False
    assert results["w3"][0] is False
    for refused in ("w2", "e1"):
        is_error, content = results[refused]
        assert is_error
        assert f"this run has already written {600 * KIB:,} bytes" in content
        assert "limits.run_written_mib" in content
    assert sorted(executor.files) == ["a.txt", "c.txt"]
    assert executor.files["c.txt"] == BIG.encode()  # the refused edit wrote nothing


async def test_sub_agents_write_within_their_parent_runs_total() -> None:
    """Before, each child's run counted from zero: a parent that wrote 600 KiB and delegated
    to a child writing 600 KiB wrote 1,200 KiB under a 1 MiB limit (N children, N times the
    limit). Now the child's write is refused, naming the key."""
    profile = builtin_profile("eval")
    profile = attrs.evolve(profile, limits=attrs.evolve(profile.limits, run_written_mib=1))
    executor = MemoryExecutor()
    store = MemorySessionStore()
    session = make_session(
        [
            _write("a.txt", "w1"),  # the parent: 600 KiB
            tools(call("delegate", {"instruction": "write b"}, id="d1")),
            _write("b.txt", "w2"),  # the first child: refused, 1,200 KiB in the run
            text("child 1 done"),
            text("parent done"),
        ],
        tools=[WriteHandler(create_only=False), DelegateTool()],
        profile=profile,
        executor=executor,
        store=store,
        context_window=10_000_000,
    )

    assert (await session.run("write, then delegate")).status is RunStatus.COMPLETED

    assert sorted(executor.files) == ["a.txt"]  # before: b.txt too
    (child,) = [i.id for i in await store.list() if i.id != session.id]
    (refused,) = [
        e.message
        for e in store.events(child)
        if isinstance(e, ev.MessageAdded) and isinstance(e.message, ToolResultMessage)
    ]
    assert refused.is_error
    assert f"this run has already written {600 * KIB:,} bytes" in refused.content
    assert "(its sub-agents' writes included)" in refused.content
    assert "limits.run_written_mib" in refused.content
