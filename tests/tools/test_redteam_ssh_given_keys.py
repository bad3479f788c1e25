"""The keys ssh is given the ways redshell24 left open (redshell25).

Before redshell25, on every backend (bubblewrap, without it, Daytona): ``GIT_SSH`` and
``GIT_SSH_COMMAND``'s first word were read as wrapper scripts (locally), but a
configuration's ``core.sshCommand`` naming one was not: with ``core.sshCommand = bin/gssh
-v`` in ``.git/config`` and ``bin/gssh`` running ``exec ssh -i deploy/c.txt "$@"``, ``cat
deploy/c.txt`` printed the key git's fetches load; so did ``sh $HOME/wrap/hssh`` in
``~/.gitconfig`` (a script without ``#!``, run by the shell git gives the command to).
"""

from __future__ import annotations

import os
import pwd
import subprocess
from pathlib import Path

import pytest
import pytest_asyncio
from shell_backends import BACKENDS, DaytonaPool, call_tool, daytona_pool, restricted_bash

from rho_adapters.daytona import DaytonaExecutor
from rho_adapters.fakes.daytona import FakeDaytona
from rho_adapters.local import LocalExecutor
from rho_domain.permissions import FileWriteMode
from rho_domain.tools.read import ReadHandler

MARK = "K-WRAP25-MARK"
ENV = {"PATH": "/usr/bin:/bin", "GIT_CONFIG_NOSYSTEM": "1"}
NAMED_BY = {"deploy/c.txt": "ws/.git/config", "deploy/h.txt": "home/.gitconfig"}

LOGINS = (  # GCM's: STORE/NAMESPACE/SCHEME/HOST[/PATH...]/ACCOUNT.credential
    "team/https/w.example/u.credential",
    "git/https/w.example/u.credential",
    "proj/https/w.example/org/repo.git/u.credential",
    "a/b/https/w.example/u.credential",
    "https/w.example/u.credential",
)
pool = pytest_asyncio.fixture(scope="module", loop_scope="module")(daytona_pool)


