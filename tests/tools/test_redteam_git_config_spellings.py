"""A credential file a git configuration names is a secret however the configuration spells
it (probeshell23b).

redshell23 made every file a configuration names for credentials a secret location, but read
the configuration its own way, and git reads it differently (``git config --list`` is the
oracle). Before probeshell23b, on bubblewrap, without it and on Daytona, ``cat`` printed each
of these files, which git does use: a configuration starting with a UTF-8 BOM (its first
section lost), a ``\\`` ending a comment (the next entry joined to the comment), a form feed
inside a value (``str.splitlines`` broke the line there and put the entries below it in the
section the rest of the line spelled), a ``]`` in a quoted subsection, a ``--file`` abbreviated
(``--fi=x``, ``--f x``: git's option parser takes any unique start), ``$HOME`` in a helper's
command line (the shell expands it), ssh flags run together (``-vi key``) and its ``%d``
(the home: ``-i %d/key``), contrib's netrc helper's ``-f file``, an SSH signing key given
without ``./``, and a relative name in the user's own ``.gitconfig`` (git runs the
helper at the top of the repository, not in the home). Locally also what a ``~/.gitconfig``
that is a link (``-> dotfiles/gitconfig``) includes by a relative name (git places it by the
link's directory; the finder placed it by the target's), and the configuration the
environment gives (``GIT_CONFIG_COUNT``, ``GIT_CONFIG_PARAMETERS``, ``GIT_CONFIG_GLOBAL``,
``GIT_SSH_COMMAND``).
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
import pytest_asyncio
from shell_backends import BACKENDS, DaytonaPool, call_tool, daytona_pool, restricted_bash

from rho_adapters.local import LocalExecutor
from rho_adapters.local.executor import sandbox_available
from rho_domain.git_named_files import named_in
from rho_domain.ports.executor import Executor
from rho_domain.tools.read import ReadHandler

MARK = "K-SPELLED-MARK"
ENV = {"PATH": "/usr/bin:/bin", "GIT_CONFIG_NOSYSTEM": "1"}
CONFIG = (
    "\ufeff[credential]\n"
    "\thelper = cache ; a comment \\\n"
    "\thelper = store --fi=s-comment.txt\n"
    '[credential "https://h]x"] helper = store --f s-bracket.txt\n'
    "[core]\n"
    "\tx = a\x0c[http]\n"
    "\tsshCommand = ssh -vi s-ssh-ident -o IdentityFile=%d/../ws/s-tokened\n"
    "[user]\n"
    "\tsigningKey = sign/s-sign-ident\n"
    "[credential]\n"
    "\thelper = store --file=${HOME}/../ws/s-home.txt\n"
    "\thelper = netrc -f s-netrc.txt\n"
)
# ~/.gitconfig, a link to dotfiles/gitconfig: git places its include by the link's directory
GLOBAL = "[credential]\n\thelper = store --file=s-global.txt\n[include]\n\tpath = extra.inc\n"
INCLUDED = "[credential]\n\thelper = store --file=s-included.txt\n"
SPELLED = [
    *("s-comment.txt", "s-bracket.txt", "s-ssh-ident", "sign/s-sign-ident", "s-home.txt"),
    *("s-netrc.txt", "s-tokened"),
]
NAMED = [*SPELLED, "s-global.txt", "s-included.txt"]
# what the environment gives (local only: the user's git runs in the agent's environment)
BY_ENV = {
    "GIT_CONFIG_COUNT": "1",
    "GIT_CONFIG_KEY_0": "Credential.https://e.helper",
    "GIT_CONFIG_VALUE_0": "store --file=e-count.txt",
    "GIT_CONFIG_PARAMETERS": "'credential.helper'='store --file=e-params.txt'",
    "GIT_SSH_COMMAND": "ssh -oIdentityFile=e-ssh-ident",
}
ENV_NAMED = ["e-count.txt", "e-params.txt", "e-ssh-ident", "e-global.txt"]


@pytest.fixture(scope="module")
def ws(tmp_path_factory: pytest.TempPathFactory) -> Path:
    top = tmp_path_factory.mktemp("gitspelled")
    root, home = top / "ws", top / "home"
    root.mkdir()
    home.mkdir()
    (home / "dotfiles").mkdir()
    (home / "dotfiles/gitconfig").write_text(GLOBAL)
    (home / ".gitconfig").symlink_to("dotfiles/gitconfig")
    (home / "extra.inc").write_text(INCLUDED)
    (home / "alt.gitconfig").write_text("[credential]\n\thelper = store --file=e-global.txt\n")
    subprocess.run(["git", "init", "-q"], cwd=root, env=ENV, check=True)
    (root / ".git/config").write_text(CONFIG, encoding="utf-8")
    for name in (*NAMED, *ENV_NAMED):  # the environment's own mark: the other tests see them
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        mark = "K-ENV-MARK" if name in ENV_NAMED else MARK
        (root / name).write_text(f"https://u:{mark}-{name}@h.example\n")
    (root / "plain.txt").write_text("plain words\n")
    return root


pool = pytest_asyncio.fixture(scope="module", loop_scope="module")(daytona_pool)


def test_git_reads_every_spelling(ws: Path) -> None:
    env = {**ENV, "HOME": str(ws.parent / "home")}
    listed = subprocess.run(["git", "config", "--list"], cwd=ws, env=env,
                            capture_output=True, text=True, check=True).stdout  # fmt: skip
    for value in ("--fi=s-comment.txt", "--f s-bracket.txt", "-vi s-ssh-ident", "s-global"):
        assert value in listed, (value, listed)
    assert "user.signingkey=sign/s-sign-ident" in listed, listed
    assert "helper=store --file=s-included.txt" in listed, listed
    env = {**env, **BY_ENV, "GIT_CONFIG_GLOBAL": str(ws.parent / "home/alt.gitconfig")}
    listed = subprocess.run(["git", "config", "--list"], cwd=ws, env=env,
                            capture_output=True, text=True, check=True).stdout  # fmt: skip
    for value in ("e-count.txt", "e-params.txt", "e-global.txt"):
        assert value in listed, (value, listed)


def _executor(ws: Path, backend: str, pool: DaytonaPool) -> Executor:
    home = str(ws.parent / "home")
    if backend == "daytona":
        return pool.get(str(ws), homes=(home,))
    return LocalExecutor(str(ws), sandbox=backend == "bwrap", homes=(home,))


@pytest.mark.asyncio(loop_scope="module")
@pytest.mark.parametrize("backend", BACKENDS)
async def test_no_spelling_hides_a_named_file(ws: Path, backend: str, pool: DaytonaPool) -> None:
    executor = _executor(ws, backend, pool)
    for name in NAMED:
        out = await call_tool(*restricted_bash(f"cat {name}"), executor)
        assert out.startswith("SensitivePath"), (name, out)
        assert "secret location" in out, (name, out)
    out = await call_tool(*restricted_bash("grep -r K-SPELLED . ; cat plain.txt"), executor)
    assert MARK not in out, out
    assert "plain words" in out, out
    out = await call_tool(ReadHandler(), {"path": "s-bracket.txt"}, executor)
    assert out.startswith("SensitivePath"), out


@pytest.mark.asyncio
@pytest.mark.parametrize("sandbox", [pytest.param(True, id="bwrap"), False])
async def test_the_environments_configuration_names_secrets(ws: Path, sandbox: bool) -> None:
    if sandbox and not sandbox_available():
        pytest.skip("bubblewrap not installed")
    alt = str(ws.parent / "home/alt.gitconfig")
    env = {**BY_ENV, "HOME": str(ws.parent / "home"), "GIT_CONFIG_GLOBAL": alt}
    executor = LocalExecutor(str(ws), sandbox=sandbox, base_env=env)
    for name in ENV_NAMED:
        out = await call_tool(*restricted_bash(f"cat {name}"), executor)
        assert out.startswith("SensitivePath"), (name, out)
    out = await call_tool(*restricted_bash("grep -r K-ENV ."), executor)
    assert "K-ENV-MARK" not in out, out


@pytest.mark.asyncio
@pytest.mark.skipif(not sandbox_available(), reason="bubblewrap not installed")
async def test_the_sandbox_alone_hides_them(ws: Path) -> None:
    executor = LocalExecutor(str(ws), sandbox=True, homes=(str(ws.parent / "home"),))
    script = f"cat {' '.join(NAMED)}; grep -r K-SPELLED .; cat plain.txt"
    result = await executor.run_unchecked(["/bin/bash", "-c", script])
    assert MARK not in result.output, result.output
    assert "plain words" in result.output, result.output


def test_named_in_reads_as_git_reads() -> None:
    """Spellings checked against ``git config -f FILE --list`` when this was written."""
    cases = {
        "[credential]\n\tx = a\x1c[http]\n\thelper = store --file=n1\n": ("n1",),
        "[credential]\n\tx = a\u2028[http]\n\thelper = store --file=n2\n": ("n2",),
        '[credential\t"a\\"b"]\n\thelper = cache --sock=n3\n': ("n3",),
        "k-1\n[credential]\n\thelper = store --file=n4 # x\n": ("n4",),
        '[credential]\r\n\thelper = "store --file="n5\r\n': ("n5",),
        "[core]\n\tsshCommand = ssh -4Ai n6 -o 'identityfile n7' -F cfg\n": ("n6", "n7"),
        "[credential]\n\thelper = store --file='$HOME/n8'\n": ("/h/n8", "$HOME/n8"),
        "[user]\n\tsigningKey = key::ssh-ed25519 AAAA\n": (),
        "[credential]\n\thelper = !perl /c/git-credential-netrc.perl -d -f n10 -file=n11\n": (
            "n10",
            "n11",
            "/c/git-credential-netrc.perl",  # redshell26: every word of a helper's line
        ),
        '[credential]\n\thelper = "a\n\thelper = store --file=n9\n': (),  # git refuses it
    }
    for text, secrets in cases.items():
        assert named_in(text, env={"HOME": "/h"}).secrets == secrets, text
