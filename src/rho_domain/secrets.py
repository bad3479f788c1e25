"""The secrets policy: which real paths no tool and no shell stage may ever read.

One policy, applied by the executors to the *resolved real path* of every file a tool opens and
of every path word of every restricted shell stage (and, through the xargs guard, to every item
``xargs`` appends at run time). It is data (``secret_patterns``, whose names are named here
too) plus two small interpreters of that data:
``SecretPolicy.refusal`` (Python, ``fnmatch``'s rules on the casefolded path, matched by
``glob_set.GlobSet`` without compiling an expression) and ``guard_script`` (a
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
4. A component shaped as a Windows short (8.3) name (``ENV~1`` may be ``.env`` on NTFS).

A relative path is matched as if it were below some directory (``.env`` is ``*/.env``), so the
name rules also apply to what the model wrote. Patterns are lowercase; components are matched
as a disk compares them (``names.folded``: ``.ENV``, ``.e\u200cnv``, ``.env::$DATA`` are ``.env``).
"""

from __future__ import annotations

import functools

import attrs

from rho_domain.glob_set import GlobSet, glob_matches
from rho_domain.names import folded, folded_text, short_name_refusal
from rho_domain.secret_patterns import (
    ALLOWED,
    EXCLUDED_NAMES,
    GIT_CONFIGS,
    HOME_SECRETS,
    LOCATIONS,
    NAMES,
    SSH_KEY,
    SSH_KEY_NOT,
    SYSTEM_SECRETS,
    TEMPLATES,
)

__all__ = [
    "ALLOWED",
    "DEFAULT_POLICY",
    "EXCLUDED_NAMES",
    "GIT_CONFIGS",
    "HOME_SECRETS",
    "LOCATIONS",
    "NAMES",
    "SSH_KEY",
    "SSH_KEY_NOT",
    "SYSTEM_SECRETS",
    "TEMPLATES",
    "SecretPolicy",
    "case_insensitive",
    "guard_script",
]


def _components(path: str) -> tuple[str, ...]:
    return tuple(part for part in path.split("/") if part not in ("", "."))


def _text(path: str) -> str:
    parts = _components(path)
    return "/" + "/".join(parts) if path.startswith("/") else "/".join(parts)


# Each rule group's patterns, shaped once (``GlobSet``: string methods, no expression to
# compile at a process's first judgement). The pattern-by-pattern order is kept, to name the
# rule that matched.
_ALLOWED = GlobSet(ALLOWED)
_LOCATIONS = GlobSet(LOCATIONS)
_TEMPLATES = GlobSet(TEMPLATES)
_NAMES = GlobSet(NAMES)
_NAMES_OR_KEY = GlobSet((*NAMES, SSH_KEY))


def _name_refusal(path: str) -> str | None:
    """Rule 3: the last component's name (templates excepted)."""
    parts = _components(path)
    name = "/" + folded(parts[-1]) if parts else "/"
    if _TEMPLATES.matches(name):
        return None
    if not _NAMES_OR_KEY.matches(name):
        return None
    pattern = next(_NAMES.matching(name), None)
    if pattern is not None:
        return f"{path!r} is a secrets file ({pattern.removeprefix('*/')})"
    if glob_matches(name, SSH_KEY) and not glob_matches(name, SSH_KEY_NOT):
        return f"{path!r} is a secret (an SSH private key)"
    return None


def _absolute(path: str) -> str:
    """``path`` as matched: absolute paths as they are, relative ones below some directory."""
    return path if path.startswith("/") else "/*/" + path


@attrs.frozen
class SecretPolicy:
    """The rules of the module docstring plus ``locations``: absolute directories or files of
    this deployment (the session directory, the agent's configuration) that are secret too.
    ``homes`` (home directories of this machine) say where ``HOME_SECRETS`` concretely are, for
    the sandbox to hide them and recursive readers to skip them, and every hidden entry below
    them is secret (rule 2b) except inside ``open_trees`` (the workspace)."""

    locations: tuple[str, ...] = ()
    homes: tuple[str, ...] = ()
    open_trees: tuple[str, ...] = ()

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

    def judge(self, path: str) -> str | None:
        """``refusal(path)`` worked out now, never remembered (``_judged`` calls it)."""
        text = _text(path)
        if path.startswith("/") and _ALLOWED.matches(text):
            return None
        return self.location_refusal(path) or _name_refusal(path) or short_name_refusal(path)

    def location_refusal(self, path: str) -> str | None:
        """Rule 2 alone (secret trees and locations; not the names of rule 3): what a word
        with a slash is judged by before anything looks at the filesystem."""
        parts = _components(path)
        for location in self.locations:
            base = _components(location)
            if path.startswith("/") and parts[: len(base)] == base:
                return f"{path!r} is inside {location}, a secret location the agent never reads"
        low = _absolute(folded_text(path))
        if not _LOCATIONS.matches(low):
            return self._home_refusal(path, parts)
        for pattern in _LOCATIONS.matching(low):
            if path.startswith("/") or pattern.startswith("*"):
                return f"{path!r} is a secret location ({pattern.removesuffix('/*')})"
        return self._home_refusal(path, parts)

    def _home_refusal(self, path: str, parts: tuple[str, ...]) -> str | None:
        if path.startswith("/") and (home := self._hidden_home_entry(parts)):
            return (
                f"{path!r} is a hidden entry of the home directory {home}, a secret location "
                "(tools keep credentials there under any name)"
            )
        return None

    def _hidden_home_entry(self, parts: tuple[str, ...]) -> str | None:
        """The home whose hidden entry ``parts`` is in (rule 2b), or None."""
        for home in self.homes:
            base = _components(home)
            inside = len(parts) > len(base) and parts[: len(base)] == base
            if inside and parts[len(base)].startswith(".") and not self._open(parts):
                return home
        return None

    def _open(self, parts: tuple[str, ...]) -> bool:
        return any(parts[: len(c)] == c for c in map(_components, self.open_trees))

    def is_secret(self, path: str) -> bool:
        """True when ``refusal(path)`` has a reason."""
        return self.refusal(path) is not None


