"""git lists nothing inside a committed secret directory, and reads no secret from history by
a tree's id or a path relative to where it runs (redshell20).

Before redshell20, on every backend (bubblewrap, without it, Daytona), in a repository that
committed ``.ssh``, ``sub/.aws``, ``.config/gh`` and ``.docker/config.json``:

* ``git ls-files``, ``git ls-files -s``, ``git status --untracked-files=all``,
  ``git ls-tree -r HEAD`` and ``git rev-list --objects --all`` listed the files inside them
  (the listing walks, ``find``/``du``/``tree``/``ls -R``, hide those names since varshell19b);
* the id of ``.ssh``'s tree (``git ls-tree HEAD`` prints it) listed its files through
  ``git cat-file -p``, ``git show`` and ``git ls-tree``, and printed their content through
  ``git grep`` and ``git diff <empty tree> <id>``: their paths start at that tree, where the
  exclusion pathspecs (``**/.ssh/**``) match nothing; so did ``git grep K HEAD:.config``
  (``gh/in-gh`` there is ``.config/gh/in-gh``);
* with ``.config/gh`` and ``.docker/config.json`` removed from the work tree (history only),
  ``cd .docker && git show HEAD:./config.json``, ``git show :./config.json`` and
  ``git blame HEAD -- config.json`` printed the docker login, and ``cd .config &&
  git ls-tree HEAD gh/`` or ``git ls-tree HEAD ':(top).config/gh/'`` listed ``gh``: those
  paths were judged by their text alone, which git reads from the stage's directory.
"""

from __future__ import annotations

import shlex
import subprocess
from pathlib import Path

import pytest
import pytest_asyncio
from shell_backends import BACKENDS, DaytonaPool, daytona_pool, run_restricted

from rho_adapters.local import LocalExecutor
from rho_adapters.local.executor import sandbox_available
from rho_domain.errors import CommandRefused
from rho_domain.secrets import DEFAULT_POLICY
from rho_domain.shell.git_objects import git_object_args, object_refusal
from rho_domain.shell.git_relative import cwd_history_refusal
from rho_domain.shell.git_tree_list import EMPTY_TREES
from rho_domain.shell.programs import check_argv, harden_argv
from rho_domain.shell.reads import secret_safe_argv

EMPTY = min(EMPTY_TREES, key=len)
COMMITTED = {
    ".ssh/in-ssh-key": "K-SSH\n",
    "sub/.aws/in-aws": "K-AWS\n",
    ".config/gh/in-gh": "oauth_token: K-GH\n",
    ".docker/config.json": '{"auth": "K-DOCKER"}\n',
    ".docker/other.txt": "plain\n",
    ".config/other.txt": "plain\n",
    "a.txt": "plain\n",
}
MARKS = ("in-ssh", "in-aws", "in-gh", "K-SSH", "K-AWS", "K-GH", "K-DOCKER", "in-untracked")
ENV = {"PATH": "/usr/bin:/bin", "HOME": "/dev/null", "GIT_CONFIG_GLOBAL": "/dev/null"}
# What a model types, and the refusal it meets (None: it runs, with the names left out);
# SSH and GH stand for the trees' ids, read from the repository.
_SECRET = "is a secret location"
_BY_ID = "is a directory named by id"
_INSIDE = "files git would name from inside it"
ATTACKS = [
    ("git ls-files", None),
    ("git ls-files -s", None),
    ("git ls-files -o", None),
    ("git status --untracked-files=all", None),
    ("git status --porcelain --ignored --untracked-files=all", None),
    ("git ls-tree -r HEAD", "-r lists the files inside committed secret directories"),
    # the names-only form runs as a diff from the empty tree, which takes the exclusions
    ("git ls-tree -r --name-only HEAD -- sub", None),
    ("git ls-tree -r --name-only HEAD", None),
    ("cd .config && git ls-tree -r --name-status -z HEAD", None),
    ("git ls-tree -r --name-only --full-name HEAD", None),
    ("git ls-tree -rt --name-only HEAD", "with their modes and ids"),
    ("git ls-tree -r --name-only HEAD:.config", "name the revision and the directory"),
    ("git ls-tree -r --name-only SSH", _BY_ID),
    ("git rev-list --objects --all", "--objects prints the path and id"),
    ("git ls-tree HEAD .config/gh/", _SECRET),
    ("cd .config && git ls-tree HEAD gh/", _SECRET),
    ("cd sub && git ls-tree HEAD ':(top).config/gh/'", _SECRET),
    ("git ls-tree HEAD:.config gh/", "name the directory as a path"),
    ("git cat-file -p SSH", _BY_ID),
    ("git show SSH", _BY_ID),
    ("git ls-tree SSH", _BY_ID),
    ("git grep -h K- SSH", _BY_ID),
    (f"git diff {EMPTY} GH", _BY_ID),
    ("git grep -h K- HEAD:.config", _INSIDE),
    (f"git diff {EMPTY} HEAD:.config", _INSIDE),
    ("cd .docker && git show HEAD:./config.json", _SECRET),
    ("cd .docker && git cat-file -p HEAD:./config.json", _SECRET),
    ("cd .docker && git show :./config.json", _SECRET),
    ("cd .docker && git blame HEAD -- config.json", _SECRET),
    ("cd .config && git show HEAD:./gh/in-gh", _SECRET),
]


