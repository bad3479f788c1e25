"""Credential files the readonly walls missed until redshell26, on every backend (bubblewrap,
without it, Daytona): each was printed by ``cat`` before.

* Git Credential Manager's plaintext logins (``STORE/NAMESPACE/SCHEME/HOST/ACCOUNT.credential``)
  below a namespace deeper than two names (``credential.namespace = a/b/c``), one named by
  ``..`` or an absolute path (.NET's ``Path.Combine`` drops the store), a store no
  configuration this machine reads names (``GCM_PLAINTEXT_STORE_PATH``), an ``smtp`` login
  (``git send-email``): now hidden by the name GCM gives every login.
* Files a ``credential.helper`` reads that it names other than by ``--file``: a shell
  string (``!f() { cat .tokens/gh; }; f``), ``$(cat ...)``, a redirection, ``sh -c``, a
  program's operand or option value (``credential_helpers``).
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
import pytest_asyncio
from shell_backends import BACKENDS, DaytonaPool, call_tool, daytona_pool, restricted_bash

from rho_adapters.daytona import DaytonaExecutor
from rho_adapters.local import LocalExecutor
from rho_domain.tools.read import ReadHandler

MARK = "K-CRED26-MARK"
ENV = {"PATH": "/usr/bin:/bin", "GIT_CONFIG_NOSYSTEM": "1"}
LOGINS = (  # no configuration names a store holding these
    "a/b/c/https/w.example/u.credential",
    "x/y/z/w/v/http/w.example:8080/org/repo.git/u.credential",
    "notes/https/w.example/u.credential",  # credential.namespace = /abs/ws/notes
    "smtp/mail.example/me@mail.example.credential",
)
HELPERS = {  # credential.helper -> the file it reads
    "!f() { cat .tokens/gh; }; f": ".tokens/gh",
    "!echo password=$(cat deploy/token)": "deploy/token",
    "!sh -c 'cat deploy/t2; true'": "deploy/t2",
    "store <deploy/redirected": "deploy/redirected",
    "/opt/vault-helper deploy/role.json": "deploy/role.json",
    "aws-helper --profile-file=deploy/p.ini": "deploy/p.ini",
    "!cat `echo deploy/bq`": "deploy/bq",  # a backquoted word: read as words
    "!sh bin/cred.sh": "deploy/by-script",  # bin/cred.sh: cat deploy/by-script
    "!bin/outer get": "deploy/by-inner",  # bin/outer: exec bin/inner "$@", which cats it
}
SCRIPTS = {
    "bin/cred.sh": 'echo "password=$(cat deploy/by-script)"\n',
    "bin/outer": '#!/bin/sh\nexec bin/inner "$@"\n',
    "bin/inner": "#!/bin/sh\nT=deploy/by-inner\nprintf 'password=%s\\n' \"$(cat $T)\"\n",
}
pool = pytest_asyncio.fixture(scope="module", loop_scope="module")(daytona_pool)


@pytest.fixture(scope="module")
def trap(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A repository whose configuration names helpers reading files, and GCM logins."""
    root = tmp_path_factory.mktemp("cred26") / "ws"
    subprocess.run(["git", "init", "-q", str(root)], env=ENV, check=True)
    with (root / ".git/config").open("a") as config:
        for helper in HELPERS:
            quoted = helper.replace("\\", "\\\\").replace('"', '\\"')
            config.write(f'[credential "https://h{len(quoted)}.example"]\n\thelper = "{quoted}"\n')
    for login in LOGINS:
        (root / login).parent.mkdir(parents=True, exist_ok=True)
        (root / login).write_text(f"{MARK}-gcm\n")
    for path in HELPERS.values():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(f"{MARK}-helper\n")
    for script, text in SCRIPTS.items():
        (root / script).parent.mkdir(parents=True, exist_ok=True)
        (root / script).write_text(text)
    (root / "auth").mkdir()  # a directory named by a helper's word stays readable
    (root / "auth/plain.txt").write_text("plain words\n")
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
async def test_gcm_logins_are_hidden_whatever_namespace_or_store_holds_them(
    trap: Path, backend: str, pool: DaytonaPool
) -> None:
    executor = _executor(backend, trap, pool)
    for login in LOGINS:
        out = await call_tool(*restricted_bash(f"cat {login}"), executor)
        assert MARK not in out, (login, out)
        assert "*.credential" in out, (login, out)
        out = await call_tool(ReadHandler(), {"path": login}, executor)
        assert out.startswith("SensitivePath"), (login, out)
    for command in ("grep -r K-CRED26 a x notes smtp", "cat */*/*/*/*.credential"):
        out = await call_tool(*restricted_bash(command), executor)
        assert MARK not in out, (command, out)