# Bounded: paths come from the model's arguments and the commands' words.
@functools.lru_cache(maxsize=4096)
def _judged(policy: SecretPolicy, path: str) -> str | None:
    """``policy.judge(path)``, remembered by the (frozen, hashable) policy and the path."""
    return policy.judge(path)


DEFAULT_POLICY = SecretPolicy()


def case_insensitive(pattern: str) -> str:
    """A lowercase glob as a ``case`` pattern matching any letter case (``[eE]``)."""
    return "".join(f"[{c}{c.upper()}]" if c.isalpha() and c.isascii() else c for c in pattern)


def guard_script(policy: SecretPolicy, reach_case: str = "") -> str:
    """POSIX sh run by ``xargs`` in front of its target: every argument that names an existing
    path is resolved (``realpath -m``) and judged by ``policy``'s rules (the same patterns as
    ``SecretPolicy.refusal``) and by ``reach_case`` (``ReadReach.guard_case``: where reads may
    go); a secret or an argument out of reach is dropped from the arguments (with a note on
    stderr, as ``grep --exclude`` would skip it) and the target runs with the rest. Usage:
    ``sh -c SCRIPT rho-guard /abs/program args...``."""
    import shlex  # with the first guarded xargs, not with every policy

    allowed = "|".join(ALLOWED)
    own = "|".join(f"{shlex.quote(loc)}|{shlex.quote(loc)}/*" for loc in policy.locations)
    # rule 2b: a hidden entry of a home, unless inside an open tree (checked after the names)
    opened = "".join(f"{shlex.quote(t)}|{shlex.quote(t)}/*) ;; " for t in policy.open_trees)
    hidden = "|".join(f"{shlex.quote(h.rstrip('/') or '/')}/.*" for h in policy.homes)
    home_rule = f'      [ -n "$s" ] || case $p in {opened}{hidden}) s=1;; esac\n' if hidden else ""
    trees = "|".join(case_insensitive(p) for p in LOCATIONS)
    templates = "|".join(case_insensitive(p) for p in TEMPLATES)
    names = "|".join(case_insensitive(p) for p in NAMES)
    key, not_key = case_insensitive(SSH_KEY), case_insensitive(SSH_KEY_NOT)
    judge = (
        f"      case $p in {allowed}) ;; {own + '|' if own else ''}{trees}) s=1;; *)\n"
        f'        case "/${{p##*/}}" in {templates}) ;; {names}) s=1;; {not_key}) ;;'
        f" {key}) s=1;; esac;; esac\n{home_rule}"
    )
    # One realpath for every argument, read line by line in step with them (fast path); a
    # name with a newline, or an empty one, takes the slow path: one realpath each. A missing
    # answer line stops everything (exit 126). Secrets are rare: with none, the arguments are
    # exec'd as they are; else the kept ones are picked by index in ONE eval (rebuilding "$@"
    # item by item is quadratic in sh).
    return (
        "nl='\n'\nfast=1\n"
        'for a do case $a in "" | *"$nl"*) fast= ;; esac; done\n'
        "run() {\n  i=0; skips=\n  for a do\n    i=$((i + 1)); s=; o=\n"
        '    if [ -n "$fast" ]; then IFS= read -r p || exit 126; fi\n'
        '    if [ -e "$a" ] || [ -L "$a" ]; then\n'
        '      if [ -z "$fast" ]; then\n'
        '        p=$(realpath -m -- "$a"; echo x) || exit 126; p=${p%x}; p=${p%?}\n      fi\n'
        '      if [ -e "$a" ] && ! [ "$a" -ef "$p" ]; then o=1; fi\n'  # lexical past 4,096 chars
        f"{judge}{reach_case}    fi\n"
        '    if [ -n "$s" ]; then\n'
        "      printf 'rho: skipped %s: a secret file is never read\\n' \"$a\" >&2\n"
        '      skips="$skips $i "\n'
        '    elif [ -n "$o" ]; then\n'
        "      printf 'rho: skipped %s: outside what this profile reads\\n' \"$a\" >&2\n"
        '      skips="$skips $i "\n    fi\n  done\n'
        '  if [ -z "$skips" ]; then exec "$@" </dev/null; fi\n'
        "  keep=; i=0\n  for a do\n    i=$((i + 1))\n"
        '    case $skips in *" $i "*) ;; *) keep="$keep \\"\\${$i}\\"" ;; esac\n  done\n'
        '  eval "exec $keep </dev/null"\n}\n'
        'if [ -n "$fast" ]; then realpath -m -- "$@" | run "$@"; else run "$@"; fi\n'
    )
