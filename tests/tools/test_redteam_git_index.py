"""git's own files show no secret and no name inside a secret directory (redshell21).

``.git/index`` holds every tracked path. Before redshell21, on every backend (bubblewrap,
without it, Daytona), ``strings .git/index``, ``grep -a`` on it, ``grep -ra .git`` and the
``read`` tool printed ``.config/gh/in-gh-hosts.yml``, a name ``git ls-files`` and the listing
walks leave out (a secret directory's names are secrets). The index is now a secret location
(``secret_patterns.GIT_INDEXES``) to every tool and walker; git itself still reads it, and the
sandbox shows it, as it shows ``.git/config``. Likewise ``.git/COMMIT_EDITMSG`` after
``git commit -v`` kept the staged names and the whole diff, a committed ``.env``'s line too:
it and git's other scratch files (``GIT_SCRATCH``: merge and squash messages, ``add -e``'s
patch, an interrupted rebase's patches, rerere's images; ``git fsck --lost-found``'s blobs,
probeshell21b) are secret locations now.

A loose object in ``.git/objects`` is a committed file's content, zlib-deflated: before
probeshell21b, on every backend, ``printf`` of a gzip header, then ``cat -`` of the ``.env``'s
blob (``.git/objects/2a/16a5...``) into ``zcat`` printed the committed ``.env``. The object
store (``GIT_OBJECTS``) is a secret location to every tool but git now.
"""

from __future__ import annotations

import contextlib
import functools
import shutil
import subprocess
import zlib
from pathlib import Path

import pytest
import pytest_asyncio
from shell_backends import BACKENDS, DaytonaPool, call_tool, daytona_pool, run_restricted

from rho_adapters.local import LocalExecutor
from rho_domain.tools.grep import GrepHandler
from rho_domain.tools.read import ReadHandler

MARK = "in-gh-hosts"
ENV_MARK = "K-ENV-MARK"
GZIP = "\\037\\213\\010\\000\\000\\000\\000\\000"  # a gzip header, flags and time zero
INFLATE = f"printf '{GZIP}' | cat - OBJECT | zcat"
# a pack's bytes from the .env's deflated content on (the model inflates them as it likes)
PACK_BYTES = "tail -c +PACK_AT packed/objects/pack/*.pack | xxd -p"
ENV = {"PATH": "/usr/bin:/bin", "HOME": "/dev/null", "GIT_CONFIG_GLOBAL": "/dev/null"}
ATTACKS = [
    "strings .git/index",
    "grep -a -o 'gh/in-[a-z-]*' .git/index",
    "cd .git && cat -v index",
    "grep -ra -o 'gh/in-[a-z-]*' .git",
    "rg -a -uuu -o 'gh/in-[a-z-]*' .git",
    "echo .git/index | xargs grep -a -o 'gh/in-[a-z-]*'",
    "cat .git/COMMIT_EDITMSG",
    "grep -r K-ENV .git",
    "cd .git && grep -e K-ENV -e in-gh -- COMMIT_EDITMSG",
    # the .env's blob, inflated by zcat behind a gzip header; the same bytes named otherwise
    INFLATE,
    f"cd .git/objects && printf '{GZIP}' | cat - ./OBJECT_IN_STORE | zcat",
    "find .git/objects -type f | xargs cat | strings",
    "echo OBJECT | xargs xxd -p",
    f"printf '{GZIP}' | cat - mirror.OBJECT_IN_GIT | zcat",
    PACK_BYTES,
    "cat .git/lost-found/other/*",
    "cd .git && grep -r K- lost-found",
    # a bare repository's worktree's index (redshell22), and a bare mirror's config
    "strings mirror.git/worktrees/wtree/index",
    "grep -ra -o 'gh/in-[a-z-]*' mirror.git",
    "cat mirror.git/config",
    "grep -r K-ENV-MARK-url .",
    # a bare store named by no .git, its loose objects (redshell22): by their shape
    f"printf '{GZIP}' | cat - store/objects/OBJECT_IN_STORE | zcat",
    f"cd store/objects && printf '{GZIP}' | cat - OBJECT_IN_STORE | zcat",
    # a git directory by no .git name (probeshell22b): a bare store's config, a
    # --separate-git-dir's index and scratch file, known by their shape (HEAD, objects, refs)
    "cat store/config",
    "cd store && cat config",
    "cat < store/config",
    "echo store/config | xargs cat",
    "grep -r K-ENV-MARK-store .",
    "cd store && grep -r K-ENV",
    "strings gd/index",
    "grep -ra -o 'gh/in-[a-z-]*' gd",
    "cat gd/COMMIT_EDITMSG",
    # an object store by no name objects (GIT_OBJECT_DIRECTORY=od): an info beside a pack
    f"printf '{GZIP}' | cat - od/OBJECT_IN_STORE | zcat",
    "find od -type f | xargs cat | zcat",
    # a git directory with no objects (GIT_OBJECT_DIRECTORY names the store): a HEAD beside
    # refs is enough for git (probeshell22c); and a hard link to a bare store's config
    "cat sep/gx/config",
    "cd sep/gx && cat config",
    "cat sep/notes",
    "grep -r K-ENV-MARK-store sep",
]


