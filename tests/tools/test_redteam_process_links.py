"""A link into /proc or /dev names the files of whichever process follows it.

A workspace may hold ``here -> /proc/self/cwd`` (or ``/proc/thread-self``, ``/dev/fd``). The
local executor resolved a command's words in the agent's own process, where ``here`` is the
agent's directory: ``here/../outside/x.txt`` named nothing there, so it was not judged, while
``cat``, started in the workspace, read the file outside it; ``here/plain`` (a link to
``.env``) resolved to an ordinary path and ``cat`` printed the secret. Before redshell17
both leaked without bubblewrap (the sandbox showed neither; Daytona resolves in the
command's directory and refused them). Now a word whose lookup follows a link below /proc
or /dev is refused (``stage_reads.process_link``); a link to ``/dev/null`` still reads.

The same executor skipped a word once joined to the stage's directory it was longer than a
path may be (4,096 characters): ``cat ./././.../plain`` (a word of 4,077 characters) "named
nothing" and printed ``.env``, and ``grep -r MARK ./././.../../outside`` read outside the
workspace, without bubblewrap. A word is now looked up as the program looks it up, from its
directory (``stage_reads._names_something``).
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
import pytest_asyncio
from shell_backends import BACKENDS, DaytonaPool, call_tool, daytona_pool, run_restricted

from rho_adapters.local import LocalExecutor
from rho_domain.tools.grep import GrepHandler
from rho_domain.tools.listing import GlobHandler

MARKS = ("OUTSIDE-MARK-5", "SECRET-ENV-5")
ATTACKS = (
    "cat here/../outside/x.txt",
    "grep -r MARK here/../outside",
    "cat here/plain",
    "head -n 1 self/cwd/plain",
    "cat thread/cwd/plain",
    "cat fds/0 < notes.txt",
)


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("proclinks")
    (root / "outside").mkdir()
    (root / "outside/x.txt").write_text("OUTSIDE-MARK-5\n")
    ws = root / "ws"
    ws.mkdir()
    (ws / ".env").write_text("API_KEY=SECRET-ENV-5\n")
    (ws / "notes.txt").write_text("notes\n")
    for name, target in {
        "here": "/proc/self/cwd",
        "self": "/proc/self",
        "thread": "/proc/thread-self",
        "fds": "/dev/fd",
        "plain": ".env",
        "null": "/dev/null",
    }.items():
        (ws / name).symlink_to(target)
    plain = subprocess.run(
        "cat here/../outside/x.txt here/plain", shell=True, cwd=ws, capture_output=True, text=True
    )
    assert all(m in plain.stdout for m in MARKS), plain  # a plain cat reaches both marks
    return ws


# one Daytona sandbox per root for the module: a new one per command paid its set-up scripts
pool = pytest_asyncio.fixture(scope="module", loop_scope="module")(daytona_pool)


@pytest.mark.asyncio(loop_scope="module")
@pytest.mark.parametrize("backend", BACKENDS)
async def test_no_word_is_judged_through_a_link_into_proc(
    workspace: Path, backend: str, pool: DaytonaPool
) -> None:
    for command in ATTACKS:
        out = await run_restricted(str(workspace), command, backend, pool)
        assert [m for m in MARKS if m in out] == [], (command, out)
        if backend != "daytona":  # Daytona resolves in the command's directory: the usual refusal
            assert "which names the files of whichever process follows it" in out, (command, out)
        elif "fds" not in command:  # there /dev/fd/0 is the resolver's /dev/null
            assert "may not be read" in out, (command, out)
    out = await run_restricted(str(workspace), "cat notes.txt null", backend, pool)
    assert "notes" in out, out


# ./ repeated: a relative word a program opens (under 4,096 bytes), too long once joined.
PAD = "./" * 2036


@pytest.mark.asyncio(loop_scope="module")
@pytest.mark.parametrize("backend", BACKENDS)
async def test_a_long_word_is_judged_as_the_program_opens_it(
    workspace: Path, backend: str, pool: DaytonaPool
) -> None:
    assert len(str(workspace)) + 1 + len(PAD + "plain") > 4096
    plain = subprocess.run(["cat", PAD + "plain"], cwd=workspace, capture_output=True, text=True)
    assert "SECRET-ENV-5" in plain.stdout  # the kernel opens it
    for command in (f"cat {PAD}plain", f"grep -r MARK {PAD}../outside"):
        out = await run_restricted(str(workspace), command, backend, pool)
        assert [m for m in MARKS if m in out] == [], out[-300:]
        assert "may not be read" in out, out[-300:]


def _unreadable_process_link() -> str:
    """A link below /proc that lstat sees and readlink may not read (another process's root)."""
    for pid in ("1", "2"):
        try:
            os.readlink(f"/proc/{pid}/root")
        except PermissionError:
            return f"/proc/{pid}/root"
        except OSError:
            continue
    pytest.skip("every /proc/<pid>/root here is readable (a privileged process)")


@pytest.mark.asyncio(loop_scope="module")
@pytest.mark.parametrize("backend", BACKENDS)
async def test_a_link_to_another_process_root_is_no_crash(
    tmp_path: Path, backend: str, pool: DaytonaPool
) -> None:
    """A repository shipping ``one -> /proc/1/root``: the sandbox's walk for secrets resolved
    it with ``os.path.realpath``, whose readlink of ``/proc/1/root`` raised PermissionError
    (lstat had seen a link), so every command under bubblewrap, every walker without it
    (``grep -r``, ``rg``) and the grep and glob tools failed with a raw PermissionError."""
    (tmp_path / "one").symlink_to(_unreadable_process_link())
    (tmp_path / "notes.txt").write_text("hi MARK\n")
    for command in ("cat notes.txt", "grep -r MARK", "rg MARK"):
        out = await run_restricted(str(tmp_path), command, backend, pool)
        assert "notes.txt:hi MARK" in out or out.startswith("hi MARK"), (command, out)
    out = await run_restricted(str(tmp_path), "cat one/etc/hostname", backend, pool)
    assert "may not be read" in out or "Permission denied" in out, out
    if backend != "daytona":  # Daytona's tools run in the sandbox's own processes
        executor = LocalExecutor(str(tmp_path), sandbox=backend == "bwrap")
        for handler, arguments in (
            (GrepHandler(), {"pattern": "MARK"}),
            (GlobHandler(), {"pattern": "**"}),
        ):
            out = await call_tool(handler, arguments, executor)
            assert "notes.txt" in out, (arguments, out)
