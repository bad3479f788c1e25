"""``rho-agent continuum`` through the CLI, in this process: the demo model's sessions in the
session home, the state file, --resume, and the flags it refuses before anything runs."""

from __future__ import annotations

import asyncio
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parents[1] / "cli"))
from cli_support import rho

from rho_domain.errors import ConfigError
from rho_entry.cli.continuum import read_prd, terminal_ask
from rho_entry.continuum.state_file import load_state


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "README.md").write_text("hello\n")
    for args in (
        ("init", "-q", "-b", "main"),
        ("config", "user.email", "t@example.com"),
        ("config", "user.name", "T"),
        ("commit", "-q", "--allow-empty", "-m", "start"),
    ):
        subprocess.run(("git", *args), cwd=repo, check=True)
    (tmp_path / "prd.md").write_text("Describe the repository.\n")
    return repo


def test_sessions_are_stored_and_resume_goes_on_numbering(repo: Path, tmp_path: Path) -> None:
    prd, home = str(tmp_path / "prd.md"), tmp_path
    secret_url = "http://user:hunter2@127.0.0.1:9/v1"  # the demo model never calls it
    first = rho(
        "continuum",
        prd,
        "-m",
        "demo",
        "--max-sessions",
        "1",
        "-y",
        "--base-url",
        secret_url,
        cwd=repo,
        home=home,
    )
    assert first.returncode == 3, first.stderr  # paused: the sessions are used up
    assert "paused: used all 1 sessions" in first.stderr
    (state_file,) = (home / "rho" / "continuum").iterdir()
    state = json.loads(state_file.read_text())
    assert (state["format"], state["session_count"], state["status"]) == (1, 1, "paused")
    assert state["config"]["max_sessions"] == 1
    assert "hunter2" not in state_file.read_text()  # a base URL may hold a password
    # --resume in another repository took this run (the latest), wrote its config over and
    # went on with its session count there; it is the latest run of that directory now
    other = tmp_path / "other"
    subprocess.run(("git", "init", "-q", str(other)), check=True)
    elsewhere = rho("continuum", prd, "-m", "demo", "-y", "--resume", cwd=other, home=home)
    assert elsewhere.returncode == 1, elsewhere.stderr
    assert f"--resume: no continuum run of {other.resolve()} is recorded" in elsewhere.stderr
    assert "(1 for other directories: name one with --state)" in elsewhere.stderr
    assert json.loads(state_file.read_text())["config"]["working_dir"] == str(repo.resolve())
    again = rho(
        "continuum",
        prd,
        "-m",
        "demo",
        "--max-sessions",
        "2",
        "-y",
        "--resume",
        cwd=repo,
        home=home,
    )
    assert again.returncode == 3, again.stderr
    handoffs = sorted(p.name for p in (repo / ".rho-agent" / "handoffs").iterdir())
    assert handoffs == ["001-session-1.md", "002-session-2.md"]
    log = subprocess.run(
        ("git", "log", "--format=%s"), cwd=repo, check=True, capture_output=True, text=True
    )
    assert log.stdout.splitlines() == ["continuum: session 1", "start"]  # session 2: no change
    # both sessions are in the session home, where ps, monitor and export find them
    listed = rho("ps", "--json", cwd=repo, home=home)
    sessions = json.loads(listed.stdout)
    assert [s["profile"] for s in sessions] == ["developer", "developer"]
    assert all("## PRD\n\nDescribe the repository." in s["first_prompt"] for s in sessions)


@pytest.mark.parametrize(
    ("flags", "said"),
    [
        (("--test-cmd", "make && make test"), "'&&' is a shell operator"),
        (("--lint-cmd", "ruff check > out"), "'>' is a shell operator"),
        (("--budget-threshold", "1.5"), "--budget-threshold must be above 0"),
        (("--max-sessions", "0"), "--max-sessions must be at least 1"),
        (("-y", "--resume"), "--resume: no continuum run of "),
        ((), "stdin is not a terminal to answer on: give -y"),
        (("-y", "--state", ".env"), "is a secrets file (.env); the state file is written over"),
    ],
)
def test_refused_before_anything_runs(
    repo: Path, tmp_path: Path, flags: tuple[str, ...], said: str
) -> None:
    done = rho("continuum", str(tmp_path / "prd.md"), "-m", "demo", *flags, cwd=repo, home=tmp_path)
    assert done.returncode == 1
    assert said in done.stderr
    assert not (repo / ".rho-agent").exists()


