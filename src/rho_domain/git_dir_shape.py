"""A git directory known by its shape, not its name: what is secret inside it.

``git init --bare store``, ``git clone --separate-git-dir gd`` and ``GIT_DIR=x`` make git
directories no name tells from any other directory: ``cat store/config`` printed a remote
URL's ``user:token@`` and ``strings gd/index`` the names inside a committed secret directory,
on every backend, where ``.git/config`` and ``.git/index`` were refused. git itself decides
by looking beside them (``is_git_directory`` in git's setup.c: a ``HEAD``, ``objects`` and
``refs``, or a ``commondir`` leading to them, a linked worktree's); so do the executors, which
see the file system (``git_dir_shape`` on a directory's entry names), and a path below such
a directory is judged also as if the directory were named ``.git`` (``dot_git_refusal``):
its config, index and scratch files are the named ``.git/...`` ones (``GIT_FILES``). The
object store keeps its own rules (loose objects and packs by their shape, wherever they are).
"""

from __future__ import annotations

from collections.abc import Iterable

from rho_domain.names import folded
from rho_domain.secrets import SecretPolicy, in_git_store

HEAD = "head"
# beside a HEAD, either makes a git directory: its own store and refs, or a linked worktree's
# ``commondir`` naming where they are
STORES = (frozenset(("objects", "refs")), frozenset(("commondir",)))


def git_dir_shape(names: Iterable[str]) -> bool:
    """Whether a directory whose entries are named ``names`` has a git directory's shape
    (letter case aside: a superset of git's own test, which also reads the ``HEAD``)."""
    present = {folded(name) for name in names}
    return HEAD in present and any(need <= present for need in STORES)


def as_dot_git(path: str, git_dir: str) -> str:
    """``path``, at or below the git directory ``git_dir``, spelled as if that directory
    were named ``.git`` (``/w/store/config`` -> ``/w/.git/config``)."""
    top = git_dir.rstrip("/")
    return f"{top.rpartition('/')[0]}/.git{path[len(top) :]}"


def dot_git_refusal(policy: SecretPolicy, path: str, git_dir: str) -> str | None:
    """Why ``path``, below the git directory ``git_dir`` (absolute, canonical), may not be
    read, being there what a ``.git``'s config, index or scratch file is; or None. The
    object store is left to its own rules, as are the names ``policy`` refuses anyway."""
    named = as_dot_git(path, git_dir)
    if in_git_store(named) or not (reason := policy.location_refusal(named)):
        return None
    return (
        f"{path!r} is in {git_dir}, a git directory by its shape (a HEAD beside objects "
        f"and refs), where it is .git{path[len(git_dir.rstrip('/')) :]}: {reason}"
    )


def nearest_git_dir(path: str, git_dirs: Iterable[str]) -> str | None:
    """The innermost of ``git_dirs`` that ``path`` is below (not ``path`` itself), or None."""
    inside = [d for d in git_dirs if path.startswith(d.rstrip("/") + "/")]
    return max(inside, key=len) if inside else None
