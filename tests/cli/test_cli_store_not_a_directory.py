"""A file store named by a setting (``--store``, ``$RHO_AGENT_STORE``, ``store:`` in the
config) that cannot hold sessions stops before the run, naming the path and the setting, as
the config directory's default already did. ``--store FILE`` printed the header, ran, and said
"error: StoreError: cannot clear the cancel request: Not a directory" and "nothing was
saved", naming neither; ``--list`` said "no saved sessions"."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_support import rho


@pytest.fixture
def a_file(tmp_path: Path) -> Path:
    path = tmp_path / "notes.txt"
    path.write_text("not a directory\n")
    return path


@pytest.mark.parametrize("under", [False, True], ids=["the-file", "under-it"])
@pytest.mark.parametrize("how", ["--store", "RHO_AGENT_STORE", "config", "file-url"])
def test_a_store_that_is_a_file_stops_before_the_run_naming_the_setting(
    tmp_path: Path, a_file: Path, how: str, under: bool
) -> None:
    root = a_file / "sessions" if under else a_file
    args, env = ["-m", "demo", "hi"], {}
    if how == "--store":
        args, origin = ["--store", str(root), *args], "--store"
    elif how == "file-url":
        args, origin = ["--store", f"file://{root}", *args], "--store"
    elif how == "RHO_AGENT_STORE":
        env, origin = {"RHO_AGENT_STORE": str(root)}, "$RHO_AGENT_STORE"
    else:
        (tmp_path / "agent.yaml").write_text(f"store: {root}\n")
        args, origin = ["-c", "agent.yaml", *args], "store: in the agent config"
    done = rho(*args, cwd=tmp_path, home=tmp_path, **env)
    assert done.returncode == 1, done.stderr
    assert f"cannot keep sessions in {root}: Not a directory (set by {origin}" in done.stderr
    assert "rho-agent ·" not in done.stderr  # no header: nothing ran
    assert "--resume" not in done.stderr
    assert done.stdout == ""
    assert a_file.read_text() == "not a directory\n"


def test_list_says_the_store_is_not_a_directory(tmp_path: Path, a_file: Path) -> None:
    done = rho("--store", str(a_file), "--list", cwd=tmp_path, home=tmp_path)
    assert done.returncode == 1, done.stdout
    assert f"{a_file}" in done.stderr
    assert "Not a directory (set by --store" in done.stderr
