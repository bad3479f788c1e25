"""A stored profile's resource limits are authority too: a session directory that keeps the
name ``readonly`` and lifts ``limits:`` (memory, CPU, output, file size, processes) must not
resume with them. Before, ``profile_grants.excess`` compared every axis but the limits, so
``--resume`` (and a server's chat/resume, the runtime, ``fork``) ran the session's commands
without a memory, CPU or output bound."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
import yaml
from cli_support import rho

from rho_domain.limits import ResourceLimits
from rho_domain.permissions import builtin_profile
from rho_domain.profile_grants import excess, within

NO_LIMITS = {
    "memory_mib": None,
    "cpu_seconds": None,
    "output_mib": None,
    "file_size_mib": None,
    "processes": None,
}


def craft(home: Path, workspace: Path, profile: Any, session_id: str = "c0ffee00000a") -> str:
    """A session directory written by hand, its meta.json and config.yaml saying readonly."""
    directory = home / "rho" / "sessions" / session_id
    directory.mkdir(parents=True)
    data = {"model": "demo", "working_dir": str(workspace), "profile": profile}
    (directory / "config.yaml").write_text(yaml.safe_dump(data))
    (directory / "trace.jsonl").write_text("")
    meta = {
        "id": session_id,
        "status": "completed",
        "created_at": time.time(),
        "updated_at": time.time(),
        "model": "demo",
        "profile": "readonly",
        "working_dir": str(workspace),
    }
    (directory / "meta.json").write_text(json.dumps(meta))
    return session_id


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    work = tmp_path / "work"
    work.mkdir()
    (work / "README.md").write_text("# Sample\n")
    return work


@pytest.mark.parametrize(
    ("limits", "said"),
    [
        (NO_LIMITS, "memory_mib no limit (the limit is 1024)"),
        ({"cpu_seconds": 100000}, "cpu_seconds 100000 (the limit is 120)"),
        ({"output_mib": None}, "output_mib no limit (the limit is 64)"),
        ({"file_size_mib": 1048576}, "file_size_mib 1048576 (the limit is 256)"),
        ({"processes": 100000}, "processes 100000 (the limit is 256)"),
    ],
)
def test_a_stored_readonly_profile_with_lifted_limits_is_refused(
    workspace: Path, tmp_path: Path, limits: dict[str, Any], said: str
) -> None:
    home = tmp_path / "home"
    sid = craft(home, workspace, {"name": "readonly", "limits": limits})
    result = rho("--resume", sid, "list the files", cwd=workspace, home=home)
    assert result.returncode == 1, result.stdout + result.stderr
    assert f"session {sid} was stored with profile readonly* (" in result.stderr
    assert "which grants more than readonly" in result.stderr
    assert said in result.stderr
    assert (home / "rho" / "sessions" / sid / "trace.jsonl").read_text() == ""


def test_a_stored_profile_with_tighter_limits_resumes(workspace: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    tighter = {"memory_mib": 512, "cpu_seconds": 10, "output_mib": 1, "processes": 16}
    sid = craft(home, workspace, {"name": "readonly", "limits": tighter})
    result = rho("--resume", sid, "list the files", cwd=workspace, home=home)
    assert result.returncode == 0, result.stderr
    assert (home / "rho" / "sessions" / sid / "trace.jsonl").read_text()


def test_limits_are_an_axis_of_what_a_profile_grants() -> None:
    readonly, developer = builtin_profile("readonly"), builtin_profile("developer")
    lifted = readonly.__class__(name="readonly", limits=ResourceLimits(memory_mib=None))
    assert not within(lifted, readonly)
    assert excess(lifted, readonly) == ("limits: memory_mib no limit (the limit is 1024)",)
    assert within(readonly, developer)  # the built-ins stay ordered
    assert within(developer, builtin_profile("eval"))
    assert excess(developer, readonly)[-1].startswith("limits: memory_mib 8192")
