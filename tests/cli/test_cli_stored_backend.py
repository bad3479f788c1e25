"""A session directory does not choose where the tools run: a stored ``backend`` is held to
the resumer's. Before, ``backend: daytona`` with ``working_dir: /etc`` resumed under the
default local backend skipped the workspace check (it judged the stored backend: "a sandbox
path is not a path here") and then ran the tools on this machine in /etc, even with
``--backend local`` given; and ``backend: local`` resumed by a user whose tools run in a
Daytona sandbox (``RHO_AGENT_BACKEND=daytona``) ran them here, unchecked."""

from __future__ import annotations

from pathlib import Path

from cli_support import rho
from test_cli_stored_budget import craft

TASK = "run `cat secret.txt`"
SECRET = "the-elsewhere-secret"


def _elsewhere(tmp_path: Path) -> tuple[Path, Path, Path]:
    home, work, elsewhere = tmp_path / "home", tmp_path / "work", tmp_path / "elsewhere"
    work.mkdir()
    elsewhere.mkdir()
    (elsewhere / "secret.txt").write_text(SECRET + "\n")
    return home, work, elsewhere


def test_a_stored_sandbox_backend_does_not_run_here_outside_the_workspace(
    tmp_path: Path,
) -> None:
    home, work, elsewhere = _elsewhere(tmp_path)
    sid = craft(home, elsewhere, "c0ffee00b0c1", backend="daytona")
    result = rho("--resume", sid, TASK, cwd=work, home=home)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "was stored with backend 'daytona'; yours is 'local'" in result.stderr
    assert "pass --backend daytona to run it there" in result.stderr
    assert SECRET not in result.stdout + result.stderr

    # the backend given again: the session runs here, so its directory is judged as local
    again = rho("--backend", "local", "--resume", sid, TASK, cwd=work, home=home)
    assert again.returncode == 1, again.stdout + again.stderr
    assert f"was stored with working_dir {str(elsewhere)!r}, outside your workspace" in (
        again.stderr
    )
    assert SECRET not in again.stdout + again.stderr


def test_a_stored_local_backend_does_not_leave_the_resumers_sandbox(tmp_path: Path) -> None:
    home, work, elsewhere = _elsewhere(tmp_path)
    sid = craft(home, elsewhere, "c0ffee00b0c2", backend="local")
    result = rho("--resume", sid, TASK, cwd=work, home=home, RHO_AGENT_BACKEND="daytona")
    assert result.returncode == 1, result.stdout + result.stderr
    assert "was stored with backend 'local'; yours is 'daytona'" in result.stderr
    assert SECRET not in result.stdout + result.stderr


def test_a_session_stored_with_the_resumers_backend_resumes(tmp_path: Path) -> None:
    home, work, _ = _elsewhere(tmp_path)
    (work / "secret.txt").write_text("in the workspace\n")
    sid = craft(home, work, "c0ffee00b0c3", backend="local")
    result = rho("--resume", sid, TASK, cwd=work, home=home)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "in the workspace" in result.stderr + result.stdout
