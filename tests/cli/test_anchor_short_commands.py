"""The reference implementation's session commands, typed as its users type them:
``rho-agent ps DIR``, ``rho-agent cancel [ID] -d DIR [--all]`` and ``rho-agent export ID -d DIR
-o FILE``. Before, ``cancel`` was read as a one-word task ("unrecognized arguments"), ``ps DIR``
and ``export -o`` were usage errors, and ``-d`` was no flag of any of them."""

from __future__ import annotations

import json
from pathlib import Path

from cli_support import rho


def test_ps_cancel_and_export_take_the_reference_forms(tmp_path: Path) -> None:
    workspace, home, elsewhere = tmp_path / "ws", tmp_path / "home", tmp_path / "other"
    workspace.mkdir()
    (workspace / "README.md").write_text("# w\n")
    stored = home / "rho"  # the sessions live here; RHO_AGENT_HOME points elsewhere below
    ran = rho("-m", "demo", "-q", "hi", cwd=workspace, home=home)
    assert ran.returncode == 0, ran.stderr
    (session_id,) = (p.name for p in (stored / "sessions").iterdir())

    def run(*args: str) -> tuple[int, str, str]:
        done = rho(*args, cwd=workspace, home=home, RHO_AGENT_HOME=str(elsewhere))
        return done.returncode, done.stdout, done.stderr

    for form in (("ps", str(stored)), ("ps", "-d", str(stored)), ("ps", "--dir", str(stored))):
        code, out, err = run(*form)
        assert (code, err) == (0, ""), form
        assert session_id in out, form
    code, _, err = run("ps", "-d", str(stored), str(tmp_path))
    assert code == 1
    assert "two directories given" in err

    code, out, err = run("cancel", session_id[:6], "-d", str(stored))
    assert code == 1
    assert f"cancel: session {session_id} is not running (completed)" in err
    assert run("cancel", "--all", "--dir", str(stored))[1] == "no live session to cancel\n"
    assert run("kill", "--all", "-d", str(stored))[1] == "no live session to cancel\n"

    target = workspace / "trajectory.json"
    code, _, err = run(
        "export", session_id, "-d", str(stored), "-o", str(target), "--format", "atif"
    )
    assert (code, err) == (0, f"exported to {target}\n")
    assert json.loads(target.read_text())["session_id"] == session_id
    target.write_text("mine")
    code, _, err = run("export", session_id, "-d", str(stored), "-o", str(target))
    assert code == 1
    assert f"--output {target}: the file exists; add --force to overwrite it" in err
    assert target.read_text() == "mine"
    code, _, _ = run("export", session_id, "-d", str(stored), "-o", str(target), "--force")
    assert code == 0
    assert json.loads(target.read_text())["session"]["id"] == session_id
    assert run("export", session_id, "--force")[0] == 1


def test_a_task_given_as_prompt_text_is_pointed_to_the_argument(tmp_path: Path) -> None:
    """The reference's ``-p "text"`` was the task; here ``-p`` names a template. Before, the
    refusal said only that no template file exists, not where the text goes."""
    done = rho("-m", "demo", "-p", "summarise the readme", cwd=tmp_path, home=tmp_path)
    assert done.returncode == 1
    assert "no such template file" in done.stderr
    assert 'a task\'s text is the argument: rho-agent "TASK"' in done.stderr
