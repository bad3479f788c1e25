"""The files this machine's git configurations name as credential sources
(``rho_domain.git_named_files``), found when an executor is made.

The configurations read are those git reads for a command in the executor's roots: the
repository holding each root (its ``.git`` directory, or the one a ``.git`` file names, with
its common directory's config and its ``config.worktree``), every known home's
``.gitconfig`` and ``.config/git/config``, ``$XDG_CONFIG_HOME/git/config`` and
``/etc/gitconfig``, and what they include, each read at most ``MAX_CONFIG_BYTES``, at most
``MAX_CONFIGS`` in all. A relative name is placed as git may place it: below the repository's
work tree (git's directory when it runs a helper), its git directory and the configuration's
own directory (an include's base). A repository nested inside the workspace (another clone in
a subdirectory) is not looked for: see docs/security.md.

Every executor of a process asks again (a Session per request makes one each time), so a
configuration's findings are remembered per (real path, device, inode, mtime_ns, ctime_ns,
size) for the process (``_FINDINGS``): a file changed, replaced or moved is read again, so a
credential file named after the first executor is still a secret for the next. A name that
does not exist is passed over after one ``stat``, without resolving its real path.
"""

from __future__ import annotations

import contextlib
import os
import stat
import time
from collections.abc import Callable, Iterable, Mapping, Sequence

from rho_domain.git_named_files import (
    MAX_CONFIG_BYTES,
    MAX_CONFIGS,
    NamedFiles,
    named_in,
    placed,
)

_FindingsKey = tuple[str, int, int, int, int, int]
# a configuration's findings by its real path and what its stat says of its content; bounded
# (the oldest forgotten first): a process sees a few configurations, git's own and its users'
_FINDINGS: dict[_FindingsKey, NamedFiles] = {}
_MAX_FINDINGS = 256
_SETTLED_NS = 2_000_000_000  # older than this, a change moves mtime_ns or ctime_ns


def git_named_secrets(
    roots: Sequence[str],
    homes: Sequence[str],
    env: Mapping[str, str] | None,
    *,
    now_ns: Callable[[], int] = time.time_ns,
) -> tuple[str, ...]:
    """The real paths of the files the configurations above name (credential sources and
    included configurations): secret locations for the executor's policy. ``env``: the
    commands' environment (``HOME``, ``XDG_CONFIG_HOME``), None for none; ``now_ns``: the
    clock that says whether a configuration's times are settled (see ``_findings``)."""
    env = env or {}
    home = env.get("HOME") or (homes[0] if homes else None)
    pending: list[tuple[str, tuple[str, ...]]] = []  # (config, bases of its relative names)
    for root in roots:
        pending.extend(_repository_configs(root))
    xdg = env.get("XDG_CONFIG_HOME")
    for user_home in dict.fromkeys((*homes, *([home] if home else []))):
        pending.append((f"{user_home}/.gitconfig", (user_home,)))
        pending.append((f"{user_home}/.config/git/config", (user_home,)))
    if xdg:
        pending.append((f"{xdg}/git/config", (xdg,)))
    pending.append(("/etc/gitconfig", ("/etc",)))
    found: list[str] = []
    seen: set[str] = set()
    while pending and len(seen) < MAX_CONFIGS:
        config, bases = pending.pop(0)
        if not _exists(config):
            # counted by its spelling, unresolved: as before, each missing name takes one
            # of the MAX_CONFIGS places (distinct names already could fill them all)
            seen.add(config)
            continue
        real = os.path.realpath(config)
        if real in seen:
            continue
        seen.add(real)
        named = _findings(real, now_ns)
        if named is None:
            continue
        here = os.path.dirname(real)
        for value in named.includes:
            include = placed(value, base=here, home=home)
            if include is not None:
                found.append(include)
                pending.append((include, bases))
        found.extend(_placed_all(named.secrets, (*bases, here), home))
    # a directory named (``--file=.``) is no credential file git could write: not a secret
    return tuple(dict.fromkeys(r for p in found if not os.path.isdir(r := os.path.realpath(p))))


def _placed_all(values: Iterable[str], bases: Sequence[str], home: str | None) -> list[str]:
    return [
        path
        for value in values
        for base in dict.fromkeys(bases)
        if (path := placed(value, base=base, home=home)) is not None
    ]


def _repository_configs(root: str) -> list[tuple[str, tuple[str, ...]]]:
    """The configurations of the repository holding ``root``, with the bases of their
    relative names (the work tree, the git directory)."""
    head = os.path.realpath(root)
    while True:
        dot_git = os.path.join(head, ".git")
        git_dir = dot_git if os.path.isdir(dot_git) else _linked(dot_git, head)
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


def _linked(dot_git: str, work_tree: str) -> str | None:
    """The git directory a ``.git`` file names (``gitdir: PATH``), or None."""
    text = _text_of(dot_git)
    if text is None or not text.startswith("gitdir:"):
        return None
    return os.path.join(work_tree, text.removeprefix("gitdir:").strip())


def _text_of(path: str) -> str | None:
    with contextlib.suppress(OSError, UnicodeDecodeError):
        if os.path.isfile(path) and os.path.getsize(path) <= 4096:
            with open(path, encoding="utf-8") as file:
                return file.read()
    return None


def _exists(path: str) -> bool:
    """Whether ``path`` names anything (its links followed): one ``stat``."""
    try:
        os.stat(path)
    except (OSError, ValueError):  # ValueError: a NUL in a name from a configuration
        return False
    return True


def _findings(real: str, now_ns: Callable[[], int]) -> NamedFiles | None:
    """What the configuration at ``real`` names, or None (missing, not a regular file, past
    ``MAX_CONFIG_BYTES``); read and parsed once per content (see the module docstring)."""
    try:
        info = os.stat(real)
    except (OSError, ValueError):
        return None
    if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_CONFIG_BYTES:
        return None
    key = (real, info.st_dev, info.st_ino, info.st_mtime_ns, info.st_ctime_ns, info.st_size)
    named = _FINDINGS.get(key)
    if named is None:
        text = _read(real)
        if text is None:
            return None
        named = named_in(text)
        # A file changed within the filesystem's clock tick can keep its times and size
        # (git's "racy" entries): one changed lately is read again until it is settled.
        if now_ns() - max(info.st_mtime_ns, info.st_ctime_ns) > _SETTLED_NS:
            if len(_FINDINGS) >= _MAX_FINDINGS:
                del _FINDINGS[next(iter(_FINDINGS))]
            _FINDINGS[key] = named
    return named


def _read(path: str) -> str | None:
    """A configuration's text, or None (unreadable)."""
    with contextlib.suppress(OSError), open(path, encoding="utf-8", errors="replace") as file:
        return file.read()
    return None
