"""A write killed midway leaves the workspace as it was: no half file, no ``.rho-tmp`` name.

Before, create-only wrote straight into the target (``O_EXCL``), so an agent killed in the
middle (SIGKILL, the OOM killer, a full ``RLIMIT_FSIZE``) left a half-written file there, which
the next create-only write refused as existing; overwrite wrote a named temp file beside the
target, which stayed behind, and the next ``list`` or ``glob`` showed it. Now the data goes
into an unnamed file (``O_TMPFILE``) that gets its name only once whole (``files.py``).
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

# For each mode, a forked child writes 64 KiB under a 4 KiB RLIMIT_FSIZE: the kernel kills it
# with SIGXFSZ in the middle of the write (everything it runs is imported before). The parent
# reports how each child ended.
KILLED_WRITES = """
import asyncio, concurrent.futures.thread, json, os, resource, signal, sys
from rho_adapters.local import LocalExecutor
from rho_domain.permissions import FileWriteMode

root, ends = sys.argv[1], {}
for name, overwrite in (("new.txt", False), ("old.txt", True)):
    pid = os.fork()
    if pid == 0:
        executor = LocalExecutor(root, file_write=FileWriteMode.FULL)
        sys.dont_write_bytecode = True  # no bytecode file is cut short by the limit
        signal.signal(signal.SIGXFSZ, signal.SIG_DFL)  # Python ignores it: EFBIG, not a kill
        resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))
        asyncio.run(executor.write(name, b"n" * 65536, overwrite=overwrite))
        os._exit(0)
    ends[name] = os.waitpid(pid, 0)[1]
print(json.dumps(ends))
"""


def test_a_write_killed_midway_leaves_no_half_file_and_no_temp_name(tmp_path: Path) -> None:
    (tmp_path / "old.txt").write_text("old\n")

    done = subprocess.run(
        [sys.executable, "-c", KILLED_WRITES, str(tmp_path)],
        capture_output=True,
        text=True,
        check=False,
    )

    assert done.returncode == 0, done.stderr
    ends = json.loads(done.stdout)
    # the attack reached the write: each child died of the file-size signal, mid-write
    assert ends == {"new.txt": signal.SIGXFSZ, "old.txt": signal.SIGXFSZ}, done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["old.txt"]
    assert (tmp_path / "old.txt").read_text() == "old\n"


# The same kill where the filesystem has no O_TMPFILE (``unnamed`` says None): the named temp
# file the overwrite was filling stays behind.
KILLED_NAMED_WRITE = """
import asyncio, concurrent.futures.thread, os, resource, signal, sys
from rho_adapters import unnamed
from rho_adapters.local import LocalExecutor
from rho_domain.permissions import FileWriteMode

unnamed.unnamed = lambda dir_fd, mode: None
executor = LocalExecutor(sys.argv[1], file_write=FileWriteMode.FULL)
sys.dont_write_bytecode = True
signal.signal(signal.SIGXFSZ, signal.SIG_DFL)
resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))
asyncio.run(executor.write("old.txt", b"n" * 65536, overwrite=True))
"""


async def test_a_named_temp_a_killed_write_left_is_not_listed_or_globbed(tmp_path: Path) -> None:
    from rho_adapters.local import LocalExecutor

    (tmp_path / "old.txt").write_text("old\n")
    (tmp_path / ".kept.rho-tmp").write_text("a user's own name\n")
    done = subprocess.run(
        [sys.executable, "-c", KILLED_NAMED_WRITE, str(tmp_path)],
        capture_output=True,
        check=False,
    )
    assert done.returncode == -signal.SIGXFSZ, done.stderr
    left = [p.name for p in tmp_path.iterdir() if p.name.startswith(".old.txt.")]
    assert len(left) == 1, left  # the attack reached: the temp name is on disk
    executor = LocalExecutor(str(tmp_path))
    assert sorted(i.name for i in await executor.list_dir(".")) == [".kept.rho-tmp", "old.txt"]
    assert await executor.glob(".*") == (".kept.rho-tmp",)
    assert await executor.glob(f"{left[0][:8]}*") == ()
