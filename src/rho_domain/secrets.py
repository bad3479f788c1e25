"""The secrets policy: which real paths no tool and no shell stage may ever read.

One policy, applied by the executors to the *resolved real path* of every file a tool opens and
of every path word of every restricted shell stage (and, through the xargs guard, to every item
``xargs`` appends at run time). It is data (``secret_patterns``, whose names are named here
too) plus two small interpreters of that data:
``SecretPolicy.refusal`` (Python, ``fnmatch``'s rules on the casefolded path, matched by
``glob_set.GlobSet`` without compiling an expression) and ``secret_guard.guard_script`` (a
POSIX ``sh`` ``case`` over the same patterns, letters written as ``[aA]``), so the two cannot
drift (tests compare them path by path).

Rules, in order, on an absolute (canonical) path:

1. ``ALLOWED``: a few harmless files under refused trees (``/proc/cpuinfo``, ``/dev/null``...).
2. ``LOCATIONS``: secret trees wherever they are (``*/.ssh``, ``*/.aws``, ``*/.gnupg``,
   ``*/.config/gcloud``, ``*/.kube``, ``*/.docker/config.json``...) and system locations
   (``/proc``, ``/dev``, ``/etc/shadow``, ``/etc/gshadow``, ``/etc/sudoers*``, SSH host keys,
   ``/run/secrets``, services' credential files: ``service_secrets.py``), plus the
   executor's own ``SecretPolicy.locations`` (the session and configuration directories).
2b. ``homes``: every hidden entry of a home directory (``~/.m2``, ``~/.config/rclone``,
   ``~/.mozilla``, ``~/.bashrc``...): that is where tools keep credentials, under names no list
   can follow; unless it is inside one of ``open_trees`` (the workspace, when the user works
   in ``~/.config/nvim``).
3. ``NAMES`` on the last component (matched as ``/name``), unless it is a template
   (``TEMPLATES``: ``.env.example``...): ``.env`` variants, private keys (``*.pem``,
   ``*.key``, ``id_*`` without a dot), ``.netrc``, ``.pgpass``, credentials files, shell
   histories...
   Rules 1-3 judge the path again with each backup's, compressor's, archiver's, rotation's,
   editor's or file manager's suffix or mark taken off its names (``secret_twins``):
   ``id_rsa.gz``, ``.netrc.bak``, ``server.pem~``, ``.docker/config.json.orig``,
   ``.ssh.bak/config``, ``id_rsa.1``, ``#id_rsa#``, ``.netrc (copy)`` are copies
   (``secret_shapes.twin_stems``).
4. A component shaped as a Windows short (8.3) name (``ENV~1`` may be ``.env`` on NTFS).

A relative path is matched as if it were below some directory (``.env`` is ``*/.env``), so the
name rules also apply to what the model wrote. Patterns are lowercase; components are matched
as a disk compares them (``names.folded``: ``.ENV``, ``.e\u200cnv``, ``.env::$DATA`` are ``.env``).
"""

from __future__ import annotations

import functools

import attrs

from rho_domain.glob_set import GlobSet
from rho_domain.names import folded_text, short_name_refusal
from rho_domain.secret_patterns import (
    ALLOWED,
    EXCLUDED_NAMES,
    GIT_CONFIGS,
    GIT_FILES,
    GIT_INDEXES,
    GIT_OBJECTS,
    GIT_SCRATCH,
    HOME_SECRETS,
    LOCATIONS,
    LOOSE_FANOUT,
    NAMES,
    SSH_KEY,
    SSH_KEY_NOT,
    SYSTEM_SECRETS,
    TEMPLATES,
    in_loose_fanout,
)
from rho_domain.secret_shapes import (
    TEMPLATE,
    a_store,
    absolute,
    as_copy,
    components,
    in_git_store,
    matched_text,
    name_refusal,
    twin_stems,
)
from rho_domain.value_methods import value_eq, value_hash, value_repr

__all__ = [
    "ALLOWED",
    "DEFAULT_POLICY",
    "EXCLUDED_NAMES",
    "GIT_CONFIGS",
    "GIT_FILES",
    "GIT_INDEXES",
    "GIT_OBJECTS",
    "GIT_SCRATCH",
    "HOME_SECRETS",
    "LOCATIONS",
    "LOOSE_FANOUT",
    "NAMES",
    "SSH_KEY",
    "SSH_KEY_NOT",
    "SYSTEM_SECRETS",
    "TEMPLATES",
    "SecretPolicy",
    "case_insensitive",
    "in_git_store",
    "in_loose_fanout",
]


# Each rule group's patterns that the policy itself matches, shaped once (``GlobSet``).
_ALLOWED = GlobSet(ALLOWED)
_LOCATIONS = GlobSet(LOCATIONS)


