"""The shadow common directory for git stages on this machine (see rho_domain.shell.git_repo).

``git_shadow(git, cwd, env, prefix)`` runs the discovery and the config listing (both read,
neither runs a repository-named program; ``prefix`` runs them in the same bubblewrap sandbox as
the commands when there is one), refuses a repository found in a secret location or out of
reach (``check_repository``, on the real paths), builds the private directory and yields the
environment the git stages need; the directory is removed afterwards.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Iterator, Mapping, Sequence

from rho_domain.errors import ToolError
from rho_domain.reach import ReadReach
from rho_domain.secrets import SecretPolicy
from rho_domain.shell.git_repo import (
    CONFIG_NAME,
    MAX_ALTERNATES_DEPTH,
    MAX_REPOSITORY_ENTRIES,
    PREFLIGHT,
    SHARED,
    UNOPENED,
    GitRepo,
    RepositoryFiles,
    alternates,
    check_repository,
    check_repository_files,
    config_list_argv,
    git_environment,
    is_object_data,
    parse_preflight,
    repository_places,
    shadow_config,
)

_TIMEOUT = 20.0
_MAX_CONFIG = 1 << 20


def _git(
    git: str,
    args: tuple[str, ...],
    cwd: str,
    env: Mapping[str, str],
    prefix: tuple[str, ...],
    roots: Sequence[str] = (),
) -> str:
    """The output of git run in the directory walked to at ``cwd`` and, in ``prefix``'s sandbox,
    with ``roots`` bound from the directories walked to, as the stage will be (``run_held``):
    by path, a parent swapped for a link meanwhile discovered another repository."""
    from rho_adapters.local.held_dirs import run_held

    try:
        done = run_held(
            (*prefix, git, *args),
            cwd,
            roots,
            env=dict(env),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=_TIMEOUT,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise ToolError(f"git: could not inspect the repository: {exc}") from exc
    output: bytes = done.stdout
    return output[:_MAX_CONFIG].decode("utf-8", "surrogateescape")


def _dot_git_parent(cwd: str) -> str | None:
    directory = os.path.abspath(cwd)
    while not os.path.lexists(os.path.join(directory, ".git")):
        parent = os.path.dirname(directory)
        if parent == directory:
            return None
        directory = parent
    return directory


def _places(repo: GitRepo) -> tuple[str, ...]:
    """The real directories git reads ``repo`` from (``check_repository`` judges them): its
    own, each shared entry of the common directory, the object directories borrowed."""
    places = [os.path.realpath(p) for p in repository_places(repo)]
    for name in SHARED:
        if os.path.lexists(entry := os.path.join(repo.common_dir, name)):
            places.append(os.path.realpath(entry))
    pending = [os.path.realpath(os.path.join(repo.common_dir, "objects"))]
    for _ in range(MAX_ALTERNATES_DEPTH):
        borrowed: list[str] = []
        for objects in pending:
            try:
                with open(os.path.join(objects, "info", "alternates"), "rb") as handle:
                    text = handle.read(_MAX_CONFIG).decode("utf-8", "surrogateescape")
            except OSError:
                continue
            borrowed += [os.path.realpath(p) for p in alternates(objects, text)]
        places += borrowed
        pending = borrowed
    return tuple(dict.fromkeys(places))


def _walk_roots(repo: GitRepo, places: Sequence[str]) -> tuple[str, ...]:
    """The directories git opens files in by itself: the git and common directories, then
    the other ``places`` that are directories outside them (shared entries linked elsewhere,
    borrowed object directories), not the work tree."""
    own = tuple(dict.fromkeys(os.path.realpath(d) for d in (repo.git_dir, repo.common_dir)))
    work_tree = os.path.realpath(repo.work_tree) if repo.work_tree else None
    others = [
        p
        for p in places
        if p != work_tree
        and os.path.isdir(p)
        and not any(p == o or p.startswith(o.rstrip("/") + "/") for o in own)
    ]
    return (*(d for d in own if os.path.isdir(d)), *others)


def repository_files(
    roots: Sequence[str], *, limit: int = MAX_REPOSITORY_ENTRIES
) -> RepositoryFiles:
    """The symbolic links (with their real paths) below ``roots`` (a repository's own
    directories, as ``_walk_roots`` gives them), and the files with several names there but
    ``OBJECT_DATA``; links are not followed, and ``UNOPENED`` entries at a root's top are
    skipped (``check_repository_files``)."""
    links: list[tuple[str, str]] = []
    linked: list[str] = []
    budget = limit
    stack = [(root, True) for root in roots]  # (directory, at a root's top)
    while stack:
        directory, top = stack.pop()
        try:
            with os.scandir(directory) as entries:
                for entry in entries:
                    budget -= 1
                    if budget < 0:
                        return RepositoryFiles(complete=False)
                    if top and entry.name in UNOPENED:
                        continue
                    if entry.is_symlink():
                        links.append((entry.path, os.path.realpath(entry.path)))
                    elif entry.is_dir(follow_symlinks=False):
                        stack.append((entry.path, False))
                    elif (
                        entry.is_file(follow_symlinks=False)
                        and entry.stat(follow_symlinks=False).st_nlink > 1
                        # a clone's objects are hard links, and no object is a text git prints
                        and not is_object_data(entry.path)
                    ):
                        linked.append(entry.path)
        except OSError:
            continue  # unreadable or vanished: git cannot open it either
    return RepositoryFiles(links=tuple(dict.fromkeys(links)), linked=tuple(dict.fromkeys(linked)))


def _discover(
    git: str,
    cwd: str,
    env: Mapping[str, str],
    prefix: tuple[str, ...],
    judged: tuple[SecretPolicy, ReadReach] | None,
    aliases: Callable[[Sequence[str]], tuple[SecretPolicy, bool]] | None,
    roots: Sequence[str],
) -> tuple[GitRepo | None, str]:
    repo = parse_preflight(_git(git, PREFLIGHT, cwd, env, prefix, roots), _dot_git_parent(cwd))
    if repo is None:
        return None, ""
    if judged is not None:
        places = _places(repo)
        check_repository(places, *judged)
        roots = _walk_roots(repo, places)
        found = repository_files(roots)
        policy, complete = judged[0], True
        if found.linked and aliases is not None:
            policy, complete = aliases(roots)
        check_repository_files(found, policy, judged[1], aliases_complete=complete)
    # Outside the sandbox, which masks the config (a secret: remote URLs with tokens); the
    # listing runs no program, and only its inert keys reach the shadow (shadow_config).
    return repo, _git(git, config_list_argv(repo), cwd, env, ())


@contextlib.contextmanager
def git_shadow(
    git: str,
    cwd: str,
    env: Mapping[str, str],
    prefix: tuple[str, ...] = (),
    judged: tuple[SecretPolicy, ReadReach] | None = None,
    aliases: Callable[[Sequence[str]], tuple[SecretPolicy, bool]] | None = None,
    roots: Sequence[str] = (),
) -> Iterator[tuple[str, dict[str, str]]]:
    """Yield ``(shadow directory, environment for git)``; the directory is removed on exit.
    ``judged``: the executor's secrets policy and reach, which the repository's directories
    and the links inside them must pass (``check_repository``, ``check_repository_files``);
    ``aliases(roots)``: that policy with the hard links of secrets found below ``roots`` and
    the workspace as secrets too, and whether that scan was whole (asked only when a file
    of the repository has several names); ``roots``: the sandbox's roots, which ``prefix``
    binds (``run_held``)."""
    repo, listing = _discover(git, cwd, env, prefix, judged, aliases, roots)
    shadow = tempfile.mkdtemp(prefix="rho-git-")
    try:
        if repo is not None:
            with open(
                os.path.join(shadow, CONFIG_NAME), "w", encoding="utf-8", errors="surrogateescape"
            ) as handle:
                handle.write(shadow_config(listing))
            for name in SHARED:
                target = os.path.join(repo.common_dir, name)
                if os.path.lexists(target):
                    os.symlink(target, os.path.join(shadow, name))
        yield shadow, git_environment(repo, shadow)
    finally:
        shutil.rmtree(shadow, ignore_errors=True)
