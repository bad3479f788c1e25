"""A file a git configuration names as a credential source is a secret, whatever its name
(redshell23).

``git config credential.helper 'store --file=notes.txt'`` keeps ``https://user:TOKEN@host``
lines in ``notes.txt``. Before redshell23, on every backend (bubblewrap, without it, Daytona),
``cat notes.txt``, ``grep -r TOKEN .``, ``xargs cat`` and the ``read`` tool printed the token,
and so did every other file a configuration names for credentials or keys: a ``cookieFile``,
an ``sslKey``, ``core.sshCommand``'s ``-i`` identity, a helper command line's ``--file``, an
included configuration (which may hold what ``.git/config`` holds) and what it names in turn.
The executors read the configurations git reads (``rho_domain/git_named_files.py``,
``rho_adapters/local/git_named.py``, ``rho_adapters/daytona/git_named.py``) and make each file
named a secret location of their policy.
"""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest
import pytest_asyncio
from shell_backends import BACKENDS, DaytonaPool, call_tool, daytona_pool, run_restricted

from rho_adapters.local import LocalExecutor
from rho_adapters.local.executor import sandbox_available
from rho_adapters.local.git_named import git_named_secrets
from rho_domain.git_named_files import named_in, placed
from rho_domain.tools.grep import GrepHandler
from rho_domain.tools.read import ReadHandler

MARK = "K-NAMED-MARK"
ENV = {"PATH": "/usr/bin:/bin", "HOME": "/dev/null", "GIT_CONFIG_GLOBAL": "/dev/null"}
CONFIG = r"""[core]
	sshCommand = "ssh -i deploy/ident -o IdentityFile=deploy/ident2"
[credential]
	helper = store --file=notes.txt
[credential "https://other.example"]
	helper = "!f() { git credential-store --file creds/other.txt \"$@\"; }; f"
[http]
	cookieFile = cookies.dat
[http "https://h3.example"]
	sslKey = client/key.txt ; a comment
[user]
	signingKey = ./sign/key
[include]
	path = ../team.gitconfig
"""
# (file, content): each holds the mark; the last is the included configuration's own
NAMED = {
    "notes.txt": f"https://u:{MARK}-store@h.example\n",
    "creds/other.txt": f"https://u:{MARK}-other@other.example\n",
    "cookies.dat": f"h.example\tFALSE\t/\tTRUE\t0\tsid\t{MARK}-cookie\n",
    "client/key.txt": f"{MARK}-sslkey\n",
    "deploy/ident": f"{MARK}-ident\n",
    "deploy/ident2": f"{MARK}-ident2\n",
    "sign/key": f"{MARK}-sign\n",
    "inc-creds.txt": f"https://u:{MARK}-inc@i.example\n",
    "team.gitconfig": f'[credential]\n\thelper = store --file "inc-creds.txt"\n# {MARK}-team\n',
}
ATTACKS = [
    *(f"cat {name}" for name in NAMED),
    "grep -r K-NAMED .",
    "rg -uuu K-NAMED",
    "echo notes.txt | xargs cat",
    "cd creds && cat other.txt",
    "cat < cookies.dat",
    "cat ./deploy/../notes.txt",
]


@pytest.fixture(scope="module")
def ws(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("gitnamed") / "ws"
    root.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=root, env=ENV, check=True)
    (root / ".git/config").write_text(CONFIG)
    for name, content in NAMED.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(content)
    (root / "plain.txt").write_text("plain words\n")
    return root


pool = pytest_asyncio.fixture(scope="module", loop_scope="module")(daytona_pool)


def test_git_reads_the_named_files(ws: Path) -> None:
    asked = "protocol=https\nhost=h.example\n\n"
    done = subprocess.run(["git", "credential", "fill"], cwd=ws, env=ENV, input=asked,
                          capture_output=True, text=True, check=True)  # fmt: skip
    assert f"password={MARK}-store" in done.stdout, done  # the helper's store is notes.txt
    included = subprocess.run(["git", "config", "--get-all", "credential.helper"], cwd=ws,
                              env=ENV, capture_output=True, text=True).stdout  # fmt: skip
    assert "inc-creds.txt" in included, included  # git follows the include


@pytest.mark.asyncio(loop_scope="module")
@pytest.mark.parametrize("backend", BACKENDS)
async def test_no_tool_reads_a_file_git_names(ws: Path, backend: str, pool: DaytonaPool) -> None:
    for command in ATTACKS:
        out = await run_restricted(str(ws), command, backend, pool)
        assert MARK not in out, (command, out)
        if command.startswith("cat "):
            assert out.startswith("SensitivePath"), (command, out)
            assert "secret location" in out, (command, out)
    plain = await run_restricted(str(ws), "cat plain.txt", backend, pool)
    assert "plain words" in plain, plain
    executor = pool.get(str(ws)) if backend == "daytona" else LocalExecutor(str(ws))
    for name in ("notes.txt", "team.gitconfig"):
        out = await call_tool(ReadHandler(), {"path": name}, executor)
        assert out.startswith("SensitivePath"), out
    out = await call_tool(GrepHandler(), {"pattern": "K-NAMED", "path": "."}, executor)
    assert MARK not in out, out


