"""Every command that reads sessions says a store that is a file is not a directory, naming
the path and the setting, as a run and ``--list`` do (9507108): ``monitor ps``, ``ps``,
``export``, ``fork`` and ``stats`` with ``--store FILE`` said "no sessions in FILE" (exit 0)
or "no session matches 'ID' in FILE", naming no problem; ``serve`` and ``Session(store=)``
opened it."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_support import rho

from rho_domain.errors import ConfigError


@pytest.fixture
def a_file(tmp_path: Path) -> Path:
    path = tmp_path / "notes.txt"
    path.write_text("not a directory\n")
    return path


@pytest.mark.parametrize("under", [False, True], ids=["the-file", "under-it"])
@pytest.mark.parametrize(
    "words",
    [["monitor", "ps"], ["ps"], ["export", "abc"], ["fork", "abc"], ["stats"]],
    ids=lambda words: " ".join(words),
)
def test_a_command_says_the_store_is_a_file(
    tmp_path: Path, a_file: Path, words: list[str], under: bool
) -> None:
    root = a_file / "sessions" if under else a_file
    done = rho(*words, "--store", str(root), cwd=tmp_path, home=tmp_path)
    assert done.returncode == 1, done.stdout
    assert f"cannot keep sessions in {root}: Not a directory (set by --store" in done.stderr
    assert "no session" not in done.stdout + done.stderr
    assert a_file.read_text() == "not a directory\n"


def test_the_environments_store_is_named(tmp_path: Path, a_file: Path) -> None:
    done = rho("ps", cwd=tmp_path, home=tmp_path, RHO_AGENT_STORE=f"file://{a_file}")
    assert done.returncode == 1, done.stdout
    assert "Not a directory (set by $RHO_AGENT_STORE" in done.stderr


def test_a_library_session_refuses_a_store_that_is_a_file(a_file: Path) -> None:
    from rho_agent import Agent, AgentConfig, Session

    with pytest.raises(ConfigError, match=r"Not a directory \(set by store="):
        Session(Agent(AgentConfig(model="demo")), store=str(a_file))
