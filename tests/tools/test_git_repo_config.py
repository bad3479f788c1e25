"""A repository the agent reads never runs a command (issue 10, item 4).

One booby-trapped repository sets every repository-controlled way of naming a program that
git 2.39 has (``VECTORS``); each program prints ``PWNED-<vector>`` and creates
``MARK-<vector>`` next to the repository. ``test_trap_is_real`` proves each vector fires with
plain git, and ``test_old_hardening_was_not_enough`` that the ``-c`` list alone (the code
before this fix) let filters, includes and submodules through. Then every allowed git
subcommand (``COMMANDS`` covers all of ``SUBCOMMANDS``) runs through the restricted bash tool
on a real LocalExecutor, with and without bubblewrap, and through Daytona (FakeDaytona, real
processes): no marker may appear and nothing may print ``PWNED``.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from rho_adapters.clock import SystemClock
from rho_adapters.local import LocalExecutor
from rho_adapters.local.command_env import restricted_env
from rho_domain.permissions import readonly_profile
from rho_domain.ports.executor import Executor
from rho_domain.shell.git import HARDENING, SUBCOMMANDS, harden_git
from rho_domain.shell.git_repo import (
    GitRepo,
    config_list_argv,
    git_environment,
    parse_preflight,
    shadow_config,
)
from rho_domain.tools.base import ToolContext
from rho_domain.tools.bash import BashHandler

_GIT_ENV = {"PATH": "/usr/bin:/bin", "HOME": "/nonexistent", "GIT_CONFIG_NOSYSTEM": "1"}
_GIT_ENV["GIT_CONFIG_GLOBAL"] = "/dev/null"
_ID = ("-c", "user.name=t", "-c", "user.email=t@t", "-c", "protocol.file.allow=always")

# name -> config lines for .git/config (the program is filled in by _trap(name)).
VECTORS: dict[str, str] = {
    "filter-clean": '[filter "evil"]\n\tclean = {trap}\n',
    "filter-process": '[filter "evil"]\n\tprocess = {trap}\n',
    "textconv": '[diff "evil"]\n\ttextconv = {trap}\n',
    "diff-command": '[diff "evil"]\n\tcommand = {trap}\n',
    "diff-external": "[diff]\n\texternal = {trap}\n",
    "fsmonitor": "[core]\n\tfsmonitor = {trap}\n",
    "pager": "[core]\n\tpager = {trap}\n[pager]\n\tlog = {trap}\n\tdiff = {trap}\n",
    "gpg": "[log]\n\tshowSignature = true\n[gpg]\n\tprogram = {trap}\n",
    "gpg-ssh": '[gpg "ssh"]\n\tprogram = {trap}\n',
    "alias": "[alias]\n\tst = !{trap}\n",
    "editor": "[core]\n\teditor = {trap}\n[sequence]\n\teditor = {trap}\n",
    "ssh-command": "[core]\n\tsshCommand = {trap}\n",
    "askpass": "[core]\n\taskPass = {trap}\n[credential]\n\thelper = !{trap}\n",
    "hooks-path": "[core]\n\thooksPath = {hooks}\n",
    "include": "[include]\n\tpath = {included}\n",
    "include-if": '[includeIf "gitdir:/"]\n\tpath = {included_if}\n',
    "attributes-file": "[core]\n\tattributesFile = {attributes}\n",
    "worktree-config": "[extensions]\n\tworktreeConfig = true\n",
    "merge-driver": '[merge "evil"]\n\tdriver = {trap}\n',
    "uploadpack": '[remote "origin"]\n\turl = ext::{trap}\n\tuploadpack = {trap}\n',
}
# Vectors that live outside .git/config: hooks, a submodule's own config, config.worktree.
_HOOKS = ("post-index-change", "reference-transaction", "pre-commit", "post-checkout")

# Every allowed subcommand at least once; the diff family several times.
COMMANDS = [
    "git status",
    "git status --short",
    "git status --porcelain",
    "git diff",
    "git diff --stat",
    "git diff HEAD",
    "git diff --cached",
    "git diff HEAD~1 HEAD",
    "git log --oneline",
    "git log -p -n 2",
    "git log --stat",
    "git log --format='%h %G? %s'",
    "git show",
    "git show HEAD:a.txt",
    "git show --stat HEAD",
    "git blame a.txt",
    "git blame -L 1,1 b.txt",
    "git grep -n hello",
    "git grep -n hello HEAD",
    "git ls-files",
    "git ls-files -m",
    "git ls-tree HEAD",
    "git branch -a",
    "git tag --list",
    "git rev-parse --show-toplevel",
    "git shortlog -s HEAD",
    "git describe --always",
    "git cat-file -p HEAD",
    "git rev-list --count HEAD",
    "git merge-base HEAD HEAD~1",
    "git show-ref",
    "git remote -v",
    "git count-objects -v",
    "git name-rev HEAD",
    "git version",
    "cd sub && git status --short",
    "cd sub && git log --oneline -1 -- ../a.txt",
    "git status | head -5",
]


def _git(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["git", *args], cwd=cwd, env=_GIT_ENV, capture_output=True, text=True, check=False
    )


def _trap(base: Path, name: str) -> str:
    """A program that announces itself, leaves a marker file and then behaves like cat."""
    script = base / f"trap-{name}.sh"
    body = f'echo PWNED-{name} >&2\ntouch {base}/MARK-{name}\nexec cat "$@"\n'
    script.write_text("#!/bin/sh\n" + body)
    script.chmod(0o755)
    return str(script)


def _markers(base: Path) -> list[str]:
    return sorted(p.name for p in base.iterdir() if p.name.startswith("MARK-"))


def _build_unarmed(base: Path) -> Path:
    """The trapped repository at base/repo (markers go to base) without the ``VECTORS`` of
    .git/config (``_arm`` adds them); hooks, config.worktree, info/attributes and the
    submodule always."""
    repo = base / "repo"
    sub_origin = base / "sub-origin"
    for path in (repo, sub_origin):
        path.mkdir()
        _git(path, "init", "-q")
    (sub_origin / "s.txt").write_text("sub\n")
    (sub_origin / ".gitattributes").write_text("* filter=evil diff=evil\n")
    _git(sub_origin, "add", ".")
    _git(sub_origin, *_ID, "commit", "-qm", "sub")
    (repo / "a.txt").write_text("hello\n")
    (repo / "b.txt").write_text("hello b\n")
    (repo / "sub").mkdir()
    (repo / "sub" / "c.txt").write_text("c\n")
    (repo / ".gitattributes").write_text("*.txt filter=evil diff=evil merge=evil\n")
    _git(repo, "add", ".")
    _git(repo, *_ID, "commit", "-qm", "one")
    (repo / "a.txt").write_text("hello\nworld\n")
    _git(repo, "add", ".")
    _git(repo, *_ID, "commit", "-qm", "two")
    _git(repo, *_ID, "submodule", "add", "-q", str(sub_origin), "mod")
    _git(repo, *_ID, "commit", "-qm", "three")
    # Dirty but same size, mtime in the past: git must re-read the content (filters run).
    for name in ("a.txt", "b.txt"):
        path = repo / name
        path.write_text(path.read_text().upper().lower())
        os.utime(path, (1, 1))
    os.utime(repo / "mod" / "s.txt", (1, 1))
    hooks = base / "hooks"
    hooks.mkdir()
    for hook in _HOOKS:
        for directory in (hooks, repo / ".git" / "hooks"):
            script = directory / hook
            script.write_text(f"#!/bin/sh\nexec {_trap(base, 'hook-' + hook)}\n")
            script.chmod(0o755)
    included = base / "included.cfg"
    included.write_text(f'[filter "evil"]\n\tclean = {_trap(base, "included")}\n')
    included_if = base / "included-if.cfg"
    included_if.write_text(f"[core]\n\tfsmonitor = {_trap(base, 'include-if')}\n")
    (base / "attributes").write_text("*.txt filter=evil\n")
    (repo / ".git" / "config.worktree").write_text(
        f"[core]\n\tfsmonitor = {_trap(base, 'config-worktree')}\n"
    )
    (repo / ".git" / "info" / "attributes").write_text("*.txt filter=evil\n")
    sub_config = repo / ".git" / "modules" / "mod" / "config"
    sub_config.write_text(
        sub_config.read_text() + f'[filter "evil"]\n\tclean = {_trap(base, "submodule")}\n'
    )
    return repo


def _arm(base: Path, vectors: tuple[str, ...]) -> None:
    """Add ``vectors`` to the .git/config of the repository at base/repo."""
    config = base / "repo" / ".git" / "config"
    text = config.read_text()
    for name in vectors:
        text += VECTORS[name].format(
            trap=_trap(base, name),
            hooks=base / "hooks",
            included=base / "included.cfg",
            included_if=base / "included-if.cfg",
            attributes=base / "attributes",
        )
    config.write_text(text)


# The files of a build that name its directory: the traps, hooks, includes and configs.
_NAMING = (
    "trap-*.sh",
    "hooks/*",
    *(f"repo/.git/hooks/{hook}" for hook in _HOOKS),
    "included*.cfg",
    "repo/.git/config",
    "repo/.git/config.worktree",
    "repo/.git/modules/mod/config",
)


@pytest.fixture(scope="module")
def unarmed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One unarmed build per module (git runs a dozen times for it, a submodule clone among
    them: about 0.15 s of CPU), which each test copies (``_copy``) instead of building."""
    base = tmp_path_factory.mktemp("unarmed")
    _build_unarmed(base)
    return base


