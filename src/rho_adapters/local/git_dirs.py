"""Git's places known by their shape on this machine (``rho_domain.git_dir_shape``): a path
word's ancestors looked at by the argv checks and the file tools (``shaped_place_refusal``),
a walk's roots by the sandbox's scan (``secret_scan.py``, which judges every directory it
walks by its entries).
"""

from __future__ import annotations

import os

from rho_domain.git_dir_shape import shape_of, shaped_refusal
from rho_domain.secrets import SecretPolicy


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
