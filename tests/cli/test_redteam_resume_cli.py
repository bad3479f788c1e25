"""Red team of ``--resume`` through the real CLI (issue 32): a session directory does not choose
the workspace.

A crafted ``config.yaml`` names another directory as ``working_dir`` (the user's home, ``/``):
every tool would read and write there. Before the fix ``rho-agent --resume ID --profile
developer -y "run \\`touch made\\`"`` run from a project created the file in the crafted
directory. A stored workspace inside the directory the user runs from, or one given again with
``--working-dir``, still resumes.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import yaml
from cli_support import rho

SID = "c0ffee00000a"


def _craft(home: Path, working_dir: str) -> None:
    directory = home / "rho" / "sessions" / SID
    directory.mkdir(parents=True)
    config = {"model": "demo", "working_dir": working_dir, "profile": "developer"}
    (directory / "config.yaml").write_text(yaml.safe_dump(config))
    (directory / "trace.jsonl").write_text("")
    meta = {"id": SID, "status": "completed", "created_at": time.time(), "model": "demo"}
    (directory / "meta.json").write_text(json.dumps(meta))


def _places(tmp_path: Path) -> tuple[Path, Path, Path]:
    work, victim, home = tmp_path / "work", tmp_path / "victim", tmp_path / "home"
    work.mkdir()
    victim.mkdir()
    return work, victim, home


def test_a_stored_working_dir_outside_the_users_is_refused(tmp_path: Path) -> None:
    work, victim, home = _places(tmp_path)
    for stored in (str(victim), "/", str(work / "..")):
        _craft(home, stored)
        result = rho(
            "--resume", SID, "--profile", "developer", "-y", "run `touch made`",
            cwd=work, home=home,
        )  # fmt: skip
        assert result.returncode != 0, result.stderr
        assert f"was stored with working_dir {stored!r}, outside your workspace" in result.stderr
        assert f"pass --working-dir {stored}" in result.stderr
        assert not (victim / "made").exists()
        assert not (tmp_path / "made").exists()
        for child in (home / "rho" / "sessions").iterdir():
            for item in child.iterdir():
                item.unlink()
            child.rmdir()


def test_a_workspace_inside_or_given_again_resumes(tmp_path: Path) -> None:
    work, victim, home = _places(tmp_path)
    (work / "sub").mkdir()
    _craft(home, str(work / "sub"))
    inside = rho(
        "--resume", SID, "--profile", "developer", "-y", "run `touch inside`",
        cwd=work, home=home,
    )  # fmt: skip
    assert inside.returncode == 0, inside.stderr
    assert (work / "sub" / "inside").exists()
    given = rho(
        "--resume", SID, "--profile", "developer", "-y", "--working-dir", str(victim),
        "run `touch chosen`", cwd=work, home=home,
    )  # fmt: skip
    assert given.returncode == 0, given.stderr
    assert (victim / "chosen").exists()  # the user chose it, on the command line


def test_the_hint_names_a_stored_working_dir_as_one_shell_word(tmp_path: Path) -> None:
    """The refusal's hint is a command to paste, and the stored ``working_dir`` is the
    directory's data: ``/tmp/x;touch pwned;`` was printed as ``pass --working-dir
    /tmp/x;touch pwned;``, which, pasted, ran ``touch pwned``. Now it is quoted; run by
    ``sh`` (``echo`` in rho-agent's place) the hint gives the path back as one word."""
    import re
    import subprocess

    work, _, home = _places(tmp_path)
    stored = f"{tmp_path}/x;touch pwned;"
    _craft(home, stored)
    result = rho("--resume", SID, "--profile", "developer", "-y", "go", cwd=work, home=home)
    assert result.returncode != 0, result.stderr
    hint = re.search(r"pass (--working-dir .*)$", result.stderr.strip())
    assert hint is not None, result.stderr
    echoed = subprocess.run(
        ["sh", "-c", f"printf '%s\\n' {hint.group(1)}"], cwd=work, capture_output=True, text=True
    )
    assert echoed.stdout.splitlines() == ["--working-dir", stored]
    assert not (work / "pwned").exists()