def _git(cwd: Path, *args: str) -> str:
    argv = ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args]
    return subprocess.run(argv, cwd=cwd, env=ENV, check=True, capture_output=True, text=True).stdout


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    ws = tmp_path_factory.mktemp("gitlist") / "ws"
    ws.mkdir()
    _git(ws, "init", "-q")
    (ws / "a.txt").write_text("first\n")
    _git(ws, "add", "a.txt")
    _git(ws, "commit", "-qm", "one")
    for rel, text in COMMITTED.items():
        (ws / rel).parent.mkdir(parents=True, exist_ok=True)
        (ws / rel).write_text(text)
    _git(ws, "add", "-f", ".")
    _git(ws, "commit", "-qm", "two")
    (ws / ".config/gh/in-gh").unlink()  # history (and the index) only
    (ws / ".config/gh").rmdir()
    (ws / ".docker/config.json").unlink()
    (ws / ".aws").mkdir()  # an untracked secret directory
    (ws / ".aws/in-untracked").write_text("K-AWS\n")
    (ws / "notes.txt").write_text("plain\n")
    (ws / ".config/down").mkdir()  # link/down/.. is .config
    (ws / ".config/down/f").write_text("plain\n")
    (ws / "link").symlink_to(".config")
    _git(
        ws,
        "tag",
        "-a",
        "-m",
        "a tag",
        "blobtag",
        _git(ws, "rev-parse", "HEAD:.ssh/in-ssh-key").strip(),
    )
    return {"ws": str(ws), "SSH": _git(ws, "rev-parse", "HEAD:.ssh").strip(),
            "GH": _git(ws, "rev-parse", "HEAD:.config/gh").strip()}  # fmt: skip


def _command(repo: dict[str, str], command: str) -> str:
    return command.replace("SSH", repo["SSH"]).replace("GH", repo["GH"])


def _marks(out: str) -> list[str]:
    return [m for m in MARKS if m in out]


def test_the_trap_is_real(repo: dict[str, str]) -> None:
    """Each attack, run by plain git (the shell's `cd` done by hand), prints what it is after."""
    for command, _ in ATTACKS + AFTER_DASHDASH:
        cwd, _, line = _command(repo, command).rpartition(" && ")
        argv = shlex.split(line)  # the words sh gives git: no command here expands or globs
        where = Path(repo["ws"], cwd.removeprefix("cd ")) if cwd else Path(repo["ws"])
        done = subprocess.run(argv, cwd=where, env=ENV, capture_output=True, text=True)
        assert _marks(done.stdout), (command, done.stdout, done.stderr)