@pytest.mark.asyncio(loop_scope="module")
@pytest.mark.parametrize("backend", BACKENDS)
async def test_no_tool_reads_a_file_a_credential_helper_command_names(
    trap: Path, backend: str, pool: DaytonaPool
) -> None:
    executor = _executor(backend, trap, pool)
    for helper, path in HELPERS.items():
        out = await call_tool(*restricted_bash(f"cat {path}"), executor)
        assert f"(a credential file {trap}/.git/config names)" in out, (helper, out)
        out = await call_tool(ReadHandler(), {"path": path}, executor)
        assert out.startswith("SensitivePath"), (helper, out)
    out = await call_tool(*restricted_bash("grep -r K-CRED26 deploy .tokens"), executor)
    assert MARK not in out, out
    assert "plain words" in await call_tool(*restricted_bash("cat auth/plain.txt"), executor)


@pytest.fixture(scope="module")
def relative_key(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A home whose ssh configuration names keys relative to where ssh runs, and a
    workspace holding such keys below subdirectories (ssh run there reads them)."""
    base = tmp_path_factory.mktemp("relkey26")
    root, home = base / "ws", base / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh/config").write_text(
        "Host *\n  IdentityFile keys/deploy.txt\n  CertificateFile ./certs/../c26.txt\n"
    )
    for key in RELATIVE_KEYS:
        (root / key).parent.mkdir(parents=True, exist_ok=True)
        (root / key).write_text(f"{MARK}-relative\n")
    (root / "svc/keys/readme.txt").write_text("plain words\n")
    return root, home


RELATIVE_KEYS = ("svc/keys/deploy.txt", "a/b/keys/deploy.txt", "keys/deploy.txt", "svc/c26.txt")


@pytest.mark.asyncio(loop_scope="module")
@pytest.mark.parametrize("backend", BACKENDS)
async def test_a_relative_identity_file_is_hidden_wherever_ssh_may_run(
    relative_key: tuple[Path, Path], backend: str, pool: DaytonaPool
) -> None:
    # ssh opens a relative IdentityFile from its working directory (strace: openat(AT_FDCWD,
    # "keys/deploy.txt")), not only from the repository's top where git runs it: `cd svc &&
    # ssh host` reads svc/keys/deploy.txt, which cat printed
    root, home = relative_key
    if backend == "daytona":
        executor: LocalExecutor | DaytonaExecutor = pool.get(str(root), (str(home),))
    else:
        env = {**ENV, "HOME": str(home)}
        executor = LocalExecutor(
            str(root), sandbox=backend == "bwrap", homes=(str(home),), base_env=env
        )
    for key in RELATIVE_KEYS:
        out = await call_tool(*restricted_bash(f"cat {key}"), executor)
        assert f"(a credential file {home}/.ssh/config names)" in out, (key, out)
        out = await call_tool(ReadHandler(), {"path": key}, executor)
        assert out.startswith("SensitivePath"), (key, out)
    for command in ("grep -r K-CRED26 .", "find . -type f -exec cat {} +", "cd svc && cat keys/*"):
        out = await call_tool(*restricted_bash(command), executor)
        assert MARK not in out, (command, out)
    assert "plain words" in await call_tool(*restricted_bash("cat svc/keys/readme.txt"), executor)