def _copy(unarmed: Path, base: Path, vectors: tuple[str, ...] = tuple(VECTORS)) -> Path:
    """The trapped repository at base/repo with the chosen ``vectors`` of .git/config:
    ``unarmed`` copied (``cp -a``: the dirty files keep their old mtimes), its directory
    renamed to ``base`` in the files that name it, then armed. The copies have new inodes and
    change times, which git's index (written for ``unarmed``) does not know: git re-reads
    every tracked file on its next look, the dirty ones included, so every trap still fires
    (``test_trap_is_real`` runs each on a copy)."""
    subprocess.run(["cp", "-a", f"{unarmed}/.", str(base)], check=True)
    for pattern in _NAMING:
        for path in base.glob(pattern):
            path.write_text(path.read_text().replace(str(unarmed), str(base)))
    _arm(base, vectors)
    return base / "repo"


@pytest.fixture
def trapped(unarmed: Path, tmp_path: Path) -> Path:
    return _copy(unarmed, tmp_path)


# Vectors git reaches through a read-only command when it is run plainly (the others need a
# terminal, the network or a mutating subcommand, and are in the trapped repository anyway).
FIRING = {
    "filter-clean": ("filter-clean", "status"),
    "filter-process": ("filter-process", "diff"),
    "textconv": ("textconv", "log", "-p"),
    "diff-command": ("diff-command", "diff", "HEAD~2"),
    "diff-external": ("diff-external", "diff", "HEAD~2"),
    "fsmonitor": ("fsmonitor", "status"),
    "alias": ("alias", "st"),
    "include": ("included", "status"),
    "include-if": ("include-if", "status"),
    "worktree-config": ("config-worktree", "status"),
    "attributes-file": ("filter-clean", "diff"),
}


