"""Git's places on this machine: a repository's configurations (``repository_configs``), and
those known by their shape (``rho_domain.git_dir_shape``): a path
word's ancestors looked at by the argv checks and the file tools (``shaped_place_refusal``),
a walk's roots by the sandbox's scan (``secret_scan.py``, which judges every directory it
walks by its entries).
"""

from __future__ import annotations

import contextlib
import glob
import os
import stat
from collections.abc import Sequence

from rho_domain.git_dir_shape import shape_of, shaped_refusal
from rho_domain.git_named_files import GCM_NAMESPACE_DEPTH, gcm_namespace
from rho_domain.secrets import SecretPolicy

_MAX_TEXT = 4096  # a .git file or commondir is a line: a larger one is not git's


def _shape(directory: str) -> str | None:
    """``directory``'s shape, a ``HEAD`` or a ``pack`` looked for first: one or two
    ``lstat`` for a directory that is neither."""
    if not any(os.path.lexists(os.path.join(directory, n)) for n in ("HEAD", "pack")):
        return None
    try:
        return shape_of(os.listdir(directory))
    except OSError:
        return None


def shaped_place_of(real: str) -> tuple[str, str] | None:
    """The nearest directory above the canonical ``real`` (not ``real`` itself) that has a
    git directory's or an object store's shape, with that shape; or None."""
    head = real.rstrip("/")
    while head:
        head = head.rpartition("/")[0]
        if kind := _shape(head or "/"):
            return head or "/", kind
    return None


def shaped_place_refusal(policy: SecretPolicy, real: str) -> str | None:
    """Why the canonical ``real`` may not be read because of the git directory or object
    store it is in, or None (the argv checks' and the file tools' judgement of a path)."""
    place = shaped_place_of(real)
    return shaped_refusal(policy, real, *place) if place is not None else None


def repository_configs(root: str) -> list[tuple[str, tuple[str, ...]]]:
    """The configurations of the repository holding ``root`` (a real path), with the bases
    of their relative names (the work tree, the git directory)."""
    head = root
    while True:
        dot_git = os.path.join(head, ".git")
        git_dir = _git_dir_of(dot_git, head)
        if git_dir is not None:
            bases = (head, git_dir)
            configs: list[tuple[str, tuple[str, ...]]] = [
                (f"{git_dir}/config", bases),
                (f"{git_dir}/config.worktree", bases),
            ]
            common = _text_of(f"{git_dir}/commondir")
            if common:
                shared = os.path.join(git_dir, common.strip())
                configs.append((f"{shared}/config", (head, shared)))
            return configs
        parent = os.path.dirname(head)
        if parent == head:
            return []
        head = parent


def _git_dir_of(dot_git: str, work_tree: str) -> str | None:
    """The git directory ``dot_git`` is (a directory) or names (a ``.git`` file's ``gitdir:
    PATH``), or None: one ``stat`` where there is none, at every level walked up."""
    try:
        info = os.stat(dot_git)
    except (OSError, ValueError):
        return None
    if stat.S_ISDIR(info.st_mode):
        return dot_git
    if not stat.S_ISREG(info.st_mode) or info.st_size > _MAX_TEXT:
        return None
    text = _text_of(dot_git)  # opened without waiting: a FIFO swapped in answers None
    if text is None or not text.startswith("gitdir:"):
        return None
    return os.path.join(work_tree, text.removeprefix("gitdir:").strip())


def _text_of(path: str) -> str | None:
    data = regular_head(path, _MAX_TEXT + 1)
    with contextlib.suppress(UnicodeDecodeError):
        return data.decode("utf-8") if data is not None and len(data) <= _MAX_TEXT else None
    return None


def regular_head(path: str, size: int) -> bytes | None:
    """At most ``size`` bytes of the regular file at ``path``, or None (missing, not a
    regular file); opened without waiting and judged open, so a FIFO, even one swapped in
    after a ``stat``, answers None and never blocks the executor's start."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except (OSError, ValueError):
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        chunks: list[bytes] = []
        while (left := size - sum(map(len, chunks))) > 0 and (chunk := os.read(fd, left)):
            chunks.append(chunk)
        return b"".join(chunks)
    except OSError:
        return None
    finally:
        os.close(fd)


def gcm_namespaces(store: str, held: Sequence[tuple[str, ...]]) -> list[str]:
    """The namespaces of Git Credential Manager's plaintext store ``store`` (logins at
    ``STORE/NAMESPACE/SCHEME/HOST[/PATH...]/ACCOUNT.credential``, the path there with
    ``credential.useHttpPath``): the default ``git`` and the directory of every other
    namespace of up to ``GCM_NAMESPACE_DEPTH`` components holding a login by that shape
    (``credential.namespace`` or ``GCM_NAMESPACE`` chose it; ``git_named_files.gcm_namespace``
    says which directory is hidden), found whatever configuration or variable named it."""
    found = [os.path.join(store, "git")]
    for depth in range(GCM_NAMESPACE_DEPTH + 1):
        pattern = os.path.join(glob.escape(store), *("*",) * depth, "http*")
        for scheme in glob.glob(pattern, include_hidden=True):
            if _holds_login(scheme):
                found.append(gcm_namespace(store, scheme, held))
    return list(dict.fromkeys(found))


def _holds_login(scheme: str) -> bool:
    """Whether a ``*.credential`` file lies below a host directory of ``scheme`` (links
    to directories not followed)."""
    for top, _, files in os.walk(scheme):
        if top != scheme and any(name.endswith(".credential") for name in files):
            return True
    return False
