"""The wrapper scripts git runs as ssh, read as the shell runs them (probeshell25b).

Before, on every backend (bubblewrap, without it, Daytona), with ``core.sshCommand = bin/gssh
-v``: a NUL byte in ``bin/gssh`` (the shell skips it) or comments padding it past 64 KiB
made it "a program", not read; an ssh line continued after a backslash, a key set in a
variable first, a second wrapper it runs (``exec bin/inner``), a Python wrapper's
``execvp("ssh", [..., "-i", key])``: each left ``cat`` of the key printing it.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
import pytest_asyncio
from shell_backends import BACKENDS, DaytonaPool, call_tool, daytona_pool, restricted_bash

from rho_adapters.daytona import DaytonaExecutor
from rho_adapters.fakes.daytona import FakeDaytona
from rho_adapters.local import LocalExecutor
from rho_domain.errors import ExecutorError
from rho_domain.permissions import FileWriteMode

MARK = "K-WRAPSH25-MARK"
ENV = {"PATH": "/usr/bin:/bin", "GIT_CONFIG_NOSYSTEM": "1"}
GSSH = (
    "#!/bin/sh\n#\0 a NUL byte the shell skips\nKEY=deploy/var.txt\n"
    '[ "$1" = -p ] && exec bin/inner "$@"\n'
    'exec "${SSH:-ssh}" \\\n  -i deploy/cont.txt -i "$KEY" "$@"\n'
)
INNER = '#!/bin/sh\nexec bin/pyssh "$@"\n'  # a wrapper running a wrapper
PYSSH = '#!/usr/bin/python3\nimport os\nos.execvp("ssh", ["ssh", "-i", "deploy/py.txt"])\n'
KEYS = ("deploy/var.txt", "deploy/cont.txt", "deploy/py.txt")

pool = pytest_asyncio.fixture(scope="module", loop_scope="module")(daytona_pool)


def _repository(root: Path, wrapper: str) -> Path:
    subprocess.run(["git", "init", "-q", str(root)], env=ENV, check=True)
    with (root / ".git/config").open("a") as config:
        config.write("[core]\n\tsshCommand = bin/gssh -v\n")
    (root / "bin").mkdir()
    for name, text in (("gssh", wrapper), ("inner", INNER), ("pyssh", PYSSH)):
        (root / "bin" / name).write_text(text)
    (root / "deploy").mkdir()
    for key in KEYS:
        (root / key).write_text(f"{MARK}-{key}\n")
    return root


def _executor(backend: str, root: Path, pool: DaytonaPool) -> LocalExecutor | DaytonaExecutor:
    if backend == "daytona":
        return pool.get(str(root), (str(root.parent),))
    env = {**ENV, "HOME": str(root.parent)}
    return LocalExecutor(
        str(root), sandbox=backend == "bwrap", homes=(str(root.parent),), base_env=env
    )


@pytest.mark.asyncio(loop_scope="module")
@pytest.mark.parametrize("backend", BACKENDS)
async def test_every_key_a_wrapper_gives_is_hidden(
    tmp_path_factory: pytest.TempPathFactory, backend: str, pool: DaytonaPool
) -> None:
    root = _repository(tmp_path_factory.mktemp("wrapsh25") / "ws", GSSH)
    executor = _executor(backend, root, pool)
    out = await call_tool(*restricted_bash(f"cat {' '.join(KEYS)}"), executor)
    assert f"(a credential file {root}/.git/config names)" in out, out
    for key in KEYS:
        out = await call_tool(*restricted_bash(f"cat {key}"), executor)
        assert out.startswith("SensitivePath"), (key, out)
    out = await call_tool(*restricted_bash("grep -r K-WRAPSH25 deploy"), executor)
    assert MARK not in out, out


@pytest.mark.asyncio(loop_scope="module")
@pytest.mark.parametrize("backend", BACKENDS)
async def test_a_wrapper_padded_past_the_bound_fails_closed(
    tmp_path_factory: pytest.TempPathFactory, backend: str, pool: DaytonaPool
) -> None:
    padded = '#!/bin/sh\nexec ssh -i deploy/var.txt "$@"\n' + "#" * (64 * 1024) + "\n"
    root = _repository(tmp_path_factory.mktemp("wrapbig25") / "ws", padded)
    refusal = f"the script {root}/bin/gssh, which git runs as ssh, is larger than 65536 bytes"
    try:
        out = await call_tool(
            *restricted_bash("cat deploy/var.txt"), _executor(backend, root, pool)
        )
    except ExecutorError as exc:  # the local executors refuse when made
        out = str(exc)
    assert refusal in out, out
    assert MARK not in out, out


@pytest.mark.asyncio(loop_scope="module")
@pytest.mark.parametrize("backend", BACKENDS)
async def test_a_bare_wrapper_found_on_a_relative_search_path_is_read(
    tmp_path_factory: pytest.TempPathFactory, backend: str
) -> None:
    # core.sshCommand = gssh -v with PATH=:bin:/usr/bin: the shell git runs it with finds
    # gssh at the repository's top (the empty entry) or in bin/ (a relative one); the
    # lookup searched the agent's own directory (shutil.which) or skipped what command -v
    # answered relative, and cat printed the keys
    root = tmp_path_factory.mktemp("wrappath25") / "ws"
    subprocess.run(["git", "init", "-q", str(root)], env=ENV, check=True)
    with (root / ".git/config").open("a") as config:
        config.write("[core]\n\tsshCommand = gssh -v\n")
    (root / "bin").mkdir()
    (root / "gssh").write_text('exec ssh -i deploy/var.txt "$@"\n')
    (root / "bin/gssh").write_text('exec ssh -i deploy/cont.txt "$@"\n')
    # a wrapper named ssh: left out as "ssh itself", though bin/ssh is the repository's
    (root.parent / ".gitconfig").write_text("[core]\n\tsshCommand = bin/ssh -v\n")
    (root / "bin/ssh").write_text('exec /usr/bin/ssh -i deploy/py.txt "$@"\n')
    (root / "deploy").mkdir()
    for key in KEYS:
        (root / key).write_text(f"{MARK}-{key}\n")
    env = {**ENV, "PATH": ":bin:/usr/bin:/bin", "HOME": str(root.parent)}
    executor: LocalExecutor | DaytonaExecutor
    if backend == "daytona":
        fake = FakeDaytona(polls_until_started=0)
        settings = fake.settings(working_dir=str(root), env=env)
        executor = DaytonaExecutor(
            settings,
            file_write=FileWriteMode.OFF,
            transport=fake.transport,
            homes=(str(root.parent),),
        )
    else:
        executor = LocalExecutor(
            str(root), sandbox=backend == "bwrap", homes=(str(root.parent),), base_env=env
        )
    try:
        for key, by in zip(KEYS, (".git/config", ".git/config", "../.gitconfig"), strict=True):
            out = await call_tool(*restricted_bash(f"cat {key}"), executor)
            assert f"(a credential file {os.path.normpath(root / by)} names)" in out, (key, out)
    finally:
        if isinstance(executor, DaytonaExecutor):
            await executor.aclose()


@pytest.mark.asyncio(loop_scope="module")
@pytest.mark.parametrize("backend", BACKENDS)
async def test_the_scripts_a_command_string_runs_are_read(
    tmp_path_factory: pytest.TempPathFactory, backend: str, pool: DaytonaPool
) -> None:
    # a shell's command string (sh -c '...'), an ssh option's (-o 'ProxyCommand=bin/jump
    # %h %p') and an ssh configuration's ProxyCommand running a script: each was one word
    # or not read as a wrapper, and cat printed the key
    base = tmp_path_factory.mktemp("wrapcmd25")
    root, home = base / "ws", base / "home"
    subprocess.run(["git", "init", "-q", str(root)], env=ENV, check=True)
    with (root / ".git/config").open("a") as config:
        config.write("[core]\n\tsshCommand = sh -c 'exec ssh -i deploy/shc.txt \\\"$@\\\"' --\n")
    (home / ".ssh").mkdir(parents=True)
    (home / ".gitconfig").write_text("[core]\n\tsshCommand = ssh -o 'ProxyCommand=bin/jump %h'\n")
    (home / ".ssh/config").write_text(f"Host *\n  ProxyCommand {root}/bin/hop %h\n")
    (root / "bin").mkdir()
    (root / "bin/jump").write_text('exec ssh -i deploy/jump.txt -W "$1:22" bastion\n')
    (root / "bin/hop").write_text('exec ssh -i deploy/hop.txt -W "$1:22" bastion\n')
    (root / "deploy").mkdir()
    named = {"shc.txt": root / ".git/config", "jump.txt": home / ".gitconfig"}
    named["hop.txt"] = home / ".ssh/config"
    for key in named:
        (root / "deploy" / key).write_text(f"{MARK}-{key}\n")
    if backend == "daytona":
        executor: LocalExecutor | DaytonaExecutor = pool.get(str(root), (str(home),))
    else:
        env = {**ENV, "HOME": str(home)}
        executor = LocalExecutor(
            str(root), sandbox=backend == "bwrap", homes=(str(home),), base_env=env
        )
    for key, by in named.items():
        out = await call_tool(*restricted_bash(f"cat deploy/{key}"), executor)
        assert f"(a credential file {by} names)" in out, (key, out)
