"""Where bubblewrap is missing or cannot run, the start says what is not protected.

A machine without bwrap is a search path without it (``LocalExecutor(search_path=...)``, and
``wiring.build_executor(search_path=...)`` for the entry layer). The notice names the three
walls that are gone; restricted commands still run (on the argv checks); the first session of
a process says it once (a log record: stderr for a script, a ``rho-agent: warning:`` line in
the CLI), later sessions do not repeat it.
"""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from rho_adapters.local import LocalExecutor
from rho_adapters.local.executor import sandbox_available
from rho_adapters.local.runner import probe_ahead
from rho_adapters.local.sandbox import UNPROTECTED
from rho_domain.errors import ExecutorError
from rho_domain.permissions import developer_profile, readonly_profile
from rho_domain.ports.executor import Command, Stage
from rho_entry.cli.main import main


@pytest.fixture
def no_bwrap(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A program directory with cat and ls, and no bwrap (outside the workspace: a program
    directory inside it would be dropped)."""
    bindir = tmp_path_factory.mktemp("bin")
    for program in ("cat", "ls"):
        os.symlink(f"/usr/bin/{program}", bindir / program)
    return str(bindir)


def test_the_notice_names_what_is_not_protected(tmp_path: Path, no_bwrap: str) -> None:
    executor = LocalExecutor(str(tmp_path), search_path=(no_bwrap,))
    notice = executor.unprotected()
    assert notice == UNPROTECTED
    for missing in (
        "no mount masking of secrets (reads rely on the argv checks only)",
        "no network isolation",
        "no PID isolation",
    ):
        assert missing in notice


def test_a_bwrap_that_cannot_run_is_no_sandbox(
    tmp_path: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """Installed but refused by the kernel (no user namespaces): the probe sees it fail."""
    bindir = tmp_path_factory.mktemp("refusing-bin")
    fake = bindir / "bwrap"
    fake.write_text("#!/bin/sh\necho 'bwrap: No permissions to create new namespace' >&2\nexit 1\n")
    fake.chmod(0o755)
    os.symlink("/usr/bin/cat", bindir / "cat")
    assert LocalExecutor(str(tmp_path), search_path=(str(bindir),)).unprotected() == UNPROTECTED


def test_a_bwrap_out_of_file_descriptors_is_said_so_not_taken_for_missing(
    tmp_path: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """Before: the probe's EMFILE (``ulimit -n 8``) was a bwrap that cannot run, commands ran
    without the sandbox for the rest of the process, and the notice said to install it."""
    bindir = tmp_path_factory.mktemp("emfile-bin")
    fake = bindir / "bwrap"  # bwrap itself out of descriptors
    fake.write_text("#!/bin/sh\necho 'bwrap: Too many open files' >&2\nexit 1\n")
    fake.chmod(0o755)
    executor = LocalExecutor(str(tmp_path), search_path=(str(bindir),))
    with pytest.raises(ExecutorError, match=r"no file descriptor left .* bubblewrap is installed"):
        executor.unprotected()
    if not sandbox_available():
        return
    # the process out of descriptors to start it: a child with a limit just above what it holds
    script = (
        "import os, resource\n"
        "from rho_adapters.local import sandbox\n"
        "held = len(os.listdir('/proc/self/fd'))\n"
        "hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]\n"
        "resource.setrlimit(resource.RLIMIT_NOFILE, (held + 2, hard))\n"
        "try:\n"
        "    print(sandbox.probe('/usr/bin/bwrap'))\n"
        "except Exception as exc:\n"
        "    print(type(exc).__name__, exc)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=False
    )
    assert done.stdout.startswith("ExecutorError bubblewrap (/usr/bin/bwrap) could not be started")
    assert "ulimit -n, is" in done.stdout, done.stderr


async def test_restricted_commands_still_run_without_bwrap(tmp_path: Path, no_bwrap: str) -> None:
    (tmp_path / "a.txt").write_text("plain\n")
    executor = LocalExecutor(str(tmp_path), search_path=(no_bwrap,))
    result = await executor.run(Command(pipeline=(Stage(argv=("cat", "a.txt")),)))
    assert (result.exit_code, result.output) == (0, "plain\n")


@pytest.mark.skipif(not sandbox_available(), reason="bubblewrap not installed")
def test_no_notice_where_the_sandbox_works(tmp_path: Path) -> None:
    assert LocalExecutor(str(tmp_path)).unprotected() is None


def test_no_notice_for_an_unrestricted_shell(tmp_path: Path, no_bwrap: str) -> None:
    """Its commands never run in the sandbox: nothing is lost by its absence."""
    executor = LocalExecutor(str(tmp_path), allow_shell=True, search_path=(no_bwrap,))
    assert executor.unprotected() is None


def test_a_probe_started_ahead_is_the_one_the_executor_answers_with(
    tmp_path: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """``probe_ahead`` (what the CLI starts once a new session's profile is known) runs the
    bwrap probe in a thread while the caller goes on; the executor built afterwards waits for
    that probe's answer instead of starting bwrap again."""
    bindir = tmp_path_factory.mktemp("slow-bin")
    log, release = tmp_path / "bwrap.log", tmp_path / "release"
    fake = bindir / "bwrap"  # a bwrap that works once released, and says each time it is run
    fake.write_text(
        f"#!/bin/sh\necho run >> {log}\n"
        f"while [ ! -e {release} ]; do sleep 0.01; done\necho done >> {log}\nexit 0\n"
    )
    fake.chmod(0o755)
    os.symlink("/usr/bin/cat", bindir / "cat")
    # a caller that waited for the probe is freed after a while, and the check below fails
    freeing = threading.Timer(30, release.touch)
    freeing.start()
    try:
        probe_ahead((str(bindir),))
        returned_first = not release.exists()  # the probe cannot end before the release
        started = time.monotonic()
        while not log.exists() and time.monotonic() - started < 10:  # a wait, not a check
            time.sleep(0.01)
        release.touch()
    finally:
        freeing.cancel()
    assert returned_first, "the caller waited for the probe"
    assert log.exists(), "no probe was started ahead"
    executor = LocalExecutor(str(tmp_path), search_path=(str(bindir),))
    assert executor.unprotected() is None  # that bwrap works: nothing is lost
    assert log.read_text() == "run\ndone\n"  # one probe, the one started ahead
    probe_ahead((str(bindir),))  # probed already: nothing more
    assert LocalExecutor(str(tmp_path), search_path=(str(bindir),)).unprotected() is None
    assert log.read_text() == "run\ndone\n"


SESSIONS = """
import sys
from rho_domain.config import AgentConfig
from rho_domain.errors import ExecutorError
from rho_domain.permissions import readonly_profile
from rho_entry import wiring

config = AgentConfig(working_dir=sys.argv[1])
for _ in range(3):  # three sessions of one process
    wiring.build_executor(config, readonly_profile(), None, search_path=(sys.argv[2],))
print("built", flush=True)
"""


def test_a_process_says_it_once_at_its_first_session(tmp_path: Path, no_bwrap: str) -> None:
    """A script with no logging set up: logging's last resort prints the record on stderr."""
    done = subprocess.run(
        [sys.executable, "-c", SESSIONS, str(tmp_path), no_bwrap],
        capture_output=True,
        text=True,
        env={**os.environ, "RHO_AGENT_HOME": str(tmp_path / "home")},
        check=True,
    )
    assert done.stdout == "built\n"
    assert done.stderr.count(UNPROTECTED) == 1, done.stderr


def test_the_cli_prints_it_as_a_warning_line(
    tmp_path: Path, no_bwrap: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """``rho-agent`` (``main``) turns a record of the notice's logger into one warning line on
    stderr (the handler it installs for the length of a run), and removes it afterwards."""
    from rho_entry.cli.log_lines import WarningLine

    logger = logging.getLogger("rho_entry.sandbox")
    notice = LocalExecutor(str(tmp_path), search_path=(no_bwrap,)).unprotected()
    handlers = list(logger.handlers)
    assert main(["--version"]) == 0
    assert logger.handlers == handlers
    capsys.readouterr()
    line = WarningLine()
    logger.addHandler(line)
    try:
        logger.warning("%s", notice)
    finally:
        logger.removeHandler(line)
    assert capsys.readouterr().err == f"rho-agent: warning: {notice}\n"


def test_profiles_choose_whether_the_notice_matters(tmp_path: Path, no_bwrap: str) -> None:
    from rho_domain.config import AgentConfig
    from rho_entry import wiring

    config = AgentConfig(working_dir=str(tmp_path))
    restricted = wiring.build_executor(config, readonly_profile(), None, search_path=(no_bwrap,))
    developer = wiring.build_executor(config, developer_profile(), None, search_path=(no_bwrap,))
    assert isinstance(restricted, LocalExecutor)
    assert isinstance(developer, LocalExecutor)
    assert restricted.unprotected() == UNPROTECTED
    assert developer.unprotected() is None