def test_store_keeps_the_sessions_where_it_says(repo: Path, tmp_path: Path) -> None:
    """--store was refused as an unrecognized argument (every other command that stores
    sessions takes it); a store that cannot be opened is named before anything runs."""
    prd, elsewhere = str(tmp_path / "prd.md"), tmp_path / "elsewhere"
    flags = ("-m", "demo", "-y", "--max-sessions", "1", "--store")
    done = rho("continuum", prd, *flags, str(elsewhere), cwd=repo, home=tmp_path)
    assert done.returncode == 3, done.stderr
    listed = rho("ps", "--json", "--store", str(elsewhere), cwd=repo, home=tmp_path)
    assert [s["profile"] for s in json.loads(listed.stdout)] == ["developer"]
    assert not (tmp_path / "rho" / "sessions").exists()
    bad = rho("continuum", prd, *flags, str(tmp_path / "prd.md"), cwd=repo, home=tmp_path)
    assert bad.returncode == 1
    assert "(set by --store; give a directory rho-agent can write)" in bad.stderr


def test_a_directory_outside_git_is_refused_before_a_session(tmp_path: Path) -> None:
    """It ran a whole session, wrote .gitignore and a state file (the next --resume's
    "latest"), and failed at the first commit with advice about .gitignore; a repository
    without a committer failed at the same point."""
    plain = tmp_path / "plain"
    plain.mkdir()
    (tmp_path / "prd.md").write_text("Describe it.\n")
    done = rho("continuum", "../prd.md", "-m", "demo", "-y", cwd=plain, home=tmp_path)
    assert done.returncode == 1, done.stderr
    assert f"{plain} is not in a git work tree" in done.stderr
    assert "run `git init` there, or give the repository with -d/--working-dir" in done.stderr
    assert "session 1" not in done.stderr
    assert ", state " not in done.stderr  # before: "run ID, state PATH", a file never written
    assert list(plain.iterdir()) == []
    # a repository where git knows no committer: the first commit failed after a session
    subprocess.run(("git", "init", "-q", str(plain)), check=True)
    done = rho("continuum", "../prd.md", "-m", "demo", "-y", cwd=plain, home=tmp_path)
    assert done.returncode == 1, done.stderr
    assert f"git cannot commit in {plain}: it knows no committer" in done.stderr
    assert "`git config user.email EMAIL` there" in done.stderr
    assert [p.name for p in plain.iterdir()] == [".git"]
    assert not (tmp_path / "rho" / "continuum").exists()


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_the_question_is_asked_on_a_terminal_and_never_without_one() -> None:
    said = io.StringIO()
    answer = asyncio.run(terminal_ask("Which colour?\nNEEDS_INPUT", _Terminal("blue\n"), said))
    assert answer == "blue"
    assert "Which colour?" in said.getvalue()
    assert asyncio.run(terminal_ask("Which?", io.StringIO("blue\n"), io.StringIO())) is None
    assert asyncio.run(terminal_ask("Which?", _Terminal(""), io.StringIO())) is None


def test_a_prd_that_is_a_secret_a_fifo_or_endless_is_refused(tmp_path: Path) -> None:
    (tmp_path / ".env").write_text("TOKEN=s3cret\n")
    (tmp_path / "prd.md").symlink_to(tmp_path / ".env")  # judged by its real path
    os.mkfifo(tmp_path / "fifo")
    with open(tmp_path / "huge", "wb") as huge:
        huge.truncate(10**9)  # sparse: read whole, it went into every session's prompt
    for name, said in (
        (".env", "is a secrets file (.env), and the PRD is sent to the model"),
        ("prd.md", "is a secrets file (.env), and the PRD is sent to the model"),
        ("fifo", "it is a named pipe (FIFO) that nothing writes to"),
        ("huge", "it holds more than 16 MiB"),
    ):
        with pytest.raises(ConfigError, match=r"PRD .*") as refused:
            read_prd(str(tmp_path / name))
        assert said in str(refused.value), name
    with pytest.raises(ConfigError, match=r"continuum state .*fifo: cannot read the state file"):
        load_state(tmp_path / "fifo")  # --resume --state FIFO held the run for good