@pytest.mark.parametrize("vector", sorted(FIRING))
def test_trap_is_real(unarmed: Path, tmp_path: Path, vector: str) -> None:
    """Plain git runs each vector's program (so the suite below is not vacuous)."""
    marker, *args = FIRING[vector]
    vectors = (vector, "filter-clean") if vector == "attributes-file" else (vector,)
    repo = _copy(unarmed, tmp_path, vectors)
    if vector == "attributes-file":
        (repo / ".gitattributes").unlink()
        (repo / ".git" / "info" / "attributes").unlink()
    _git(repo, *args)
    assert f"MARK-{marker}" in _markers(tmp_path)


def test_submodule_and_hook_traps_are_real(trapped: Path) -> None:
    _git(trapped, "status")
    fired = _markers(trapped.parent)
    assert "MARK-submodule" in fired
    assert "MARK-hook-post-index-change" in fired


def test_old_hardening_was_not_enough(trapped: Path) -> None:
    """The forced ``-c`` settings alone (the code before the shadow directory) ran filters."""
    env = restricted_env(("/usr/bin", "/bin"))
    for args in (("status", "--short"), ("diff", "--stat")):
        subprocess.run(
            ["git", *harden_git(args)], cwd=trapped, env=env, capture_output=True, check=False
        )
    assert _markers(trapped.parent), "expected the filter to run under the old hardening"


