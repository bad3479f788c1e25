"""Credential files a configuration names, the ways redshell23 and probeshell23b left open
(redshell24).

Before redshell24, on every backend (bubblewrap, without it, Daytona):

* the configurations read were capped at 64 for the whole machine, and the cap failed open:
  a repository's ``.git/config`` with 62 ``include.path`` lines naming missing files used up
  the places before what ``~/.gitconfig`` includes was read, so the ``store --file`` that
  include names stayed readable (``cat notes.txt`` printed the token); past the cap,
  whatever was left unread was simply not judged;
* ``credential.plaintextStorePath`` (Git Credential Manager's plaintext store, a directory
  with a file per login, the password in clear) was not read, and a directory a
  configuration named was dropped as "no credential file": ``cat
  gcm-store/git/https/h.example/u.credential`` printed the password; one naming a directory
  holding the workspace (``.``) keeps its logins in ``./git/``;
* an ssh configuration's keys were not read: ``core.sshCommand = ssh -F ssh/cfg`` with
  ``IdentityFile deploy/access`` (or ``CertificateFile``, or in a configuration it
  ``Include``s, or in ``~/.ssh/config``, whose own directory is a secret but whose key may be
  anywhere) left ``cat deploy/access`` printing the private key.

Before probeshell24b, on every backend: a configuration past 1 MiB was skipped as if absent;
``IdentityFile==q.txt`` (ssh: ``=q.txt``) and a line split at a vertical tab were read
otherwise than ssh reads them; ``ssh -o IdentityFile=deploy/o/%h.txt`` made the literal
``%h`` name secret, not the key ssh loads. Locally, ``IdentityFile ${KEYDIR}/v.txt`` (ssh
fills the variable from its environment) matched one directory level only, and
``~user/`` named nothing.
"""

from __future__ import annotations

import os
import pwd
import subprocess
from pathlib import Path

import pytest
import pytest_asyncio
from shell_backends import (
    BACKENDS,
    DaytonaPool,
    call_tool,
    daytona_pool,
    restricted_bash,
    run_restricted,
)

from rho_adapters.daytona import DaytonaExecutor
from rho_adapters.local import LocalExecutor
from rho_adapters.local.ssh_named import ssh_named_secrets
from rho_domain.errors import ExecutorError
from rho_domain.tools.read import ReadHandler

MARK = "K-NAMED24-MARK"
ENV = {"PATH": "/usr/bin:/bin", "GIT_CONFIG_NOSYSTEM": "1"}
# GCM's plaintext store: STORE_PATH/NAMESPACE/SERVICE/ACCOUNT.credential
# what the ssh configurations name (-F ssh/cfg, what it includes, ~/.ssh/config)
KEYS = (
    "deploy/access", "deploy/cert.txt", "deploy/inc.txt", "deploy/home_inc.txt",
    "deploy/keys/h1.txt", "homekey/home.txt", "=q.txt", "deploy/o/h1.txt", "deploy/o/q.txt",
    "deploy/jump.txt",
)  # fmt: skip
VT_KEY = "v\v.txt"  # a command may not spell it: reached by a pattern (cat v?.txt)
NAMED_BY = {  # a file, and the configuration naming it (below the workspace's parent)
    "notes.txt": "home/creds.inc",
    "gcm-store/git/https/h.example/u.credential": "ws/.git/config",
    "deploy/access": "ws/ssh/cfg",
    "deploy/o/h1.txt": "ws/.git/config",
    "deploy/inc.txt": "ws/ssh/extra/a.conf",
    "homekey/home.txt": "home/.ssh/config",
}
STORES = ("gcm-store/git/https/h.example/u.credential", "git/https/w.example/u.credential")
ATTACKS = (
    "cat notes.txt",
    *(f"cat {path}" for path in (*STORES, *KEYS)),
    "grep -r K-NAMED24 .",
    "cat gcm-store/*/*/*/*",
    "cat v?.txt",
)


