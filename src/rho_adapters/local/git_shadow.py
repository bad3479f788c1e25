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
from collections.abc import Iterator, Mapping

from rho_domain.errors import ToolError
from rho_domain.reach import ReadReach
from rho_domain.secrets import SecretPolicy
from rho_domain.shell.git_repo import (
    CONFIG_NAME,
    MAX_ALTERNATES_DEPTH,
    PREFLIGHT,
    SHARED,
    GitRepo,
    alternates,
    check_repository,
    config_list_argv,
    git_environment,
    parse_preflight,
    repository_places,
    shadow_config,
)

_TIMEOUT = 20.0
_MAX_CONFIG = 1 << 20


def _git(
    git: str, args: tuple[str, ...], cwd: str, env: Mapping[str, str], prefix: tuple[str, ...]
) -> str:
    try:
        done = subprocess.run(
            (*prefix, git, *args),
            cwd=cwd,
            env=dict(env),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=_TIMEOUT,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise ToolError(f"git: could not inspect the repository: {exc}") from exc
    return done.stdout[:_MAX_CONFIG].decode("utf-8", "surrogateescape")


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


def _discover(
    git: str,
    cwd: str,
    env: Mapping[str, str],
    prefix: tuple[str, ...],
    judged: tuple[SecretPolicy, ReadReach] | None,
) -> tuple[GitRepo | None, str]:
    repo = parse_preflight(_git(git, PREFLIGHT, cwd, env, prefix), _dot_git_parent(cwd))
    if repo is None:
        return None, ""
    if judged is not None:
        check_repository(_places(repo), *judged)
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
) -> Iterator[tuple[str, dict[str, str]]]:
    """Yield ``(shadow directory, environment for git)``; the directory is removed on exit.
    ``judged``: the executor's secrets policy and reach, which the repository's directories
    must pass (``check_repository``)."""
    repo, listing = _discover(git, cwd, env, prefix, judged)
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
