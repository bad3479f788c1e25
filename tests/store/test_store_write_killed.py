"""A whole-file write killed midway leaves the old file and nothing else: a session's
``meta.json`` (``layout.write_atomic``) and the server's token file (``token_file``).

Before, each wrote a named temp file beside its target and renamed it over: a process killed
while writing (SIGKILL, the OOM killer, a full ``RLIMIT_FSIZE``) left that file for good, a
``.meta.json.PID.HEX.tmp`` in the session directory (``meta.json`` is rewritten with every
heartbeat) and, beside the token file, a copy of the token. Now the data goes into an unnamed
file that is named only once whole (``rho_adapters.unnamed``); tests/tools has the write tool's
twin (``test_write_killed_midway.py``).
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

from store_support import build_session

from rho_adapters.fakes import text
from rho_adapters.store import FileSessionStore

# Each forked child writes 64 KiB under a 4 KiB RLIMIT_FSIZE: the kernel kills it with
# SIGXFSZ in the middle of the write (everything it runs is imported before the limit).
KILLED_WRITES = """
import json, os, resource, signal, sys
from pathlib import Path
from rho_adapters.store.layout import write_atomic
from rho_entry.server.token_file import write_token

meta, home, ends = Path(sys.argv[1]), Path(sys.argv[2]), {}
writes = {
    "meta": lambda: write_atomic(meta, b"{}" + b" " * 65536),
    "token": lambda: write_token(home, "127.0.0.1", 1234, "t" * 65536),
}
for name, write in writes.items():
    pid = os.fork()
    if pid == 0:
        sys.dont_write_bytecode = True  # no bytecode file is cut short by the limit
        signal.signal(signal.SIGXFSZ, signal.SIG_DFL)  # Python ignores it: EFBIG, not a kill
        resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))
        write()
        os._exit(0)
    ends[name] = os.waitpid(pid, 0)[1]
print(json.dumps(ends))
"""


def test_a_whole_file_write_killed_midway_leaves_the_old_file_alone(tmp_path: Path) -> None:
    session = tmp_path / "sessions" / "abc"
    session.mkdir(parents=True)
    (session / "meta.json").write_text('{"old": true}')
    home = tmp_path / "home"
    (home / "server").mkdir(parents=True, mode=0o700)
    token = home / "server" / "127.0.0.1-1234.token"
    token.write_text("old\n")

    done = subprocess.run(
        [sys.executable, "-c", KILLED_WRITES, str(session / "meta.json"), str(home)],
        capture_output=True,
        text=True,
        check=False,
    )

    assert done.returncode == 0, done.stderr
    # the attack reached the writes: each child died of the file-size signal, mid-write
    assert json.loads(done.stdout) == {"meta": signal.SIGXFSZ, "token": signal.SIGXFSZ}
    assert [p.name for p in session.iterdir()] == ["meta.json"]
    assert (session / "meta.json").read_text() == '{"old": true}'
    assert [p.name for p in token.parent.iterdir()] == [token.name]
    assert token.read_text() == "old\n"


async def test_opening_a_session_removes_the_temp_files_a_killed_writer_left(
    tmp_path: Path,
) -> None:
    """Where a temp file was still named (an earlier version; a filesystem without
    O_TMPFILE), the next process to hold the session removes what a killed writer left."""
    store = FileSessionStore(tmp_path)
    session = build_session([text("done")], store=store, session_id="s1")
    async with session:
        await session.run("go", run_id="r1")
    left = [".meta.json.4242.0123456789ab.tmp", ".trace.jsonl.4242.0123456789ab.tmp"]
    for name in left:
        (tmp_path / "s1" / name).write_text("{")
    kept = tmp_path / "s1" / ".notes.tmp"  # not a name write_atomic makes
    kept.write_text("mine")

    await store.open("s1")
    await store.release("s1")

    assert sorted(p.name for p in (tmp_path / "s1").iterdir() if p.name.endswith(".tmp")) == [
        kept.name
    ]
