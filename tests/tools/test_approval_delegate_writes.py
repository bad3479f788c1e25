"""redapprove25: what a ``delegate`` call's sub-agent wrote, as the parent's policy reads it.
The parent saw only that a delegate call ran, which shows no file, so it counted as writing
unknown files: after "always", the next line that may run code (``make``) asked even when
the sub-agent only read. Now the delegate result names what the sub-agent's unreviewed calls
wrote (``child_written``), and the parent judges its later lines on those files."""

from __future__ import annotations

from pathlib import Path

from approval_support import developer_session

from rho_adapters.fakes import ScriptedApprover, call, text, tools
from rho_domain.ports.approver import ApprovalAnswer
from rho_domain.run import RunStatus


async def test_a_reading_sub_agent_adds_no_question_and_a_writing_one_names_its_file(
    tmp_path: Path,
) -> None:
    """Before: ``make -s`` after a sub-agent that only read was asked about ("the files a
    delegate call wrote"); now it runs unasked. After a sub-agent that wrote ``other.mk``,
    ``make -f other.mk`` asks, naming it (rejected: nothing made)."""
    (tmp_path / "Makefile").write_text("all:\n\ttouch made.txt\n")
    recipe = "all:\n\ttouch other.txt\n"
    turns = [
        tools(call("bash", {"command": "ls"})),  # "always"
        tools(call("delegate", {"instruction": "read the Makefile"})),
        tools(call("read", {"path": "Makefile"})),  # the sub-agent: reads only
        text("it touches made.txt"),
        tools(call("bash", {"command": "make -s"})),  # unasked now
        tools(call("delegate", {"instruction": "write other.mk"})),
        tools(call("write", {"path": "other.mk", "content": recipe})),  # asked, approved
        text("written"),
        tools(call("bash", {"command": "make -s -f other.mk"})),  # asked, rejected
        text("done"),
    ]
    approver = ScriptedApprover([ApprovalAnswer(approved=True, always=True), True, False])
    session = developer_session(tmp_path, turns, approver, delegation=True)
    assert (await session.run("go")).status is RunStatus.COMPLETED
    asked = [(r.call.name, r.reason) for r in approver.requests]
    assert [name for name, _ in asked] == ["bash", "write", "bash"], asked
    assert (tmp_path / "made.txt").exists()
    assert asked[2][1].startswith("make reads other.mk, which an earlier call of this session")
    assert (tmp_path / "other.mk").exists()
    assert not (tmp_path / "other.txt").exists()
