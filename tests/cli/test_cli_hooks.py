"""Hooks named in a --config file, through the real command (issue 29, item 15): the demo
model reads the workspace's README, a redaction hook keeps its secret out of the answer and of
trace.jsonl; a reference that does not import stops the command before anything runs."""

from __future__ import annotations

import os
from pathlib import Path

from cli_support import rho_process

SECRET = "sk-live-8c1f2e9d"


def _hooks_on_path(tmp_path: Path) -> str:
    folder = tmp_path / "site"
    folder.mkdir()
    (folder / "team_hooks.py").write_text(
        "from rho_domain.hooks import ReplaceResult\n"
        "def redact(result):\n"
        f"    if {SECRET!r} in result.content:\n"
        f"        return ReplaceResult(result.content.replace({SECRET!r}, '[key]'))\n"
        "    return None\n"
    )
    return os.pathsep.join(p for p in (os.environ.get("PYTHONPATH", ""), str(folder)) if p)


def test_a_config_files_redaction_hook_keeps_the_secret_out_of_the_answer_and_the_trace(
    tmp_path: Path,
) -> None:
    work, home = tmp_path / "work", tmp_path / "home"
    work.mkdir()
    (work / "README.md").write_text(f"# Service\n\nDeploy key: {SECRET}\n")
    config = tmp_path / "agent.yaml"
    config.write_text("hooks:\n  after_tool: ['team_hooks:redact']\n  timeout: 5\n")
    done = rho_process(
        "--config", str(config), "--model", "demo", "what is in README.md?",
        cwd=work, home=home, PYTHONPATH=_hooks_on_path(tmp_path),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert SECRET not in done.stdout + done.stderr
    assert "[key]" in done.stdout + done.stderr
    traces = list(home.rglob("trace.jsonl"))
    assert len(traces) == 1
    recorded = traces[0].read_text()
    assert "[key]" in recorded
    assert SECRET not in recorded


def test_a_reference_that_does_not_import_stops_the_command(tmp_path: Path) -> None:
    work, home = tmp_path / "work", tmp_path / "home"
    work.mkdir()
    config = tmp_path / "agent.yaml"
    config.write_text("hooks:\n  before_tool: ['team_hookz:guard']\n")
    done = rho_process(
        "--config", str(config), "--model", "demo", "hello",
        cwd=work, home=home, PYTHONPATH=_hooks_on_path(tmp_path),
    )  # fmt: skip
    assert done.returncode == 1
    assert "hooks.before_tool[0]: 'team_hookz:guard' does not import" in done.stderr
    assert not list(home.rglob("trace.jsonl"))  # no session was started


def test_resume_runs_the_hooks_of_your_config_not_of_the_session_directory(
    tmp_path: Path,
) -> None:
    work, home = tmp_path / "work", tmp_path / "home"
    work.mkdir()
    (work / "README.md").write_text(f"Deploy key: {SECRET}\n")
    config = tmp_path / "agent.yaml"
    config.write_text("hooks:\n  after_tool: ['team_hooks:redact']\n")
    path = _hooks_on_path(tmp_path)
    first = rho_process(
        "--config", str(config), "--model", "demo", "hello",
        cwd=work, home=home, PYTHONPATH=path,
    )  # fmt: skip
    assert first.returncode == 0, first.stderr
    without = rho_process(
        "--resume", "latest", "--model", "demo", "read README.md",
        cwd=work, home=home, PYTHONPATH=path,
    )  # fmt: skip
    assert without.returncode == 1
    assert "team_hooks:redact" in without.stderr
    assert "name them under hooks: in your --config file" in without.stderr
    again = rho_process(
        "--resume", "latest", "--config", str(config), "--model", "demo", "read README.md",
        cwd=work, home=home, PYTHONPATH=path,
    )  # fmt: skip
    assert again.returncode == 0, again.stderr
    assert "[key]" in again.stdout + again.stderr  # it read the file again, redacted
    (trace,) = home.rglob("trace.jsonl")
    assert SECRET not in trace.read_text()