@pytest.fixture(scope="module")
def trap(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A repository whose configuration runs a wrapper as ssh, and a home whose does too."""
    base = tmp_path_factory.mktemp("wrap25")
    root, home = base / "ws", base / "home"
    subprocess.run(["git", "init", "-q", str(root)], env=ENV, check=True)
    with (root / ".git/config").open("a") as config:
        config.write("[core]\n\tsshCommand = bin/gssh -v\n")
    (home / "wrap").mkdir(parents=True)
    (home / ".gitconfig").write_text("[core]\n\tsshCommand = sh $HOME/wrap/hssh\n")
    (root / "bin").mkdir()
    (root / "bin/gssh").write_text('#!/bin/sh\nexec /usr/bin/ssh -i deploy/c.txt "$@"\n')
    (home / "wrap/hssh").write_text(f'ssh -o IdentityFile={root}/deploy/h.txt "$@"\n')
    (root / "deploy").mkdir()
    for key in NAMED_BY:
        (root / key).write_text(f"{MARK}-{key}\n")
    (root / "plain.txt").write_text("plain words\n")
    return root, home


def _executor(
    backend: str, root: Path, home: Path, pool: DaytonaPool
) -> LocalExecutor | DaytonaExecutor:
    if backend == "daytona":
        return pool.get(str(root), (str(home),))
    env = {**ENV, "HOME": str(home)}
    return LocalExecutor(str(root), sandbox=backend == "bwrap", homes=(str(home),), base_env=env)


@pytest.mark.asyncio(loop_scope="module")
@pytest.mark.parametrize("backend", BACKENDS)
async def test_no_tool_reads_the_key_a_configured_ssh_wrapper_gives(
    trap: tuple[Path, Path], backend: str, pool: DaytonaPool
) -> None:
    root, home = trap
    executor = _executor(backend, root, home, pool)
    for path, by in NAMED_BY.items():
        out = await call_tool(*restricted_bash(f"cat {path}"), executor)
        assert f"(a credential file {root.parent}/{by} names)" in out, out
        assert MARK not in out, out
        out = await call_tool(ReadHandler(), {"path": path}, executor)
        assert out.startswith("SensitivePath"), out
    out = await call_tool(*restricted_bash("grep -r K-WRAP25 ."), executor)
    assert MARK not in out, out
    assert "plain words" in await call_tool(*restricted_bash("cat plain.txt"), executor)


@pytest.mark.asyncio(loop_scope="module")
async def test_what_ssh_fills_in_the_sandbox_is_placed(tmp_path: Path) -> None:
    # the sandbox's environment (the daemon's: a user's git and ssh run in it) and user
    # database, as the local executors fill them from this machine's
    root, home = tmp_path / "ws", tmp_path / "home"
    (root / "deep/er").mkdir(parents=True)
    (root / "deep/er/v.txt").write_text(f"{MARK}-var\n")
    (home / ".ssh").mkdir(parents=True)
    user = pwd.getpwuid(os.getuid())
    text = f"IdentityFile ${{KEYDIR}}/v.txt\nIdentityFile ~{user.pw_name}/rho-probe25-key\n"
    (home / ".ssh/config").write_text(text)
    # GIT_SSH and GIT_SSH_COMMAND in the sandbox's environment: its git runs them
    (root / "bin").mkdir()
    (root / "bin/gssh").write_text('#!/bin/sh\nexec ssh -i deploy/e1.txt "$@"\n')
    (root / "deploy").mkdir()
    for key in ("e1.txt", "e2.txt"):
        (root / "deploy" / key).write_text(f"{MARK}-env\n")
    env = {
        "KEYDIR": f"{root}/deep/er",
        "GIT_SSH": f"{root}/bin/gssh",
        "GIT_SSH_COMMAND": "ssh -o IdentityFile=deploy/e2.txt",
    }
    fake = FakeDaytona(polls_until_started=0)
    settings = fake.settings(working_dir=str(root), env=env)
    executor = DaytonaExecutor(
        settings, file_write=FileWriteMode.OFF, transport=fake.transport, homes=(str(home),)
    )
    try:
        out = await call_tool(*restricted_bash("cat deep/er/v.txt"), executor)
        assert f"(a credential file {home}/.ssh/config names)" in out, out
        assert MARK not in out, out
        for key in ("e1.txt", "e2.txt"):
            out = await call_tool(*restricted_bash(f"cat deploy/{key}"), executor)
            assert "GIT_SSH or GIT_SSH_COMMAND in the sandbox's environment" in out, out
        # a key in another's home (no file to cat here): named by the configuration
        refusal = executor.policy.refusal(f"{user.pw_dir.rstrip('/')}/rho-probe25-key")
        assert f"(a credential file {home}/.ssh/config names)" in (refusal or ""), refusal
    finally:
        await executor.aclose()


@pytest.mark.asyncio(loop_scope="module")
@pytest.mark.parametrize("backend", BACKENDS)
async def test_a_gcm_store_holding_the_workspace_hides_every_namespace(
    tmp_path_factory: pytest.TempPathFactory, backend: str, pool: DaytonaPool
) -> None:
    # GCM keeps a login at STORE/NAMESPACE/SCHEME/HOST/ACCOUNT.credential; a store holding
    # the workspace had only its default namespace, git/, hidden: credential.namespace =
    # team (or GCM_NAMESPACE) left team/https/... readable
    root = tmp_path_factory.mktemp("gcm25") / "ws"
    subprocess.run(["git", "init", "-q", str(root)], env=ENV, check=True)
    with (root / ".git/config").open("a") as config:
        config.write("[credential]\n\tplaintextStorePath = .\n\tnamespace = team\n")
    # probeshell25b: a login below the host (credential.useHttpPath: the URL's path), a
    # namespace of two names (credential.namespace = a/b), none (an empty namespace) were
    # found by no shape: cat printed each
    for login in LOGINS:
        (root / login).parent.mkdir(parents=True, exist_ok=True)
        (root / login).write_text(f"{MARK}-gcm\n")
    (root / "api/http").mkdir(parents=True)  # a project's own directory of that name
    (root / "api/http/routes.txt").write_text("plain routes\n")
    executor = _executor(backend, root, root.parent, pool)
    out = await call_tool(*restricted_bash(f"cat {' '.join(LOGINS)}"), executor)
    assert f"(a credential file {root}/.git/config names)" in out, out
    for login in LOGINS:
        out = await call_tool(*restricted_bash(f"cat {login}"), executor)
        assert f"(a credential file {root}/.git/config names)" in out, (login, out)
    assert "plain routes" in await call_tool(*restricted_bash("cat api/http/routes.txt"), executor)
