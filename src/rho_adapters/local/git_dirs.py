"""Git directories known by their shape on this machine (``rho_domain.git_dir_shape``): a
path word's ancestors looked at by the argv checks (``git_dir_refusal``), a walk's roots by
the sandbox's scan (``secret_scan.py``, which judges every directory it walks by its entries).
"""

from __future__ import annotations

import os

from rho_domain.git_dir_shape import dot_git_refusal, git_dir_shape
from rho_domain.secrets import SecretPolicy


def is_git_dir(directory: str) -> bool:
    """Whether ``directory`` has a git directory's shape (a ``HEAD`` is looked for first:
    one ``lstat`` for a directory that is none)."""
    if not os.path.lexists(os.path.join(directory, "HEAD")):
        return False
    try:
        return git_dir_shape(os.listdir(directory))
    except OSError:
        return False


def git_dir_of(real: str) -> str | None:
    """The nearest directory above the canonical ``real`` (not ``real`` itself) that has a git
    directory's shape, or None."""
    head = real.rstrip("/")
    while head:
        head = head.rpartition("/")[0]
        if is_git_dir(head or "/"):
            return head or "/"
    return None


def git_dir_refusal(policy: SecretPolicy, real: str) -> str | None:
    """Why the canonical ``real`` may not be read because of the git directory it is in, or
    None (the argv checks' judgement of a path word)."""
    git_dir = git_dir_of(real)
    return dot_git_refusal(policy, real, git_dir) if git_dir is not None else None
