"""redapprove25: a git command that brings another revision's files into the work tree,
then a program that reads them as code, over two calls. ``git checkout other`` named none
of the files it wrote, so nothing counted as written and the next call's ``make`` ran the
other branch's Makefile unasked after "always"; now it is asked about."""

from __future__ import annotations

import subprocess
from pathlib import Path

from approval_support import developer_session

from rho_adapters.fakes import ScriptedApprover, call, text, tools
from rho_domain.ports.approver import ApprovalAnswer
from rho_domain.run import RunStatus


def _repository(root: Path) -> None:
    """A repository whose branch ``other`` holds a Makefile that ``main`` does not."""
    script = (
        "set -e; git init -q .; git commit -q --allow-empty -m base; git checkout -q -b other;"
        " printf 'all:\\n\\ttouch made.txt\\n' > Makefile; git add Makefile;"
        " git commit -q -m make; git checkout -q -"
    )
    names = ("AUTHOR_NAME", "AUTHOR_EMAIL", "COMMITTER_NAME", "COMMITTER_EMAIL")
    env = {f"GIT_{n}": "t" for n in names} | {"GIT_CONFIG_GLOBAL": "/dev/null", "HOME": str(root)}
    env["PATH"] = "/usr/bin:/bin"
    subprocess.run(["sh", "-c", script], cwd=root, env=env, check=True)


async def test_make_after_a_checkout_that_brought_a_makefile_asks(tmp_path: Path) -> None:
    """Before: one request (the checkout, answered "always") and made.txt made; now the
    ``make`` is asked about, naming the checkout, and rejected: nothing made."""
    _repository(tmp_path)
    assert not (tmp_path / "Makefile").exists()
    approver = ScriptedApprover([ApprovalAnswer(approved=True, always=True), False])
    turns = [
        tools(call("bash", {"command": "git checkout -q other"})),
        tools(call("bash", {"command": "make -s"})),
        text("done"),
    ]
    session = developer_session(tmp_path, turns, approver)
    assert (await session.run("build the other branch")).status is RunStatus.COMPLETED
    assert (tmp_path / "Makefile").exists()  # the checkout ran, and brought it
    reasons = [r.reason for r in approver.requests]
    assert len(reasons) == 2, reasons
    assert reasons[1].startswith(
        "make runs after an earlier call of this session wrote the files git checkout writes"
    )
    assert not (tmp_path / "made.txt").exists()
