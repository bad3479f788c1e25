"""probeapprove25b: a download whose output path comes from where the check cannot see it.

``curl -o .git/hooks/pre-commit URL`` asks (a write inside ``.git``: the hook runs at the
next commit), but ``curl -K c.txt URL``, with ``output = .git/hooks/pre-commit`` in
``c.txt``, ran unasked after "always" and wrote the hook; so did ``wget -e
output_document=...`` and ``aria2c -i list``. Now an options file, and a wgetrc command
naming where wget writes, ask.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from rho_adapters.clock import SystemClock
from rho_adapters.fakes import ScriptedApprover, ScriptedModel, call, text, tools
from rho_adapters.local import LocalExecutor
from rho_domain.agent import Agent
from rho_domain.config import AgentConfig
from rho_domain.loop.session import Session
from rho_domain.permissions import builtin_profile
from rho_domain.ports.approver import ApprovalAnswer
from rho_domain.run import RunStatus
from rho_domain.shell.destructive import destructive_reason
from rho_domain.tools.factory import build_registry

_HIDDEN = "sets where it writes where the destination check cannot read it"


async def test_curl_reading_its_output_path_from_a_file_asks(tmp_path: Path) -> None:
    """Before: two requests (``ls``, "always"; the write of c.txt), and the hook written."""
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    (tmp_path / "hook.sh").write_text("#!/bin/sh\ntouch made.txt\n")
    profile = builtin_profile("developer")
    agent = Agent(
        config=AgentConfig(profile=profile),
        profile=profile,
        registry=build_registry(profile, databases={}),
        system_prompt="test",
    )
    turns = [
        tools(call("bash", {"command": "ls"})),
        tools(call("write", {"path": "c.txt", "content": "output = .git/hooks/pre-commit\n"})),
        tools(call("bash", {"command": f"curl -sK c.txt file://{tmp_path}/hook.sh"})),
        text("done"),
    ]
    approver = ScriptedApprover([ApprovalAnswer(approved=True, always=True), True, False])
    session = Session(
        agent,
        model=ScriptedModel(turns),
        executor=LocalExecutor(str(tmp_path), file_write=profile.file_write, allow_shell=True),
        clock=SystemClock(),
        approver=approver,
    )
    assert (await session.run("fetch the hook")).status is RunStatus.COMPLETED
    reasons = [r.reason for r in approver.requests]
    assert len(reasons) == 3, reasons
    assert reasons[2].startswith(f"curl -K: {_HIDDEN}")
    assert not (tmp_path / ".git" / "hooks" / "pre-commit").exists()


def test_output_paths_set_out_of_the_destination_checks_sight_ask() -> None:
    rows = {
        "curl --config=c.txt https://e.invalid/x": "curl --config=c.txt",
        "curl -sSKc.txt https://e.invalid/x": "curl -K",
        "wget -e output_document=/root/.bashrc https://e.invalid/x": "wget -e output_document",
        "wget --execute=outputDocument=/root/.bashrc https://e.invalid/x": "wget -e outputD",
        "wget -e 'dir_prefix = /usr/local/bin' https://e.invalid/x": "wget -e dir_prefix",
        "aria2c -i list.txt": "aria2c -i",
        "aria2c --conf-path=a.conf https://e.invalid/x": "aria2c --conf-path=a.conf",
    }
    missed = {c: r for c, want in rows.items() if not (r := destructive_reason(c)).startswith(want)}
    assert missed == {}
    ordinary = [
        "curl -sSL -o out.bin https://e.invalid/x",
        "curl -c cookies.txt https://e.invalid/x",
        "wget -e robots=off https://e.invalid/x",
        "aria2c https://e.invalid/x",
    ]
    asking = {c: r for c in ordinary if (r := destructive_reason(c))}
    assert asking == {}
