"""Secrets redshell23's link and git-configuration rules missed by one step (probeshell23b).

Before probeshell23b:

* Daytona read a secret-named link's text lexically, one hop: with ``.env.local ->
  chain/a.txt -> b.txt`` and ``.env.production -> cfgdir/prod2.conf`` (``cfgdir ->
  realcfg``), ``cat chain/b.txt``, ``cat realcfg/prod2.conf``, ``grep -r`` and the read tool
  printed them (the local scans resolve every link on the way and held);
* locally a hard link of such a target was no alias: with ``.env -> env/prod.conf`` (or
  ``.ssh -> keys``), ``ln env/prod.conf copy.txt`` (``ln keys/k copy2``) gave the secret to
  ``cat copy.txt`` without bubblewrap and to the read tool on both (the sandbox's own scan
  hid it);
* a repository nested below the workspace (another clone in ``sub/``) had its configuration
  read by no finder: ``credential.helper 'store --file=notes.txt'`` there kept the token
  readable by ``cat sub/notes.txt`` (and its hard link ``notes-copy``), ``grep -r``, the
  read tool and, once committed there, ``git show HEAD:notes.txt`` and ``git log -p`` in
  ``sub`` on every backend; and a submodule's (``.git/modules/lib/sm/config`` naming
  ``lib/sm/sm-notes.txt``) on Daytona and through the sandbox alone.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
import pytest_asyncio
from shell_backends import BACKENDS, DaytonaPool, call_tool, daytona_pool, run_restricted

from rho_adapters.local import LocalExecutor
from rho_adapters.local.executor import sandbox_available
from rho_domain.tools.read import ReadHandler

MARK = "K-STEP-MARK"
SECRETS = [
    *("chain/b.txt", "realcfg/prod2.conf", "copy.txt", "copy2", "notes-copy", "sub/notes.txt"),
    "lib/sm/sm-notes.txt",  # a submodule's: its configuration is .git/modules/lib/sm/config
]
LINKED = {"copy.txt": "env/prod.conf", "copy2": "keys/k", "notes-copy": "sub/notes.txt"}
ATTACKS = [
    *(f"cat {path}" for path in SECRETS),
    *("cd sub && cat notes.txt", "grep -r K-STEP ."),
    *("cd sub && git show HEAD:notes.txt", "cd sub && git log -p"),
]


@pytest.fixture(scope="module")
def ws(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("steps") / "ws"
    for path in (*SECRETS, *LINKED.values()):
        if path not in LINKED:
            (root / path).parent.mkdir(parents=True, exist_ok=True)
            (root / path).write_text(f"https://u:{MARK}-{path}@h.example\n")
    (root / "chain/a.txt").symlink_to("b.txt")
    (root / ".env.local").symlink_to("chain/a.txt")
    (root / "cfgdir").symlink_to("realcfg")
    (root / ".env.production").symlink_to("cfgdir/prod2.conf")
    (root / ".env").symlink_to("env/prod.conf")
    (root / ".ssh").symlink_to("keys")
    for name, target in LINKED.items():
        os.link(root / target, root / name)
    env = {"PATH": "/usr/bin:/bin", "HOME": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1"}
    subprocess.run(["git", "init", "-q"], cwd=root, env=env, check=True)
    subprocess.run(["git", "init", "-q", "sub"], cwd=root, env=env, check=True)
    module = ["git", "init", "-q", f"--separate-git-dir={root}/.git/modules/lib/sm", "lib/sm"]
    (root / ".git/modules/lib").mkdir(parents=True)
    subprocess.run(module, cwd=root, env=env, check=True)  # as git submodule add lays it out
    with (root / ".git/modules/lib/sm/config").open("a") as config:
        config.write("[credential]\n\thelper = store --file=sm-notes.txt\n")
    with (root / "sub/.git/config").open("a") as config:
        config.write("[credential]\n\thelper = store --file=notes.txt\n")
    commit = ["git", "-c", "user.name=u", "-c", "user.email=u@h", "commit", "-qm", "notes"]
    subprocess.run(["git", "add", "notes.txt"], cwd=root / "sub", env=env, check=True)
    subprocess.run(commit, cwd=root / "sub", env=env, check=True)  # its history holds it too
    (root / "plain.txt").write_text("plain words\n")
    return root


pool = pytest_asyncio.fixture(scope="module", loop_scope="module")(daytona_pool)


def test_the_files_hold_the_secrets(ws: Path) -> None:
    assert MARK in (ws / ".env.local").read_text()
    assert MARK in (ws / ".env.production").read_text()
    for name, target in LINKED.items():
        assert (ws / name).stat().st_ino == (ws / target).stat().st_ino


@pytest.mark.asyncio(loop_scope="module")
@pytest.mark.parametrize("backend", BACKENDS)
async def test_no_tool_reads_them(ws: Path, backend: str, pool: DaytonaPool) -> None:
    for command in ATTACKS:
        out = await run_restricted(str(ws), command, backend, pool)
        assert MARK not in out, (command, out)
        if "cat " in command or " show " in command:
            assert out.startswith("SensitivePath"), (command, out)
    plain = await run_restricted(str(ws), "cat plain.txt", backend, pool)
    assert "plain words" in plain, plain
    executor = pool.get(str(ws)) if backend == "daytona" else LocalExecutor(str(ws))
    for path in SECRETS:
        out = await call_tool(ReadHandler(), {"path": path}, executor)
        assert out.startswith("SensitivePath"), (path, out)


@pytest.mark.asyncio
@pytest.mark.skipif(not sandbox_available(), reason="bubblewrap not installed")
async def test_the_sandbox_alone_hides_them(ws: Path) -> None:
    executor = LocalExecutor(str(ws), sandbox=True)
    script = f"cat {' '.join(SECRETS)}; grep -r K-STEP .; cat plain.txt"
    result = await executor.run_unchecked(["/bin/bash", "-c", script])
    assert MARK not in result.output, result.output
    assert "plain words" in result.output, result.output
