"""Git's places known by their shape, not their name: what is secret inside them.

``git init --bare store``, ``git clone --separate-git-dir gd`` and ``GIT_DIR=x`` make git
directories no name tells from any other directory: ``cat store/config`` printed a remote
URL's ``user:token@`` and ``strings gd/index`` the names inside a committed secret directory,
on every backend, where ``.git/config`` and ``.git/index`` were refused. git itself decides
by looking beside them (``is_git_directory`` in git's setup.c: a ``HEAD``, ``objects`` and
``refs``, or a ``commondir`` leading to them, a linked worktree's; no ``objects`` when
``GIT_OBJECT_DIRECTORY`` names the store elsewhere, so a ``HEAD`` beside ``refs`` suffices
here, probeshell22c); so do the executors, which
see the file system (``shape_of`` a directory's entry names): a path below a git directory
is judged also as if the directory were named ``.git`` (its config, index and scratch files
are the named ``.git/...`` ones, ``GIT_FILES``). Likewise an object store named otherwise
than ``objects`` (``GIT_OBJECT_DIRECTORY=od``, a store's ``objects`` a link to ``od``:
``cat od/5a/...`` into ``zcat`` read a committed file): an ``info`` beside a ``pack``, what
``git init`` makes in every store, and a path below it is judged as if it were named
``objects`` (its loose objects and packs, by their shape).
"""

from __future__ import annotations

from collections.abc import Iterable

from rho_domain.names import folded
from rho_domain.secrets import SecretPolicy, in_git_store

GIT_DIR = "g"  # a git directory: a HEAD beside refs (objects may be elsewhere) or a commondir
STORE = "s"  # an object store: an info beside a pack
_GIT_DIR_NEEDS = (frozenset(("head", "refs")), frozenset(("head", "commondir")))
_STORE_NEEDS = frozenset(("info", "pack"))


def shape_of(names: Iterable[str]) -> str | None:
    """``GIT_DIR`` or ``STORE`` when a directory whose entries are named ``names`` has that
    shape, else None (letter case aside: a superset of git's test, which reads the HEAD)."""
    present = {folded(name) for name in names}
    if any(need <= present for need in _GIT_DIR_NEEDS):
        return GIT_DIR
    return STORE if present >= _STORE_NEEDS else None


def as_dot_git(path: str, git_dir: str) -> str:
    """``path``, at or below the git directory ``git_dir``, spelled as if that directory
    were named ``.git`` (``/w/store/config`` -> ``/w/.git/config``)."""
    top = git_dir.rstrip("/")
    return f"{top.rpartition('/')[0]}/.git{path[len(top) :]}"


def shaped_refusal(policy: SecretPolicy, path: str, place: str, kind: str) -> str | None:
    """Why ``path``, below ``place`` (absolute, canonical) of the shape ``kind``, may not be
    read, or None: below a git directory, what a ``.git``'s config, index or scratch file
    is (its object store is left to its own rules); below an object store, its loose
    objects and packs."""
    rel = path[len(place.rstrip("/")) :]
    if kind == STORE:
        if not in_git_store(f"/objects{rel}"):
            return None
        return (
            f"{path!r} is in {place}, a git object store by its shape (an info beside a pack), "
            f"where it is objects{rel}, which is a secret location (a store's loose objects "
            "and packs)"
        )
    named = as_dot_git(path, place)
    if in_git_store(named) or not (reason := policy.location_refusal(named)):
        return None
    return (
        f"{path!r} is in {place}, a git directory by its shape (a HEAD beside refs "
        f"or a commondir), where it is .git{rel}: {reason}"
    )


def nearest_place(path: str, places: Iterable[tuple[str, str]]) -> tuple[str, str] | None:
    """The innermost of ``places`` ((directory, kind)) that ``path`` is below, or None."""
    inside = [p for p in places if path.startswith(p[0].rstrip("/") + "/")]
    return max(inside, key=lambda p: len(p[0])) if inside else None