def test_the_argv_and_its_checks_alone(repo: dict[str, str]) -> None:
    """The allowlist wall with no executor: ls-files and status run by real git with the
    harness's pathspecs list no name inside a secret directory; the listings that take none
    are refused; a tree by id, a tree git walks from inside and a path read from the stage's
    directory are refused by the pure judgements the executors apply."""
    ws = repo["ws"]
    for argv, shown in (
        (["git", "ls-files", "-s"], "a.txt"),
        (["git", "status", "--untracked-files=all"], "notes.txt"),
        (["git", "ls-files", "-o"], "notes.txt"),
        (["git", "ls-tree", "-r", "--name-only", "HEAD"], ".config/other.txt"),
    ):
        check_argv(argv)
        built = secret_safe_argv(harden_argv(argv), DEFAULT_POLICY, [ws])
        done = subprocess.run(built, cwd=ws, env=ENV, capture_output=True, text=True)
        assert done.returncode == 0, (built, done.stderr)
        assert _marks(done.stdout) == [], (built, done.stdout)
        assert shown in done.stdout, done.stdout
    for argv, refusal in (
        (["git", "ls-tree", "-r", "HEAD"], "-r lists the files inside"),
        (["git", "rev-list", "--objects", "--all"], "--objects prints the path"),
        (["git", "ls-tree", "HEAD", ".config/gh/"], "is a secret location"),
        (["git", "ls-tree", "HEAD", ":(top).config/gh/"], "is a secret location"),
        (["git", "ls-tree", "HEAD:.config", "gh/"], "name the directory as a path"),
    ):
        with pytest.raises(CommandRefused, match=refusal):
            check_argv(argv)
    show = ("git", "show", repo["SSH"])
    assert git_object_args(show) == (repo["SSH"], f"{repo['SSH']}^{{}}")
    assert "directory named by id" in (object_refusal(show, repo["SSH"], "tree\n") or "")
    grep = ("git", "grep", "K", "HEAD:.config")
    assert git_object_args(grep) == ("HEAD:.config",)
    assert "from inside it" in (object_refusal(grep, "HEAD:.config", "tree") or "")
    assert object_refusal(("git", "diff", EMPTY, "HEAD"), EMPTY, "tree") is None
    assert object_refusal(("git", "show", "HEAD:src"), "HEAD:src", "tree") is None
    assert object_refusal(("git", "show", "HEAD"), "HEAD", "commit") is None
    docker = f"{ws}/.docker"
    refused: list[tuple[str, ...]] = [
        ("git", "show", "HEAD:./config.json"),
        ("git", "show", ":./config.json"),
        ("git", "blame", "HEAD", "--", "config.json"),
        ("git", "blame", "config.json"),
        ("git", "ls-tree", "HEAD", "../.config/gh/"),
        # the root's config.json, but git's error for a root without one names
        # .docker/config.json from here (redshell21): judged joined too
        ("git", "show", "HEAD:config.json"),
    ]
    for words in refused:
        assert "is a secret location" in (cwd_history_refusal(words, docker, DEFAULT_POLICY) or "")
    ran: list[tuple[str, ...]] = [
        ("git", "show", "HEAD:./other.txt"),
        ("git", "log", "-p", "--", ":(top)config.json"),
    ]
    for words in ran:
        assert cwd_history_refusal(words, docker, DEFAULT_POLICY) is None, words


pool = pytest_asyncio.fixture(scope="module", loop_scope="module")(daytona_pool)


