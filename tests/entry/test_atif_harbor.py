"""ATIF exports validated by Harbor itself (issue 29, item 14).

Harbor (PyPI ``harbor``, 0.26) needs Python 3.12+, the project runs on 3.11: the test builds a
small venv with a pyenv Python 3.12 or 3.13, cached outside the repository
(``$RHO_HARBOR_VENV``, default ``/var/tmp/rho-harbor-venv``), installs ``harbor`` there once,
then feeds it the ``rho-agent export --format atif`` of a real stored session that delegated
(a Session on a FileSessionStore, its child stored beside it). Harbor's ``Trajectory`` model
must accept the document, with its own validators: a subagent reference must be resolvable
(``trajectory_id`` of an embedded trajectory or ``trajectory_path``; ``session_id`` alone is
rejected), embedded trajectory ids unique, step ids in order, agent-only fields on agent steps.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from obs_support import stored_session

from rho_entry.cli.main import main as cli_main

VENV = Path(os.environ.get("RHO_HARBOR_VENV", "/var/tmp/rho-harbor-venv"))

# Run by Harbor's Python: validate, then resolve every subagent reference by its key.
CHECK = """
import json, sys
from harbor.models.trajectories import Trajectory
doc = Trajectory.model_validate(json.load(open(sys.argv[1])))
embedded = {t.trajectory_id: t for t in doc.subagent_trajectories or []}
resolved = []
for step in doc.steps:
    for result in (step.observation.results if step.observation else []):
        for ref in result.subagent_trajectory_ref or []:
            child = embedded[ref.trajectory_id]
            resolved.append([ref.trajectory_id, child.session_id, len(child.steps)])
print(json.dumps({"version": doc.schema_version, "resolved": resolved}))
"""


def _pythons() -> list[Path]:
    """Python 3.12 and 3.13 interpreters of pyenv (its root from ``$PYENV_ROOT`` or ~/.pyenv)."""
    root = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv")) / "versions"
    found = sorted(root.glob("3.1[23]*/bin/python3")) if root.is_dir() else []
    return [p for p in found if os.access(p, os.X_OK)]


@pytest.fixture(scope="module")
def harbor_python() -> Path:
    python = VENV / "bin" / "python"
    if python.exists() and _has_harbor(python):
        return python
    pythons = _pythons()
    if not pythons:
        pytest.skip("Harbor needs Python >= 3.12 and pyenv has neither 3.12 nor 3.13 here")
    steps = [
        [str(pythons[0]), "-m", "venv", str(VENV)],
        [str(python), "-m", "pip", "install", "-q", "harbor"],
    ]
    for step in steps:
        done = subprocess.run(step, capture_output=True, text=True, timeout=900, check=False)
        if done.returncode != 0:
            pytest.skip(f"could not install harbor in {VENV}: {done.stderr[-500:]}")
    assert _has_harbor(python)
    return python


def _has_harbor(python: Path) -> bool:
    probe = [str(python), "-c", "import harbor.models.trajectories"]
    return subprocess.run(probe, capture_output=True, timeout=120, check=False).returncode == 0


def _harbor_check(python: Path, document: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(python), "-c", CHECK, str(document)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


async def test_harbor_reads_the_export_of_a_session_that_delegated(
    harbor_python: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("RHO_AGENT_HOME", str(tmp_path))
    result = await stored_session(tmp_path)
    assert cli_main(["export", result.session_id, "--format", "atif"]) == 0
    exported = tmp_path / "trajectory.json"
    exported.write_text(capsys.readouterr().out)
    done = _harbor_check(harbor_python, exported)
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout)
    assert answer["version"] == "ATIF-v1.8"
    ((key, child_session, child_steps),) = answer["resolved"]
    assert key == child_session != result.session_id
    assert child_steps == 2  # the child's instruction and its answer


async def test_harbor_refuses_a_reference_by_session_id_alone(
    harbor_python: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The check can fail: the shape our export had before (``session_id`` only) is refused."""
    monkeypatch.setenv("RHO_AGENT_HOME", str(tmp_path))
    result = await stored_session(tmp_path)
    assert cli_main(["export", result.session_id, "--format", "atif"]) == 0
    document = json.loads(capsys.readouterr().out)
    for step in document["steps"]:
        for item in step.get("observation", {}).get("results", ()):
            for ref in item.get("subagent_trajectory_ref", ()):
                del ref["trajectory_id"]
    exported = tmp_path / "old-shape.json"
    exported.write_text(json.dumps(document))
    done = _harbor_check(harbor_python, exported)
    assert done.returncode != 0
    assert "SubagentTrajectoryRef must be resolvable" in done.stderr
