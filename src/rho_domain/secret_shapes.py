"""A path's shape as the secrets policy judges it (``secrets.SecretPolicy``): its components,
its last name (rule 3), the paths it is a copy of (``twin_stems``) and whether it is in a git
object store. Pure string functions; the policy's locations and homes are ``secrets.py``'s."""

from __future__ import annotations

import functools
from collections import deque

from rho_domain.glob_set import GlobSet, glob_matches
from rho_domain.names import folded, folded_text
from rho_domain.secret_patterns import (
    GIT_OBJECTS,
    NAMES,
    SSH_KEY,
    SSH_KEY_NOT,
    TEMPLATES,
    in_loose_fanout,
)
from rho_domain.secret_twins import may_be_copy, name_stems

__all__ = [
    "TEMPLATE",
    "a_store",
    "absolute",
    "as_copy",
    "components",
    "in_git_store",
    "matched_text",
    "name_refusal",
    "twin_stems",
]


def components(path: str) -> tuple[str, ...]:
    """``path``'s names, without empty and ``.`` components."""
    return tuple(part for part in path.split("/") if part not in ("", "."))


def matched_text(path: str) -> str:
    """``path`` as its rules match it: its ``components`` joined, absolute when it was."""
    parts = components(path)
    return "/" + "/".join(parts) if path.startswith("/") else "/".join(parts)


# Each rule group's patterns, shaped once (``GlobSet``: string methods, no expression to
# compile at a process's first judgement). The pattern-by-pattern order is kept, to name the
# rule that matched.
_TEMPLATES = GlobSet(TEMPLATES)
_NAMES = GlobSet(NAMES)
_NAMES_OR_KEY = GlobSet((*NAMES, SSH_KEY))
_STORE = GlobSet(GIT_OBJECTS)
_STORES = GlobSet((*GIT_OBJECTS, *(f"{p}/*" for p in GIT_OBJECTS)))


def name_refusal(path: str) -> str | None:
    """Rule 3: the last component's name, templates excepted (None for them, and
    ``TEMPLATE`` to stop ``SecretPolicy.judge`` from judging the name's stems)."""
    parts = components(path)
    name = "/" + folded(parts[-1]) if parts else "/"
    if _TEMPLATES.matches(name):
        return TEMPLATE
    if not _NAMES_OR_KEY.matches(name):
        return None
    pattern = next(_NAMES.matching(name), None)
    if pattern is not None:
        return f"{path!r} is a secrets file ({pattern.removeprefix('*/')})"
    if glob_matches(name, SSH_KEY) and not glob_matches(name, SSH_KEY_NOT):
        return f"{path!r} is a secret (an SSH private key)"
    return None


TEMPLATE = ""  # name_refusal's answer for a template: no reason, and no stem judged after it


def twin_stems(path: str) -> tuple[str, ...]:
    """``path`` and the paths it is a copy of: its last component's ``name_stems``, below its
    directory as written and, when that differs, below the directory whose components are
    each reduced to their last stem (``.ssh.bak/config`` is a copy of ``.ssh/config``)."""
    # may_be_copy(path) is may_be_copy(head) or may_be_copy(last): no twin suffix or mark
    # holds a slash
    head, _, last = path.rstrip("/").rpartition("/")
    directories = _copied_directories(head)
    if directories is None:
        if not may_be_copy(last):
            return (path,)
        directories = (head,)
    stems = [path]
    for directory in directories:
        for stem in name_stems(folded(last)):
            stems.append(f"{directory}/{stem}" if directory or path.startswith("/") else stem)
    return tuple(dict.fromkeys(stems))


# Bounded; keyed by the directory: a scan or a listing judges many names in each one, and a
# directory such as pytest-1 or python3.11 may be a copy (its stems cost ~30 us a name)
@functools.lru_cache(maxsize=1024)
def _copied_directories(head: str) -> tuple[str, ...] | None:
    """None when no component of ``head`` may be a copy; else ``head`` and, when it differs,
    ``head`` with each component reduced to its last stem (``twin_stems``)."""
    if not may_be_copy(head):
        return None
    ends = (deque(name_stems(folded(p)), maxlen=1) for p in head.split("/"))
    reduced = "/".join(stem.pop() if stem else "" for stem in ends)
    return tuple(dict.fromkeys((head, reduced)))


def as_copy(path: str, stem: str, reason: str) -> str:
    """``reason`` (found for ``stem``) said of ``path``, as a copy's when the two differ."""
    return reason if stem == path else f"{path!r} is a copy of a secret: {reason}"


def in_git_store(path: str) -> bool:
    """Whether ``path`` is a repository's object store (``GIT_OBJECTS``) or inside one, or
    a store's loose objects (``in_loose_fanout``)."""
    return _STORES.matches(absolute(folded_text(path))) or in_loose_fanout(path)


def a_store(location: str) -> bool:
    """Whether ``location`` (one the scan found) is a store itself, or a store's fan-out
    directory of loose objects: no hard link's name, git reads inside it."""
    head, _, last = location.rstrip("/").rpartition("/")
    fanout = len(last) == 2 and in_loose_fanout(location) and not in_loose_fanout(head)
    return fanout or _STORE.matches(folded_text(location))


def absolute(path: str) -> str:
    """``path`` as matched: absolute paths as they are, relative ones below some directory."""
    return path if path.startswith("/") else "/*/" + path