@pytest.mark.asyncio(loop_scope="module")
@pytest.mark.parametrize("backend", BACKENDS)
async def test_git_lists_and_reads_nothing_inside_a_secret_directory(
    repo: dict[str, str], backend: str, pool: DaytonaPool
) -> None:
    for command, refusal in ATTACKS:
        out = await run_restricted(repo["ws"], _command(repo, command), backend, pool)
        if refusal is None:
            assert "exit code 0" in out, (command, out)
            assert _marks(out) == [], (command, out)
        else:  # the refusal quotes the model's own words, never what git would print
            assert out.startswith(("Command refused: ", "SensitivePath: ")), (command, out)
            assert refusal in out, (command, out)
            assert "K-" not in out, (command, out)
    # Ordinary use answers as before.
    for command, shown in (
        ("git ls-files", "other.txt"),
        ("git status --porcelain", "?? notes.txt"),
        ("git ls-tree HEAD", "a.txt"),
        ("git ls-tree -r --name-only HEAD", ".config/other.txt\na.txt\n"),
        ("cd .config && git ls-tree -r --name-only HEAD", "other.txt\n[exit code 0"),
        (f"git diff --name-only {EMPTY} HEAD", ".config/other.txt"),
        ("cd .docker && git show HEAD:./other.txt", "plain"),
        ("git grep -h first HEAD~1", "first"),
    ):
        out = await run_restricted(repo["ws"], command, backend, pool)
        assert shown in out, (command, out)
        assert _marks(out) == [], (command, out)


# Other spellings of a tree or a blob by id, and of a path from the command's directory
# (varshell20b): each meets the refusal of the class it belongs to, on every backend. A tag
# pointing at a blob says nothing of it through ref-filter (only %(raw) would: refused), and
# the subcommands that would print one whole (archive, bundle, notes, for-each-ref,
# show-branch, cat-file --batch) are not on the allowlist.
VARIANTS = [
    ("git grep -h K- 'HEAD^{tree}'", _BY_ID),
    ("git ls-tree SSH7", _BY_ID),  # an abbreviated id
    ("git grep -h K- '@:.config'", _INSIDE),
    ("git grep -h K- 'HEAD~0:.config'", _INSIDE),
    ("git grep -h K- 'HEAD@{0}:.config'", _INSIDE),  # a reflog name
    ("git grep -h K- 'HEAD^{tree}:.config'", _INSIDE),
    ("git show 'HEAD:.config/./gh/in-gh'", _SECRET),
    ("git -C .docker show HEAD:./config.json", "global option '-C' is not allowed"),
    ("git --git-dir=.git --work-tree=.docker show HEAD:config.json", "global option"),
    ("GIT_DIR=.git git show HEAD:.ssh/in-ssh-key", "variable assignment GIT_DIR"),
    ("cd link/down && git show HEAD:../gh/in-gh", _SECRET),  # ".." from where the link leads
    ("git cat-file --batch", "'--batch' is not allowed"),
    ("git archive HEAD", "'archive' is not read-only"),
    ("git tag -l --format='%(*objecttype) %(*contents)' blobtag", None),
]


@pytest.mark.asyncio(loop_scope="module")
@pytest.mark.parametrize("backend", BACKENDS)
async def test_other_spellings_meet_the_same_refusals(
    repo: dict[str, str], backend: str, pool: DaytonaPool
) -> None:
    for command, refusal in VARIANTS:
        command = command.replace("SSH7", repo["SSH"][:7])
        out = await run_restricted(repo["ws"], command, backend, pool)
        assert "K-" not in out, (command, out)
        if refusal is None:
            assert out.startswith("blob \n"), (command, out)
        else:
            assert refusal in out, (command, out)