@attrs.frozen
class SecretPolicy:
    """The rules of the module docstring plus ``locations``: absolute directories or files of
    this deployment (the session directory, the agent's configuration) that are secret too.
    ``homes`` (home directories of this machine) say where ``HOME_SECRETS`` concretely are, for
    the sandbox to hide them and recursive readers to skip them, and every hidden entry below
    them is secret (rule 2b) except inside ``open_trees`` (the workspace). ``named_by``:
    what named some of ``locations`` (a location, and the configuration or variable naming
    it as a credential file), said in their refusals so an operator can find why;
    ``anywhere``: relative names secret below every directory (named by ``*/NAME``)."""

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    locations: tuple[str, ...] = ()
    homes: tuple[str, ...] = ()
    open_trees: tuple[str, ...] = ()
    named_by: tuple[tuple[str, str], ...] = ()
    # relative names a program resolves against its working directory, wherever that is (an
    # ssh configuration's ``IdentityFile keys/deploy``): secret below every directory
    anywhere: tuple[str, ...] = ()

    def absolute_locations(self) -> tuple[str, ...]:
        """Concrete secret locations: the system's, those below ``homes``, and ``locations``."""
        below_homes = tuple(
            f"{home.rstrip('/')}/{rel}" for home in self.homes for rel in HOME_SECRETS
        )
        return (*SYSTEM_SECRETS, *below_homes, *self.locations)

    def refusal(self, path: str) -> str | None:
        """Why ``path`` may not be read, or None. Give the canonical absolute path (symlinks
        resolved) where there is one; a relative path is judged by its names only.

        A pure function of the policy's strings and ``path`` (no filesystem access), so its
        answers are remembered per process (``_judged``): every Session's executor judges
        the same workspace paths again, and a judgement costs ~6-14 µs a path
        (``bench/bench_secrets.py``)."""
        if not path:
            return None
        return _judged(self, path)

    def git_refusal(self, path: str) -> str | None:
        """``refusal(path)`` as git's own checks see it: a repository's object store
        (``GIT_OBJECTS``) is a secret to every tool but git, which reads it itself, so a path
        in one is judged by the directory holding the store and by ``locations`` alone (the
        hard links of secrets found there: an ``objects/info/alternates`` linked to ``.env``)."""
        holder = path
        while in_git_store(holder) and "/" in holder.strip("/"):
            holder = holder.rstrip("/").rsplit("/", 1)[0] or "/"
        if holder == path:
            return self.refusal(path)
        parts = components(path)
        for location in self.locations:  # a store the scan found is no hard link's name
            base = components(location)
            if parts[: len(base)] == base and not a_store(location):
                return f"{path!r} is {location}, another name of a secret the agent never reads"
        return self.refusal(holder)

    def judge(self, path: str) -> str | None:
        """``refusal(path)`` worked out now, never remembered (``_judged`` calls it)."""
        stems = twin_stems(path)
        for stem in stems:
            if path.startswith("/") and _ALLOWED.matches(matched_text(stem)):
                return None
            if reason := self.location_refusal(stem):
                return as_copy(path, stem, reason)
        for stem in stems:  # a template is a last stem: no location can follow it
            reason = name_refusal(stem)
            if reason == TEMPLATE:
                return None
            if reason is not None:
                return as_copy(path, stem, reason)
        return short_name_refusal(path)

    def location_refusal(self, path: str) -> str | None:
        """Rule 2 alone (secret trees and locations; not the names of rule 3): what a word
        with a slash is judged by before anything looks at the filesystem."""
        parts = components(path)
        for location in self.locations:
            base = components(location)
            if path.startswith("/") and parts[: len(base)] == base:
                reason = f"{path!r} is inside {location}, a secret location the agent never reads"
                return reason + self._why(location)
        for name in self.anywhere:
            if _holds(parts, components(name)):
                reason = f"{path!r} is {name} below some directory, a secret wherever it is"
                return reason + self._why(f"*/{name}")
        low = absolute(folded_text(path))
        if not _LOCATIONS.matches(low):
            return self._home_refusal(path, parts)
        for pattern in _LOCATIONS.matching(low):
            if path.startswith("/") or pattern.startswith("*"):
                return f"{path!r} is a secret location ({pattern.removesuffix('/*')})"
        return self._home_refusal(path, parts)

    def _why(self, location: str) -> str:
        """What named ``location`` as a credential file, said as a refusal's end, or ""."""
        by = next((by for named, by in self.named_by if named == location), None)
        return "" if by is None else f" (a credential file {by} names)"

    def _home_refusal(self, path: str, parts: tuple[str, ...]) -> str | None:
        """Rule 2's last checks: a store's loose objects by their shape, a home's entry."""
        if in_loose_fanout(path):
            return f"{path!r} is a secret location (*/{LOOSE_FANOUT}/<two hex digits>)"
        if path.startswith("/") and (home := self._hidden_home_entry(parts)):
            return (
                f"{path!r} is a hidden entry of the home directory {home}, a secret location "
                "(tools keep credentials there under any name)"
            )
        return None

    def _hidden_home_entry(self, parts: tuple[str, ...]) -> str | None:
        """The home whose hidden entry ``parts`` is in (rule 2b), or None."""
        for home in self.homes:
            base = components(home)
            inside = len(parts) > len(base) and parts[: len(base)] == base
            if inside and parts[len(base)].startswith(".") and not self._open(parts):
                return home
        return None

    def _open(self, parts: tuple[str, ...]) -> bool:
        return any(parts[: len(c)] == c for c in map(components, self.open_trees))

    def is_secret(self, path: str) -> bool:
        """True when ``refusal(path)`` has a reason."""
        return self.refusal(path) is not None


def _holds(parts: tuple[str, ...], name: tuple[str, ...]) -> bool:
    """Whether ``name``'s components are a run of ``parts`` (the path is it, or below it)."""
    width = len(name)
    return bool(width) and any(parts[i : i + width] == name for i in range(len(parts) - width + 1))


# Bounded: paths come from the model's arguments and the commands' words.
@functools.lru_cache(maxsize=4096)
def _judged(policy: SecretPolicy, path: str) -> str | None:
    """``policy.judge(path)``, remembered by the (frozen, hashable) policy and the path."""
    return policy.judge(path)


DEFAULT_POLICY = SecretPolicy()


def case_insensitive(pattern: str) -> str:
    """A lowercase glob as a ``case`` pattern matching any letter case (``[eE]``)."""
    return "".join(f"[{c}{c.upper()}]" if c.isalpha() and c.isascii() else c for c in pattern)