@pytest.mark.asyncio
@pytest.mark.skipif(not sandbox_available(), reason="bubblewrap not installed")
async def test_the_sandbox_alone_hides_them(ws: Path) -> None:
    executor = LocalExecutor(str(ws), sandbox=True)
    result = await executor.run_unchecked(["/bin/bash", "-c", "cat notes.txt; grep -r K- ."])
    assert MARK not in result.output, result.output


def test_named_in_reads_every_spelling() -> None:
    text = (
        '[CREDENTIAL "https://a"]\n HELPER = "store --file \\"q d.txt\\""\n'
        "[credential]helper = cache --socket=/run/s\n"
        "[http.b]\n\tsslcert = ~/c.pem\n\tproxySSLKey = p.key\n"
        "[core]\n sshcommand = ssh -ikeyfile -oIdentityFile=/k2\n"
        "[user]\n signingkey = 3AA5C34371567BD2\n"
        '[includeIf "gitdir:~/w/"]\n path = x.inc\n'
        "[http]\n cookiefile = a\\\nb\n"
    )
    named = named_in(text)
    # an OpenPGP key id is placed as a path too: with gpg.format=ssh any value is one
    # redshell26: a helper's quoted word with blanks may be command text: its words too
    assert named.secrets == (
        "q d.txt", "q", "d.txt", "/run/s", "~/c.pem", "p.key", "keyfile", "/k2",
        "3AA5C34371567BD2", "ab",
    )  # fmt: skip
    assert named.includes == ("x.inc",)
    assert placed("~/c.pem", base="/w", home="/h") == "/h/c.pem"
    assert placed("~bob/c", base="/w", home="/h") is None
    assert placed("p.key", base="/w/", home=None) == "/w/p.key"


def test_a_helpers_words_are_the_shells_with_or_without_quotes() -> None:
    # A value with no quote or escape is split without shlex (off the one-shot's imports):
    # both paths must give git's shell words, tabs and runs of blanks included.
    text = (
        "[credential]\n helper = store\t--file=x.txt  --file  n.txt\n"
        '[credential "https://c"]\n helper = "cache --socket \'/run/a b\'"\n'
    )
    assert named_in(text).secrets == ("x.txt", "n.txt", "/run/a b", "/run/a", "b")


@pytest.mark.asyncio
async def test_a_changed_configuration_is_read_again(tmp_path: Path) -> None:
    # speed23b: a configuration's findings are remembered per (real path, device, inode,
    # mtime_ns, ctime_ns, size) for the process. Each variant below changes the file so that
    # its path, size and mtime_ns stay as they were (the clock an hour ahead: remembered at
    # once); remembered by path alone, the next executor missed the new credential file.
    ahead = time.time_ns() + 3_600 * 10**9
    config = tmp_path / ".git/config"
    config.parent.mkdir()
    config.write_text("[credential]\n\thelper = store --file=aa.txt\n")
    when = config.stat().st_mtime_ns
    for name in ("aa.txt", "bb.txt", "cc.txt"):
        (tmp_path / name).write_text(f"https://u:{MARK}@h.example\n")

    def named() -> set[str]:
        found = git_named_secrets(
            (str(tmp_path),), (), {"HOME": "/nonexistent"}, now_ns=lambda: ahead
        )
        return {os.path.basename(p) for p in found}

    assert named() == {"aa.txt"}
    config.write_text("[credential]\n\thelper = store --file=bb.txt\n")  # same inode, size
    os.utime(config, ns=(when, when))
    assert named() == {"bb.txt"}  # ctime_ns moved
    replaced = tmp_path / "new-config"
    replaced.write_text("[credential]\n\thelper = store --file=cc.txt\n")
    os.utime(replaced, ns=(when, when))
    os.replace(replaced, config)  # another inode, same size and mtime_ns
    assert named() == {"cc.txt"}
    out = await call_tool(ReadHandler(), {"path": "cc.txt"}, LocalExecutor(str(tmp_path)))
    assert out.startswith("SensitivePath"), out  # the next executor refuses it
    assert "secret location" in out, out


def test_a_remembered_configuration_expands_each_environment(tmp_path: Path) -> None:
    # oneshot24: what a settled configuration names is remembered with its entries, but
    # only when no value has a ``$``: ``--file=$TOKENS/t.txt`` names another file for an
    # executor whose environment sets TOKENS elsewhere (remembered as the first executor
    # expanded it, the second's token file was readable).
    ahead = time.time_ns() + 3_600 * 10**9
    config = tmp_path / ".git/config"
    config.parent.mkdir()
    config.write_text("[credential]\n\thelper = store --file=$TOKENS/t.txt\n")

    def named(tokens: str) -> tuple[str, ...]:
        env = {"HOME": "/nonexistent", "TOKENS": str(tmp_path / tokens)}
        return git_named_secrets((str(tmp_path),), (), env, now_ns=lambda: ahead)

    assert str(tmp_path / "a/t.txt") in named("a")
    assert str(tmp_path / "b/t.txt") in named("b")
    assert str(tmp_path / "a/t.txt") not in named("b")