@pytest.mark.skipif(not sandbox_available(), reason="bubblewrap not installed")
async def test_the_sandbox_alone_does_not_hold_history(repo: dict[str, str]) -> None:
    """Wall 5 alone (varshell20b), for git: the sandbox masks the secrets its scan finds in
    the work tree (``.ssh``, ``sub/.aws``, the untracked ``.aws``), but a secret committed lives
    in ``.git/objects`` too, compressed under its id, where no name says what it is. With no
    argv rule (``run_unchecked``), git lists and prints it; in history the argv walls (2-4:
    the exclusion pathspecs, the refused listings, the typed object names) are the only ones,
    as docs/security.md says."""
    executor = LocalExecutor(repo["ws"], sandbox=True)
    done = await executor.run_unchecked(["cat", ".ssh/in-ssh-key", ".aws/in-untracked"])
    assert "K-" not in done.output, done.output  # the work tree's secrets are masked
    for argv, shown in (
        (["git", "ls-tree", "-r", "--name-only", "HEAD"], ["in-ssh", "in-aws", "in-gh"]),
        (["git", "show", "HEAD:.ssh/in-ssh-key", "HEAD:.config/gh/in-gh"], ["K-SSH", "K-GH"]),
    ):
        done = await executor.run_unchecked(argv)
        assert done.exit_code == 0, (argv, done.output)
        assert [m for m in shown if m in done.output] == shown, (argv, done.output)


# probeshell20c: git ls-tree and git cat-file read "--" as the end of options only, so an
# object after it is still the object (git ls-tree -- ID lists that tree), and the names-only
# rewrite moves the model's REV from after its "--" to before the diff's.
AFTER_DASHDASH = [
    ("git ls-tree -r --name-only -- SSH", _BY_ID),
    ("git ls-tree -- SSH", _BY_ID),
    ("git cat-file -p -- SSH", _BY_ID),
    ("cd .docker && git cat-file -p -- HEAD:./config.json", _SECRET),
]


def test_words_after_dashdash_keep_the_role_git_gives_them(repo: dict[str, str]) -> None:
    """The pure judgements alone: an object after ``--`` is typed, a revision path after
    ``--`` is joined to the stage's directory, a grep path after ``--`` too (the pattern
    shifted the split by one), and the ls-tree rewrite never reads the REV as an option
    (``--output=FILE`` had the diff write FILE)."""
    ssh, ws = repo["SSH"], repo["ws"]
    for argv in (
        ("git", "ls-tree", "-r", "--name-only", "--", ssh),
        ("git", "cat-file", "-p", "--", ssh),
    ):
        assert git_object_args(argv) == (ssh, f"{ssh}^{{}}"), argv
    docker = f"{ws}/.docker"
    for words in (
        ("git", "cat-file", "-p", "--", "HEAD:./config.json"),
        ("git", "grep", "K", "HEAD", "--", "config.json"),
    ):
        assert "is a secret location" in (cwd_history_refusal(words, docker, DEFAULT_POLICY) or "")
    smuggled = ["git", "ls-tree", "-r", "--name-only", "--", "--output=written", "HEAD"]
    check_argv(smuggled)
    built = secret_safe_argv(harden_argv(smuggled), DEFAULT_POLICY, [ws])
    done = subprocess.run(built, cwd=ws, env=ENV, capture_output=True, text=True)
    assert "bad revision '--output=written'" in done.stderr, (built, done.stderr)
    assert not Path(ws, "written").exists()


@pytest.mark.asyncio(loop_scope="module")
@pytest.mark.parametrize("backend", BACKENDS)
async def test_an_object_after_dashdash_meets_the_same_refusals(
    repo: dict[str, str], backend: str, pool: DaytonaPool
) -> None:
    for command, refusal in AFTER_DASHDASH:
        out = await run_restricted(repo["ws"], _command(repo, command), backend, pool)
        assert refusal in out, (command, out)
        assert _marks(out) == [], (command, out)


# redshell21: names inside a committed secret directory, never its content. From .config,
# git's error for a root path it does not find names the one it finds from there ("path
# '.config/gh/in-gh' exists, but not 'gh/in-gh'"; the index's too), and a commit lister's
# wildcard pathspec, which took no exclusions, answered which commit touched a name
# (``-- '*/gh/in-*'``), a letter at a time; ``ls-files --error-unmatch`` did by its exit status.
ORACLES = [
    ("cd .config && git show HEAD:gh/in-gh", "its content and its name may not be read"),
    ("cd .config && git show :gh/in-gh", "its content and its name may not be read"),
    ("cd .config && git rev-parse HEAD~1..HEAD:gh/in-gh", "its name may not be read"),
    ("git log --format=%s -- '*/gh/in-*'", ""),
    ("git log --format=%s '.config/g[h]/*'", ""),
    ("git rev-list HEAD -- '*/gh/in-*'", ""),
    ("git shortlog -s HEAD -- '*/gh/in-*'", ""),
    ("git ls-files --error-unmatch '.config/g[h]/in-*'", "--error-unmatch is not allowed"),
]


