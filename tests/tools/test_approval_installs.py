"""probeapprove25b: an install outside the workspace spelt otherwise, for real.

``npm install --location global ./tool`` (the value as the next word) and ``pip3.11 install
--user ... ./tool`` (a versioned pip) ran unasked after "always": the first read ``global`` as
the verb, the second's program had no row. npm linked ``tool`` into its global prefix's
``bin`` and pip put it in ``~/.local/bin``, on the PATH of every later command. Both now
ask, and, rejected, install nothing.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from rho_adapters.clock import SystemClock
from rho_adapters.fakes import ScriptedApprover, ScriptedModel, call, text, tools
from rho_adapters.local import LocalExecutor
from rho_domain.agent import Agent
from rho_domain.config import AgentConfig
from rho_domain.loop.session import Session
from rho_domain.permissions import builtin_profile
from rho_domain.ports.approver import ApprovalAnswer
from rho_domain.tools.factory import build_registry

_WHY = "installs a program outside the workspace, on the PATH later commands search"


@pytest.mark.skipif(shutil.which("npm") is None, reason="needs npm")
async def test_installs_outside_the_workspace_spelt_otherwise_ask(tmp_path: Path) -> None:
    """Before: one request each (``ls``, "always"), ``prefix/bin/tool`` linked and
    ``home/.local/bin/tool`` written."""
    work, home, prefix = tmp_path / "work", tmp_path / "home", tmp_path / "prefix"
    for directory in (work / "tool", home, prefix):
        directory.mkdir(parents=True)
    package = {"name": "tool", "version": "1.0.0", "bin": {"tool": "tool.js"}}
    (work / "tool" / "package.json").write_text(json.dumps(package))
    (work / "tool" / "tool.js").write_text("#!/usr/bin/env node\n")
    project = '[project]\nname = "tool"\nversion = "1"\n[project.scripts]\ntool = "tool:main"\n'
    (work / "tool" / "pyproject.toml").write_text(project)
    (work / "tool" / "tool.py").write_text("def main():\n    pass\n")
    environment = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(home),
        "npm_config_prefix": str(prefix),
        "npm_config_cache": str(tmp_path / "cache"),
    }
    lines = [
        "npm install --location global --offline --no-audit ./tool",
        "pip3.11 install --user --break-system-packages --no-index --no-build-isolation ./tool",
    ]
    reasons = [await _asked(work, environment, line) for line in lines]
    assert reasons == [
        f"npm install --location=global: {_WHY}",
        f"pip install --user: {_WHY} (~/.local)",
    ]
    assert list(prefix.iterdir()) == []
    assert list(home.iterdir()) == []


async def _asked(work: Path, environment: dict[str, str], line: str) -> str:
    """Run ``ls`` (answered "always"), then ``line`` (rejected) in a developer session; the
    reason ``line`` was asked about, or "" when it ran unasked."""
    profile = builtin_profile("developer")
    agent = Agent(
        config=AgentConfig(profile=profile),
        profile=profile,
        registry=build_registry(profile, databases={}),
        system_prompt="test",
    )
    approver = ScriptedApprover([ApprovalAnswer(approved=True, always=True), False])
    session = Session(
        agent,
        model=ScriptedModel(
            [*(tools(call("bash", {"command": c})) for c in ("ls", line)), text("ok")]
        ),
        executor=LocalExecutor(
            str(work), file_write=profile.file_write, allow_shell=True, base_env=environment
        ),
        clock=SystemClock(),
        approver=approver,
    )
    await session.run("install the tool")
    reasons = [r.reason for r in approver.requests]
    return reasons[1] if len(reasons) > 1 else ""