def _ctx(executor: Executor) -> ToolContext:
    return ToolContext(
        session_id="s",
        call_id="c",
        executor=executor,
        profile=readonly_profile(),
        clock=SystemClock(),
    )


def test_commands_cover_every_allowed_subcommand() -> None:
    used = {c.split("git ", 1)[1].split()[0] for c in COMMANDS if "git " in c}
    assert used == set(SUBCOMMANDS), set(SUBCOMMANDS) - used


async def _run_all(executor: Executor, base: Path, commands: list[str] = COMMANDS) -> list[str]:
    handler = BashHandler(restricted=True, timeout=30)
    ctx = _ctx(executor)
    failures = []
    for command in commands:
        out = await handler.handle({"command": command}, ctx)
        if "PWNED" in out.content or "Command refused" in out.content or _markers(base):
            failures.append(f"{command}: {out.content[:300]} {_markers(base)}")
    return failures


@pytest.mark.parametrize("sandbox", [False, True], ids=["no-bwrap", "bwrap"])
async def test_no_repository_program_runs_locally(trapped: Path, sandbox: bool) -> None:
    if sandbox and not await _bwrap_works():
        pytest.skip("bubblewrap does not work here")
    executor = LocalExecutor(str(trapped), sandbox=sandbox)
    assert await _run_all(executor, trapped.parent) == []


async def test_no_repository_program_runs_in_daytona(trapped: Path) -> None:
    """The same through DaytonaExecutor (FakeDaytona runs the scripts with real processes)."""
    from rho_adapters.daytona import DaytonaExecutor
    from rho_adapters.fakes.daytona import FakeDaytona

    fake = FakeDaytona(polls_until_started=1)
    executor = DaytonaExecutor(fake.settings(working_dir=str(trapped)), transport=fake.transport)
    try:
        # The subcommands that read the work tree or render diffs (the rest share the path).
        assert await _run_all(executor, trapped.parent, COMMANDS[:18]) == []
        handler = BashHandler(restricted=True, timeout=30)
        log = await handler.handle({"command": "git log --oneline"}, _ctx(executor))
        assert "three" in log.content
        assert "one" in log.content
    finally:
        await executor.aclose()