def test_names_inside_a_secret_directory_are_no_oracle(repo: dict[str, str]) -> None:
    """The trap is real with plain git; the pure judgement refuses the hint's forms, and the
    argv the harness builds, run by real git (the allowlist wall alone), names no commit."""
    ws = repo["ws"]
    hint = subprocess.run(["git", "show", "HEAD:gh/in-gh"], cwd=f"{ws}/.config", env=ENV,
                          capture_output=True, text=True).stderr  # fmt: skip
    assert "'.config/gh/in-gh' exists" in hint, hint
    for argv in (["git", "show", "HEAD:gh/in-gh"], ["git", "show", ":0:gh/in-gh"]):
        refusal = cwd_history_refusal(argv, f"{ws}/.config", DEFAULT_POLICY) or ""
        assert "its name may not be read" in refusal, argv
    for argv in (["git", "log", "--format=%s", "--", "*/gh/in-*"],
                 ["git", "log", "--format=%s", "*/gh/in-*"],
                 ["git", "rev-list", "HEAD", "--", "*/gh/in-*"],
                 ["git", "shortlog", "-s", "HEAD", "--", ".config/g[h]/*"]):  # fmt: skip
        plain = subprocess.run(argv, cwd=ws, env=ENV, capture_output=True, text=True).stdout
        assert plain.strip(), (argv, plain)  # the commit that added .config/gh/in-gh
        check_argv(argv)
        built = secret_safe_argv(harden_argv(argv), DEFAULT_POLICY, [ws])
        done = subprocess.run(built, cwd=ws, env=ENV, capture_output=True, text=True)
        assert (done.returncode, done.stdout) == (0, ""), (argv, done)
    # ls-files --error-unmatch: its exit status says whether a wildcard matched a tracked
    # name, before the exclusions (0 for in-*, 1 for zz*); refused.
    for pattern, code in ((".config/g[h]/in-*", 0), (".config/g[h]/zz*", 1)):
        argv = ["git", "ls-files", "--error-unmatch", pattern]
        assert subprocess.run(argv, cwd=ws, env=ENV, capture_output=True).returncode == code
        with pytest.raises(CommandRefused, match="--error-unmatch is not allowed"):
            check_argv(argv)
    # A log naming no path lists every commit as before; a pathspec still filters.
    for argv in (["git", "log", "--format=%s"], ["git", "rev-list", "--count", "HEAD"]):
        assert secret_safe_argv(harden_argv(argv), DEFAULT_POLICY, [ws])[-1] == argv[-1]
    built = secret_safe_argv(harden_argv(["git", "log", "--format=%s", "--", "*.txt"]),
                             DEFAULT_POLICY, [ws])  # fmt: skip
    done = subprocess.run(built, cwd=ws, env=ENV, capture_output=True, text=True)
    assert done.stdout == "two\none\n", done


@pytest.mark.asyncio(loop_scope="module")
@pytest.mark.parametrize("backend", BACKENDS)
async def test_names_inside_a_secret_directory_on_every_backend(
    repo: dict[str, str], backend: str, pool: DaytonaPool
) -> None:
    for command, refusal in ORACLES:
        out = await run_restricted(repo["ws"], command, backend, pool)
        if refusal:  # the refusal quotes the model's own words, never what git would say
            assert out.startswith(("SensitivePath: ", "Command refused: ")), (command, out)
            assert refusal in out, (command, out)
            assert "exists" not in out, (command, out)
        else:  # no commit named
            assert out.startswith("[exit code 0,"), (command, out)
