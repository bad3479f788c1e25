"""The scripts a credential helper runs by a bare name, found on the ``PATH``, are read for
the files they name (redfiles28).

redshell26 read a helper's script when the helper named it by path (``!sh bin/cred.sh``);
one it runs by a bare name was not read, locally or on Daytona: ``!cred get`` (the shell
finds ``cred`` on the ``PATH``) and ``mystore``, which git runs as ``git credential-mystore``
(``git-credential-mystore`` on the ``PATH``), printed the token their script reads to
``cat``. Now each bare program a helper starts is looked up on the commands' ``PATH`` (every
match, as an ssh wrapper's bare name is) and its lines read as the helper's own.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from shell_backends import call_tool, restricted_bash

from rho_adapters.local import LocalExecutor
from rho_adapters.local.executor import sandbox_available
from rho_domain.tools.read import ReadHandler

MARK = "K-BARE28-MARK"
HELPERS = {  # credential.helper -> (the script on the PATH, the file it reads)
    "!cred get": ("cred", "deploy/by-shell"),
    "mystore": ("git-credential-mystore", "deploy/by-git"),
    "other --region x": ("git-credential-other", "deploy/by-git-args"),
}


@pytest.fixture(scope="module")
def trap(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    """A repository whose configuration names helpers by bare names, their scripts in a
    ``bin`` outside it on the ``PATH``, and the files they read."""
    base = tmp_path_factory.mktemp("bare28")
    root, bindir = base / "ws", base / "bin"
    env = {"PATH": f"{bindir}:/usr/bin:/bin", "GIT_CONFIG_NOSYSTEM": "1", "HOME": str(base)}
    subprocess.run(["git", "init", "-q", str(root)], env=env, check=True)
    bindir.mkdir()
    with (root / ".git/config").open("a") as config:
        for i, (helper, (script, path)) in enumerate(HELPERS.items()):
            config.write(f'[credential "https://h{i}.example"]\n\thelper = "{helper}"\n')
            (bindir / script).write_text(f'#!/bin/sh\necho "password=$(cat {path})"\n')
            (bindir / script).chmod(0o755)
            (root / path).parent.mkdir(parents=True, exist_ok=True)
            (root / path).write_text(f"{MARK}\n")
    (root / "deploy/readme.txt").write_text("plain words\n")
    return root, env


@pytest.mark.asyncio
@pytest.mark.parametrize(
    "sandbox",
    [
        pytest.param(True, marks=pytest.mark.skipif(not sandbox_available(), reason="no bwrap")),
        False,
    ],
)
async def test_a_helper_script_run_by_a_bare_name_is_read(
    trap: tuple[Path, dict[str, str]], sandbox: bool
) -> None:
    root, env = trap
    executor = LocalExecutor(str(root), sandbox=sandbox, homes=(str(root.parent),), base_env=env)
    for helper, (_, path) in HELPERS.items():
        out = await call_tool(*restricted_bash(f"cat {path}"), executor)
        assert MARK not in out, (helper, out)
        assert f"(a credential file {root}/.git/config names)" in out, (helper, out)
        out = await call_tool(ReadHandler(), {"path": path}, executor)
        assert out.startswith("SensitivePath"), (helper, out)
    assert MARK not in await call_tool(*restricted_bash("grep -r K-BARE28 deploy"), executor)
    assert "plain words" in await call_tool(*restricted_bash("cat deploy/readme.txt"), executor)


def test_a_bare_names_candidates_that_are_not_there_are_not_resolved(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A bare name is looked for on every ``PATH`` entry, and each candidate was resolved
    (``realpath``, an ``lstat`` a component) to tell a package's script, there or not: a new
    executor paid it for every entry, whenever git's configuration names a helper (this
    machine's /etc/gitconfig does). One not there is passed over; one there is still read."""
    import os

    from rho_adapters.local.ssh_named import wrapped

    resolved: list[str] = []
    realpath = os.path.realpath

    def counting(path: str, *args: object, **kwargs: object) -> str:
        resolved.append(path)
        return realpath(path)

    bindir = tmp_path / "bin"
    bindir.mkdir()
    (bindir / "git-credential-here").write_text("#!/bin/sh\ncat deploy/by-here\n")
    search = ":".join([*(f"{tmp_path}/none{i}" for i in range(6)), str(bindir)])
    monkeypatch.setattr(os.path, "realpath", counting)
    named = wrapped(["git-credential-here"], (str(tmp_path),), None, {"PATH": search}, helper=True)
    assert resolved == [str(bindir / "git-credential-here")]
    assert "by-here" in repr(named)