@pytest.mark.parametrize("backend", ["local", "daytona"])
async def test_core_worktree_cannot_point_git_at_other_files(tmp_path: Path, backend: str) -> None:
    """core.worktree (repository config) would make git grep/diff read files outside."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "id_key.txt").write_text("PRIVATE hunter2\n")
    ws = tmp_path / "ws"
    ws.mkdir()
    _git(ws, "init", "-q")
    (ws / "id_key.txt").write_text("PRIVATE placeholder\n")
    _git(ws, "add", ".")
    _git(ws, *_ID, "commit", "-qm", "one")
    with open(ws / ".git" / "config", "a") as config:
        config.write(f"[core]\n\tworktree = {outside}\n")
    assert "hunter2" in _git(ws, "grep", "-n", "PRIVATE").stdout  # plain git reads outside
    if backend == "local":
        executor: Executor = LocalExecutor(str(ws), sandbox=False)
    else:
        from rho_adapters.daytona import DaytonaExecutor
        from rho_adapters.fakes.daytona import FakeDaytona

        fake = FakeDaytona(polls_until_started=1)
        executor = DaytonaExecutor(fake.settings(working_dir=str(ws)), transport=fake.transport)
    handler = BashHandler(restricted=True, timeout=30)
    try:
        for command in ("git grep -n PRIVATE", "git diff", "git status --short"):
            out = await handler.handle({"command": command}, _ctx(executor))
            assert "hunter2" not in out.content, (command, out.content)
        grep = await handler.handle({"command": "git grep -n PRIVATE"}, _ctx(executor))
        assert "placeholder" in grep.content
    finally:
        await executor.aclose()


async def test_daytona_ignores_git_variables_from_the_caller(trapped: Path) -> None:
    """A handler bug passing GIT_CONFIG_* would bring config back: restricted runs drop them."""
    from rho_adapters.daytona import DaytonaExecutor
    from rho_adapters.fakes.daytona import FakeDaytona
    from rho_domain.ports.executor import Command, Stage

    fake = FakeDaytona(polls_until_started=1)
    executor = DaytonaExecutor(fake.settings(working_dir=str(trapped)), transport=fake.transport)
    env = {
        "GIT_CONFIG_COUNT": "1",
        "GIT_CONFIG_KEY_0": "filter.evil.clean",
        "GIT_CONFIG_VALUE_0": _trap(trapped.parent, "env"),
    }
    try:
        result = await executor.run(
            Command(pipeline=(Stage(argv=("git", "diff", "--stat")),), env=env)
        )
    finally:
        await executor.aclose()
    assert "PWNED" not in result.output
    assert _markers(trapped.parent) == []


async def test_git_still_answers_through_the_shadow(trapped: Path) -> None:
    executor = LocalExecutor(str(trapped), sandbox=False)
    handler = BashHandler(restricted=True, timeout=30)
    ctx = _ctx(executor)
    log = await handler.handle({"command": "git log --oneline"}, ctx)
    assert [line.split(" ", 1)[1] for line in log.content.splitlines()[:3]] == [
        "three",
        "two",
        "one",
    ]
    status = await handler.handle({"command": "git status --short"}, ctx)
    assert "a.txt" not in status.content  # same content once the filter is gone
    remote = await handler.handle({"command": "cd mod && git remote -v"}, ctx)
    assert "origin" in remote.content
    assert "PWNED" not in remote.content
    outside = await handler.handle({"command": "cd sub && git rev-parse --show-toplevel"}, ctx)
    assert outside.content.startswith(str(trapped))


async def test_outside_a_repository_git_finds_none(tmp_path: Path) -> None:
    (tmp_path / "x.txt").write_text("x\n")
    handler = BashHandler(restricted=True, timeout=30)
    out = await handler.handle({"command": "git log"}, _ctx(LocalExecutor(str(tmp_path))))
    assert "not a git repository" in out.content


async def test_linked_worktree_and_embedded_repository(unarmed: Path, tmp_path: Path) -> None:
    repo = _copy(unarmed, tmp_path)
    _git(repo, "worktree", "add", "-q", str(tmp_path / "wt"))
    for marker in tmp_path.glob("MARK-*"):  # set-up ran the checkout hooks, not the agent
        marker.unlink()
    (tmp_path / "wt" / "a.txt").write_text("HELLO\nWORLD\n")
    handler = BashHandler(restricted=True, timeout=30)
    out = await handler.handle(
        {"command": "git status --short; git diff --stat; git log --oneline -1"},
        _ctx(LocalExecutor(str(tmp_path), sandbox=False)),
    )
    assert "PWNED" not in out.content
    assert _markers(tmp_path) == []
    wt = await handler.handle(
        {"command": "cd wt && git status --short && git diff --stat"},
        _ctx(LocalExecutor(str(tmp_path), sandbox=False)),
    )
    assert "a.txt" in wt.content
    assert "PWNED" not in wt.content
    assert _markers(tmp_path) == []


async def test_repository_owned_by_someone_else_is_read_without_its_config(
    trapped: Path,
) -> None:
    """safe.directory games: another owner's repository is read, its config still ignored."""
    if os.getuid() != 0:
        pytest.skip("needs root to give the repository away")
    for dirpath, dirnames, filenames in os.walk(trapped.parent):
        for name in (*dirnames, *filenames):
            os.lchown(os.path.join(dirpath, name), 65534, 65534)
    os.lchown(trapped.parent, 65534, 65534)
    handler = BashHandler(restricted=True, timeout=30)
    out = await handler.handle(
        {"command": "git status --short && git diff --stat && git log --oneline -1"},
        _ctx(LocalExecutor(str(trapped), sandbox=False)),
    )
    assert "PWNED" not in out.content
    assert _markers(trapped.parent) == []
    assert "three" in out.content