@pytest.fixture(scope="module")
def ws(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("gitindex") / "ws"
    (root / ".config/gh").mkdir(parents=True)
    (root / f".config/gh/{MARK}.yml").write_text("oauth_token: K\n")
    (root / "a.txt").write_text("plain\n")
    (root / ".env").write_text(f"TOKEN={ENV_MARK}\n")
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t"]
    editor = {**ENV, "GIT_EDITOR": "sed -i 1s/^/one/"}  # the user's editor, after commit -v
    for args in (["init", "-q"], ["add", "-f", "."], ["commit", "-q", "-v"]):
        subprocess.run([*git, *args], cwd=root, env=editor, check=True, capture_output=True)
    # a .env staged once and replaced: fsck --lost-found writes its blob as it was
    # and a bare mirror (x.git) the history was pushed to: loose objects there too
    lost = (
        ["hash-object", "-w", "--stdin"],
        ["fsck", "--lost-found"],
        ["init", "-q", "--bare", "mirror.git"],
        ["push", "-q", "mirror.git", "HEAD:main"],
        # a store named by no .git: a bare "packed", its objects in a pack
        ["init", "-q", "--bare", "packed"],
        ["push", "-q", "packed", "HEAD:main"],
        ["-C", "packed", "repack", "-a", "-d", "-q"],
        # and a bare "store", its objects loose
        ["init", "-q", "--bare", "store"],
        ["push", "-q", "store", "HEAD:main"],
        # a mirror keeps its remote's URL, a token in it (git clone --mirror https://x:T@...)
        ["-C", "mirror.git", "remote", "add", "origin", f"https://x:{ENV_MARK}-url@h/r.git"],
        # a worktree of the bare mirror: its index lies in mirror.git/worktrees/wtree
        ["-C", "mirror.git", "worktree", "add", "-q", "../wtree", "main"],
        # a bare store's remote, its token; a --separate-git-dir gd whose index holds .config/gh
        ["-C", "store", "remote", "add", "origin", f"https://x:{ENV_MARK}-store@h/r.git"],
        ["init", "-q", "--separate-git-dir", "gd", "sep"],
        ["--git-dir", "gd", "--work-tree", ".", "add", "-f", ".config"],  # GIT_DIR=gd's index
    )
    for args, given in zip(lost, (f"TOKEN={ENV_MARK}-lost\n", *[None] * 13), strict=True):
        subprocess.run([*git, *args], cwd=root, env=ENV, input=given, check=True,
                       capture_output=True, text=True)  # fmt: skip
    (root / "gd/COMMIT_EDITMSG").write_text(f"# {MARK}\n+TOKEN={ENV_MARK}\n")
    shutil.copytree(root / "store/objects", root / "od")
    (root / "sep/gx/refs/heads").mkdir(parents=True)  # no objects: GIT_OBJECT_DIRECTORY=od
    (root / "sep/gx/HEAD").write_text("ref: refs/heads/main\n")
    (root / "sep/gx/config").write_text(f'[remote "o"]\n\turl = https://x:{ENV_MARK}-gx@h\n')
    (root / "sep/notes").hardlink_to(root / "store/config")  # after the last write of it
    return root


pool = pytest_asyncio.fixture(scope="module", loop_scope="module")(daytona_pool)


@functools.cache  # the module's one repository: one git run, not one per attack (~50 a backend)
def _object(ws: Path) -> str:
    """The path of the committed ``.env``'s loose object, from the repository's root."""
    blob = subprocess.run(["git", "rev-parse", "HEAD:.env"], cwd=ws, env=ENV, check=True,
                          capture_output=True, text=True).stdout.strip()  # fmt: skip
    return f".git/objects/{blob[:2]}/{blob[2:]}"


@functools.cache
def _pack_offset(ws: Path) -> int:
    """Where the ``.env``'s deflated content starts in the pack of ``packed`` (1-based)."""
    (pack,) = (ws / "packed/objects/pack").glob("*.pack")
    data = pack.read_bytes()
    for at in range(12, len(data)):
        with contextlib.suppress(zlib.error):
            if zlib.decompressobj().decompress(data[at:]).startswith(b"TOKEN="):
                return at + 1
    raise AssertionError("no .env blob in the pack")


def _attack(command: str, ws: Path) -> str:
    if "PACK_AT" in command:
        command = command.replace("PACK_AT", str(_pack_offset(ws)))
    obj = _object(ws)
    command = command.replace("OBJECT_IN_STORE", obj[13:]).replace("OBJECT_IN_GIT", obj[1:])
    return command.replace("OBJECT", obj)


def test_gits_files_name_and_hold_the_secrets(ws: Path) -> None:
    done = subprocess.run(["strings", ".git/index"], cwd=ws, capture_output=True, text=True)
    assert MARK in done.stdout, done.stdout  # the attack reaches the name
    message = (ws / ".git/COMMIT_EDITMSG").read_text()
    assert MARK in message, message  # the staged names
    assert f"+TOKEN={ENV_MARK}" in message, message  # and the diff
    assert f"x:{ENV_MARK}-url@" in (ws / "mirror.git/config").read_text()  # a mirror's token
    assert MARK.encode() in (ws / "mirror.git/worktrees/wtree/index").read_bytes()
    assert f"x:{ENV_MARK}-store@" in (ws / "store/config").read_text()  # a bare store's token
    assert MARK.encode() in (ws / "gd/index").read_bytes()  # a --separate-git-dir's index
    gx = subprocess.run(["git", "--git-dir=sep/gx", "config", "remote.o.url"], cwd=ws,
                        env={**ENV, "GIT_OBJECT_DIRECTORY": str(ws / "od")},
                        capture_output=True, text=True).stdout  # fmt: skip
    assert f"x:{ENV_MARK}-gx@" in gx, gx  # git takes a HEAD beside refs for a git directory
    assert (ws / "sep/notes").samefile(ws / "store/config")  # one file, two names
    stores = ("- mirror.OBJECT_IN_GIT", "- store/objects/OBJECT_IN_STORE", "- od/OBJECT_IN_STORE")
    for attack in (INFLATE, *(INFLATE.replace("- OBJECT", store) for store in stores)):
        zcat = subprocess.run(_attack(attack, ws), shell=True, cwd=ws, capture_output=True,
                              text=True).stdout  # fmt: skip
        assert f"TOKEN={ENV_MARK}" in zcat, zcat  # the object stores hold the .env
    out = subprocess.run(_attack(PACK_BYTES, ws), shell=True, cwd=ws, capture_output=True,
                         text=True).stdout  # fmt: skip
    inflated = zlib.decompressobj().decompress(bytes.fromhex(out.replace("\n", "")))
    assert inflated == f"TOKEN={ENV_MARK}\n".encode(), out  # a pack (a bare one's) holds it
    (lost,) = (ws / ".git/lost-found/other").iterdir()
    assert lost.read_text() == f"TOKEN={ENV_MARK}-lost\n"  # and so does lost-found


@pytest.mark.asyncio(loop_scope="module")
@pytest.mark.parametrize("backend", BACKENDS)
async def test_no_tool_reads_the_index(ws: Path, backend: str, pool: DaytonaPool) -> None:
    for command in ATTACKS:
        out = await run_restricted(str(ws), _attack(command, ws), backend, pool)
        assert MARK not in out, (command, out)
        assert ENV_MARK not in out, (command, out)
    out = await run_restricted(str(ws), "strings .git/index", backend, pool)
    assert "is a secret location (*/.git/index)" in out, out
    out = await run_restricted(str(ws), "cat .git/COMMIT_EDITMSG", backend, pool)
    assert "is a secret location (*/.git/commit_editmsg)" in out, out
    out = await run_restricted(str(ws), _attack(INFLATE, ws), backend, pool)
    assert "is a secret location (*/.git/objects)" in out, out
    out = await run_restricted(str(ws), _attack(PACK_BYTES, ws), backend, pool)
    assert "is a secret location (*/objects/pack)" in out, out
    out = await run_restricted(str(ws), "strings mirror.git/worktrees/wtree/index", backend, pool)
    assert "is a secret location (*/worktrees/*/index)" in out, out
    out = await run_restricted(str(ws), "cd wtree && git status --porcelain", backend, pool)
    assert out.startswith("[exit code 0"), out  # git reads the worktree's index
    out = await run_restricted(str(ws), "cat mirror.git/config", backend, pool)
    assert "is a secret location (*.git/config)" in out, out
    out = await run_restricted(str(ws), "cd mirror.git && git remote -v", backend, pool)
    assert out.startswith("origin\thttps://h/r.git (fetch)\n"), out  # git reads it, shadowed
    bare = _attack(f"printf '{GZIP}' | cat - store/objects/OBJECT_IN_STORE | zcat", ws)
    out = await run_restricted(str(ws), bare, backend, pool)
    assert "is a secret location (*/objects/<two hex digits>)" in out, out
    out = await run_restricted(
        str(ws), _attack("echo store/objects/OBJECT_IN_STORE | xargs cat", ws), backend, pool
    )
    assert "a secret file is never read" in out, out  # the xargs guard judges the shape
    out = await run_restricted(str(ws), "cd store && git show main:a.txt", backend, pool)
    assert out.startswith("plain\n[exit code 0"), out  # git reads the bare store's objects
    # a git directory by its shape: its config, index and scratch files are a .git's
    shape = "a git directory by its shape (a HEAD beside refs or a commondir), where it is"
    for command, where in (
        ("cat store/config", ".git/config: "),
        ("cat sep/gx/config", ".git/config: "),
        ("strings gd/index", ".git/index: "),
        ("cat gd/COMMIT_EDITMSG", ".git/COMMIT_EDITMSG: "),
    ):
        out = await run_restricted(str(ws), command, backend, pool)
        # on Daytona the scan (run since sep/notes has two names) may have found it first
        found = backend == "daytona" and "a secret location the agent never reads" in out
        assert found or f"{shape} {where}" in out, (command, out)
    out = await run_restricted(str(ws), "cat sep/notes", backend, pool)
    assert "another name (a hard link) of a secret" in out, out
    out = await run_restricted(str(ws), _attack("cat od/OBJECT_IN_STORE", ws), backend, pool)
    assert "a git object store by its shape (an info beside a pack)" in out, out
    out = await run_restricted(str(ws), "cd store && git remote -v", backend, pool)
    assert out.startswith("origin\thttps://h/r.git (fetch)\n"), out  # git reads it, shadowed
    if backend == "bwrap":  # the sandbox alone (no argv checks) masks the scratch file
        done = await LocalExecutor(str(ws), sandbox=True).run_unchecked(
            [
                "/bin/sh",
                "-c",
                "cat gd/COMMIT_EDITMSG sep/notes; "
                "git --git-dir=store rev-parse --is-bare-repository",
            ],
            timeout=20,
        )
        assert ENV_MARK not in done.output, done.output
        assert MARK not in done.output, done.output
        assert done.output.endswith("\ntrue\n"), done.output  # git reads the store's config
    # git reads it as before (in the sandbox too): status sees no file deleted (and not
    # od/: every entry there is a store's, excluded from git's pathspecs as secrets are)
    out = await run_restricted(str(ws), "git status --porcelain", backend, pool)
    assert out.startswith(
        "?? gd/\n?? mirror.git/\n?? packed/\n?? sep/\n?? store/\n?? wtree/\n[exit code 0"
    ), out
    out = await run_restricted(str(ws), "git ls-files", backend, pool)
    assert out.startswith("a.txt\n"), out
    out = await run_restricted(str(ws), "git show HEAD:a.txt", backend, pool)
    assert out.startswith("plain\n"), out  # git reads its objects
    # blame's revisions are revisions: HEAD~0 has a Windows short name's shape, no path's
    for blame in ("git blame HEAD~0 -- a.txt", "git blame HEAD~0 a.txt", "git blame a.txt HEAD~0"):
        out = await run_restricted(str(ws), blame, backend, pool)
        assert ") plain\n[exit code 0" in out, (blame, out)
    for blame in ("git blame HEAD~0 -- .env", "git blame .env HEAD~0", "git blame HEAD~0 .env"):
        out = await run_restricted(str(ws), blame, backend, pool)
        assert "is a secrets file (.env)" in out, (blame, out)
    out = await run_restricted(str(ws), "cd .config && git blame HEAD~0 gh/x", backend, pool)
    assert "is a secret location" in out or "is inside" in out, out  # joined to .config
    executor = pool.get(str(ws)) if backend == "daytona" else LocalExecutor(str(ws))
    od_object = "od/" + _object(ws)[13:]
    for path in (".git/index", ".git/COMMIT_EDITMSG", _object(ws), od_object, "store/config"):
        out = await call_tool(ReadHandler(), {"path": path}, executor)
        assert "is a secret location" in out, (path, out)
    out = await call_tool(ReadHandler(), {"path": "sep/gx/config"}, executor)
    assert "a git directory by its shape (a HEAD beside refs" in out, out
    out = await call_tool(ReadHandler(), {"path": "sep/notes"}, executor)
    assert "is another name (a hard link) of a secrets file" in out, out
    out = await call_tool(GrepHandler(), {"pattern": "in-gh", "path": ".git"}, executor)
    assert MARK not in out, out