def _includes(count: int, prefix: str) -> str:
    return "[include]\n" + "".join(f"\tpath = {prefix}{at}.inc\n" for at in range(count))


@pytest.fixture(scope="module")
def trap(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A workspace and a home: what the home's configurations name is in the workspace."""
    base = tmp_path_factory.mktemp("named24")
    root, home = base / "ws", base / "home"
    home.mkdir()
    subprocess.run(["git", "init", "-q", str(root)], env=ENV, check=True)
    # 62 includes of missing files fill the repository's share (with config and
    # config.worktree: 64) and no more
    with (root / ".git/config").open("a") as config:
        config.write(_includes(62, "missing"))
        config.write("[credential]\n\tplaintextStorePath = gcm-store\n")
        config.write('[credential "https://w.example"]\n\tplaintextStorePath = .\n')
        # ssh fills %h in -o IdentityFile and reads its value as a configuration line
        config.write(
            "[core]\n\tsshCommand = ssh -F ssh/cfg -o IdentityFile=deploy/o/%h.txt"
            " -o 'IdentityFile \\\"deploy/o/q.txt\\\"'\n"
        )
    ssh = {
        "ssh/cfg": "Host *\n  IdentityFile deploy/access\n  CertificateFile=deploy/cert.txt\n"
        f"Include more.conf {root}/ssh/extra/*.conf\n"
        # ssh skips one "=" (the second is the name's) and splits lines at a newline alone
        'IdentityFile=\t"=q.txt"\nIdentityFile v\v.txt\n'
        "ProxyCommand ssh -i 'deploy/jump.txt' -W %h:%p jump\n",  # the jump host's key
        "ssh/extra/a.conf": '  identityfile "deploy/inc.txt"\n',
        "../home/.ssh/more.conf": "IdentityFile deploy/keys/%h.txt\n",
        "../home/.ssh/config": f"IdentityFile {root}/homekey/home.txt\nInclude {root}/ssh/h.conf\n",
        "ssh/h.conf": "IdentityFile = deploy/home_inc.txt\n",
    }
    for name, text in ssh.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    for key in (*KEYS, VT_KEY):
        (root / key).parent.mkdir(parents=True, exist_ok=True)
        (root / key).write_text(f"-----BEGIN OPENSSH PRIVATE KEY-----\n{MARK}-{key}\n")
    (home / ".gitconfig").write_text("[include]\n\tpath = creds.inc\n")
    (home / "creds.inc").write_text(f"[credential]\n\thelper = store --file={root}/notes.txt\n")
    (root / "notes.txt").write_text(f"https://u:{MARK}-store@h.example\n")
    for store in STORES:
        (root / store).parent.mkdir(parents=True)
        (root / store).write_text(f"{MARK}-gcm\nservice=https://h.example\n")
    (root / "plain.txt").write_text("plain words\n")
    return root, home


pool = pytest_asyncio.fixture(scope="module", loop_scope="module")(daytona_pool)


def _executor(
    backend: str, root: Path, home: Path, pool: DaytonaPool
) -> LocalExecutor | DaytonaExecutor:
    if backend == "daytona":
        return pool.get(str(root), (str(home),))
    env = {**ENV, "HOME": str(home)}
    return LocalExecutor(str(root), sandbox=backend == "bwrap", homes=(str(home),), base_env=env)


def test_git_reads_what_the_home_includes(trap: tuple[Path, Path]) -> None:
    root, home = trap
    env = {**ENV, "HOME": str(home)}
    asked = ["git", "config", "--get-all", "credential.helper"]
    done = subprocess.run(asked, cwd=root, env=env, capture_output=True, text=True, check=True)
    assert "notes.txt" in done.stdout, done
    seen = subprocess.run(["ssh", "-G", "-F", "ssh/cfg", "h1"], cwd=root, env=env,
                          capture_output=True, text=True, check=True).stdout  # fmt: skip
    command = subprocess.run(["git", "config", "core.sshCommand"], cwd=root, env=env,
                             capture_output=True, text=True, check=True).stdout.strip()  # fmt: skip
    seen += subprocess.run(["sh", "-c", f"{command} -G h1"], cwd=root, env=env,
                           capture_output=True, text=True, check=True).stdout  # fmt: skip
    keys = ("deploy/access", "deploy/inc.txt", "deploy/keys/%h.txt", "=q.txt", "v\v.txt")
    for key in (*keys, "deploy/o/%h.txt", "deploy/o/q.txt"):
        assert f"identityfile {key}\n" in seen, seen  # ssh reads what -F, -o name, includes
    assert "proxycommand ssh -i 'deploy/jump.txt' -W %h:%p jump\n" in seen, seen


@pytest.mark.asyncio(loop_scope="module")
@pytest.mark.parametrize("backend", BACKENDS)
async def test_no_tool_reads_what_a_configuration_names(
    trap: tuple[Path, Path], backend: str, pool: DaytonaPool
) -> None:
    root, home = trap
    executor = _executor(backend, root, home, pool)
    for command in ATTACKS:
        out = await call_tool(*restricted_bash(command), executor)
        assert MARK not in out, (command, out)
        if command.startswith("cat "):
            assert "secret location" in out, (command, out)
    for path in ("notes.txt", *STORES, *KEYS):
        out = await call_tool(ReadHandler(), {"path": path}, executor)
        assert out.startswith("SensitivePath"), out
    # each refusal names the configuration that named the file
    for path, by in NAMED_BY.items():
        out = await call_tool(*restricted_bash(f"cat {path}"), executor)
        assert f"(a credential file {{}}/{by} names)".format(root.parent) in out, out
    assert "plain words" in await call_tool(*restricted_bash("cat plain.txt"), executor)


@pytest.mark.asyncio(loop_scope="module")
async def test_more_configurations_than_the_cap_fail_closed(
    tmp_path: Path, pool: DaytonaPool
) -> None:
    # 70 includes: the repository's share cannot hold them; what the ones left unread
    # name is unknown, so no executor runs a command there, on any backend
    root = tmp_path / "ws"
    subprocess.run(["git", "init", "-q", str(root)], env=ENV, check=True)
    with (root / ".git/config").open("a") as config:
        config.write(_includes(70, "gone"))
    for sandbox in (False, True):
        with pytest.raises(ExecutorError, match=r"include more than 64 .*gone\d+\.inc the first"):
            LocalExecutor(str(root), sandbox=sandbox, homes=(), base_env=ENV)
    out = await run_restricted(str(root), "cat x", "daytona", pool)
    assert out.startswith("ExecutorError"), out
    assert "include more than 64" in out, out


@pytest.mark.asyncio(loop_scope="module")
async def test_a_configuration_past_the_bound_fails_closed(
    tmp_path: Path, pool: DaytonaPool
) -> None:
    # git and ssh read a configuration whole: a ~/.ssh/config or .git/config past 1 MiB was
    # skipped as if absent, so cat printed the key or the store its last line names
    root, home = tmp_path / "ws", tmp_path / "home"
    subprocess.run(["git", "init", "-q", str(root)], env=ENV, check=True)
    (root / "k.txt").write_text(f"{MARK}-big\n")
    filler = "#" * 1023 + "\n"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh/config").write_text(filler * 1024 + f"IdentityFile {root}/k.txt\n")
    env = {**ENV, "HOME": str(home)}
    with pytest.raises(ExecutorError, match=r"\.ssh/config is larger than 1048576 bytes"):
        LocalExecutor(str(root), sandbox=False, homes=(str(home),), base_env=env)
    out = await call_tool(*restricted_bash("cat k.txt"), pool.get(str(root), (str(home),)))
    assert out.startswith("ExecutorError"), out
    assert ".ssh/config is larger than" in out, out
    (home / ".ssh/config").unlink()
    with (root / ".git/config").open("a") as config:
        config.write(filler * 1024 + f"[credential]\n\thelper = store --file={root}/k.txt\n")
    with pytest.raises(ExecutorError, match=r"\.git/config is larger than 1048576 bytes"):
        LocalExecutor(str(root), sandbox=True, homes=(str(home),), base_env=env)
    out = await run_restricted(str(root), "cat k.txt", "daytona", pool)
    assert out.startswith("ExecutorError"), out
    assert ".git/config is larger than" in out, out


@pytest.mark.asyncio(loop_scope="module")
async def test_what_ssh_fills_from_this_machine_is_placed(tmp_path: Path) -> None:
    # ssh fills ${NAME} from its environment (a value may hold a /) and ~user/ from the
    # user database when it loads a key: the local executors' (Daytona's, from the
    # sandbox's: test_redteam_ssh_given_keys.py)
    root, home = tmp_path / "ws", tmp_path / "home"
    (root / "deep/er").mkdir(parents=True)
    (root / "deep/er/v.txt").write_text(f"{MARK}-var\n")
    (home / ".ssh").mkdir(parents=True)
    user = pwd.getpwuid(os.getuid())
    text = f"IdentityFile ${{KEYDIR}}/v.txt\nIdentityFile ~{user.pw_name}/.rho-probe-key\n"
    (home / ".ssh/config").write_text(text)
    env = {**ENV, "HOME": str(home), "KEYDIR": f"{root}/deep/er"}
    named = ssh_named_secrets([], [str(home)], str(home), [str(root)], env=env)
    assert (f"{user.pw_dir.rstrip('/')}/.rho-probe-key", f"{home}/.ssh/config") in named
    for sandbox in (False, True):
        executor = LocalExecutor(str(root), sandbox=sandbox, homes=(str(home),), base_env=env)
        out = await call_tool(*restricted_bash("cat deep/er/v.txt"), executor)
        assert "secret location" in out, out


@pytest.mark.asyncio(loop_scope="module")
async def test_the_keys_a_git_ssh_wrapper_gives_are_secrets(tmp_path: Path) -> None:
    # GIT_SSH (or GIT_SSH_COMMAND's first word) names a script that runs ssh with its own
    # -i: git runs it for every fetch, so its keys are as much secrets as sshCommand's
    root = tmp_path / "ws"
    (root / "bin").mkdir(parents=True)
    (root / "bin/gssh").write_text('#!/bin/sh\nexec /usr/bin/ssh -i deploy/w.txt "$@"\n')
    (root / "bin/gssh2").write_text('#!/bin/sh\nssh -o "IdentityFile deploy/w2.txt" "$@"\n')
    os.mkfifo(root / "bin/fifo")  # no executor waits on one
    for key in ("deploy/w.txt", "deploy/w2.txt"):
        (root / key).parent.mkdir(exist_ok=True)
        (root / key).write_text(f"{MARK}-wrapper\n")
    env = {**ENV, "HOME": str(tmp_path), "GIT_SSH": f"{root}/bin/gssh"}
    env["GIT_SSH_COMMAND"] = f"{root}/bin/gssh2 -v"
    for sandbox in (False, True):
        executor = LocalExecutor(str(root), sandbox=sandbox, homes=(), base_env=env)
        for key in ("deploy/w.txt", "deploy/w2.txt"):
            out = await call_tool(*restricted_bash(f"cat {key}"), executor)
            assert "(a credential file GIT_CONFIG_*, GIT_SSH or GIT_SSH_COMMAND in" in out, out
    env |= {"GIT_SSH": f"{root}/bin/fifo", "GIT_SSH_COMMAND": f"{root}/bin/fifo"}
    LocalExecutor(str(root), sandbox=False, homes=(), base_env=env)  # returns