def test_shadow_config_keeps_only_inert_keys() -> None:
    listing = "\0".join(
        [
            "core.repositoryformatversion\n0",
            "core.fsmonitor\nsh evil",
            'remote.my "odd".url\nhttps://x/"y"\\z',
            "filter.lfs.clean\ngit-lfs clean",
            "include.path\n/etc/evil",
            "core.bare",
            "branch.main.merge\nrefs/heads/main",
            "extensions.objectformat\nsha256",
            "extensions.worktreeconfig\ntrue",
        ]
    )
    text = shadow_config(listing)
    assert "evil" not in text
    assert "lfs" not in text
    assert "worktreeconfig" not in text
    assert '[remote "my \\"odd\\""]\n\turl = "https://x/\\"y\\"\\\\z"' in text
    assert '[core]\n\tfsmonitor = "false"' in text
    assert '[extensions]\n\tobjectformat = "sha256"' in text
    parsed = subprocess.run(
        ["git", "config", "--file", "-", "--list"],
        input=text,
        capture_output=True,
        text=True,
        check=True,
        env=_GIT_ENV,
    ).stdout
    assert 'remote.my "odd".url=https://x/"y"\\z' in parsed


def test_preflight_parsing() -> None:
    assert parse_preflight("", "/r") is None
    assert parse_preflight("fatal: x\n", "/r") is None
    repo = parse_preflight("/r/.git\n/r/.git\n/r\n", "/r")
    assert repo is not None
    assert repo.work_tree == "/r"
    redirected = parse_preflight("/r/.git\n/r/.git\n/\n", "/r")  # core.worktree = /
    assert redirected is not None
    assert redirected.work_tree == "/r"
    bare = parse_preflight("/r.git\n/r.git\n", None)
    assert bare is not None
    assert bare.work_tree is None
    assert "core.fsmonitor=" in HARDENING


async def _bwrap_works() -> bool:
    from rho_adapters.local.runner import CommandRunner

    return await CommandRunner(["/usr/bin", "/bin"], {}, sandbox=None).sandboxed()


def test_git_environment_names_every_directory() -> None:
    """The variables themselves (mutation testing: a misspelt name let git discover the
    repository and its config on its own, and no end-to-end test noticed)."""
    repo = GitRepo(git_dir="/r/.git", common_dir="/r/.git", work_tree="/r")
    assert git_environment(repo, "/shadow") == {
        "GIT_DIR": "/r/.git",
        "GIT_COMMON_DIR": "/shadow",
        "GIT_WORK_TREE": "/r",
    }
    bare = GitRepo(git_dir="/r.git", common_dir="/r.git")
    assert git_environment(bare, "/shadow") == {"GIT_DIR": "/r.git", "GIT_COMMON_DIR": "/shadow"}
    assert git_environment(None, "/shadow") == {"GIT_DIR": "/shadow/no-repository"}


def test_preflight_fields_and_config_path() -> None:
    linked = parse_preflight("/r/.git/worktrees/w\n/r/.git\n/w\n", "/w")
    assert linked == GitRepo(git_dir="/r/.git/worktrees/w", common_dir="/r/.git", work_tree="/w")
    assert parse_preflight("/r/.git\n/r/.git\nrelative\n", "/r") is None
    assert parse_preflight("/r/.git /x\n/r/.git\n", None) == GitRepo(
        git_dir="/r/.git /x", common_dir="/r/.git"
    )
    assert parse_preflight("/r.git\n/r.git\n", "/r") == GitRepo(
        git_dir="/r.git", common_dir="/r.git"
    )
    extra = parse_preflight("/r/.git\n/r/.git\n/r\nwarning: x\n", "/r")
    assert extra is not None
    assert extra.work_tree == "/r"
    assert config_list_argv(GitRepo(git_dir="/r/.git/", common_dir="/r/.git/")) == (
        "config", "--file", "/r/.git/config", "--no-includes", "--list", "-z",
    )  # fmt: skip
    assert config_list_argv(GitRepo(git_dir="/X", common_dir="/X"))[2] == "/X/config"


def test_shadow_config_escapes_line_ends_and_splits_at_the_first_newline() -> None:
    text = shadow_config("remote.o.url\nhttps://x/a\tb\nc")
    assert '\turl = "https://x/a\\tb\\nc"' in text
