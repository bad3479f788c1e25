"""redapprove24: writes that span calls, and archives extracted unread. The destructive
check judged one call at a time, so a ``write`` of ``Makefile`` and then ``make`` (or ``curl
-o s.sh URL``, then ``sh s.sh``) each ran unasked after "always": the line that ran the file
had not written it. The session knows what it wrote (``State.unreviewed_writes``): a later
bash line that may run it asks, and once the human approves such a call the files count as
reviewed."""

from __future__ import annotations

import io
import tarfile
from pathlib import Path

from approval_support import developer_session

from rho_adapters.fakes import ScriptedApprover, call, text, tools
from rho_domain.ports.approver import ApprovalAnswer
from rho_domain.run import RunStatus

ALWAYS = ApprovalAnswer(approved=True, always=True)


async def test_make_after_a_written_makefile_asks_once(tmp_path: Path) -> None:
    """Before: the third call ran ``make`` unasked (two requests, the file made); now it is
    asked about, naming the Makefile, and once approved the next ``make`` runs unasked.
    Then ``tar -xf`` of an archive carrying ``.git/hooks/pre-commit`` into the workspace,
    which ran unasked too, asks."""
    recipe = "all:\n\ttouch made.txt\n"
    hook = tarfile.TarInfo(".git/hooks/pre-commit")
    with tarfile.open(tmp_path / "a.tar", "w") as archive:
        archive.addfile(hook, io.BytesIO(b""))
    approver = ScriptedApprover([ALWAYS, ALWAYS, True, False])
    turns = [
        tools(call("bash", {"command": "ls"})),
        tools(call("write", {"path": "Makefile", "content": recipe})),
        tools(call("bash", {"command": "make -s"})),
        tools(call("bash", {"command": "make -s"})),
        tools(call("bash", {"command": "tar -xf a.tar"})),
        text("built"),
    ]
    session = developer_session(tmp_path, turns, approver)
    assert (await session.run("build")).status is RunStatus.COMPLETED
    reasons = [r.reason for r in approver.requests]
    assert len(reasons) == 4, reasons
    assert reasons[2].startswith("make runs after an earlier call of this session wrote Makefile")
    assert (tmp_path / "made.txt").exists()
    # the archive's members were unseen: asked (and rejected), no hook planted
    assert reasons[3].startswith("tar writes an archive's members, which the approval")
    assert not (tmp_path / ".git").exists()
    # approved: the Makefile is reviewed; only the two make calls (which wrote nothing) are kept
    assert [c.name for c in session.state.unreviewed_writes] == ["bash", "bash"]
