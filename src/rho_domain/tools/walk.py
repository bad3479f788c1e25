"""Walking the workspace through the Executor port (for glob, and grep without ripgrep).

Skips what ripgrep skips by default that matters here: hidden entries (unless asked), VCS and
dependency directories, and secrets files; symlinks are not followed (as rg does). Glob
patterns support ``**`` (any number of directories), ``*``, ``?`` and ``[...]``; a pattern
without ``/`` matches the base name at any depth, like rg's ``-g``.
"""

from __future__ import annotations

import fnmatch
import posixpath
import re
from collections.abc import AsyncIterator

from rho_domain.paths import is_secret
from rho_domain.ports.executor import Executor, FileKind

MAX_PATTERN = 1024  # characters of a glob pattern (compiling 10,000 took 0.1 s)
SKIPPED_DIRS = frozenset({".git", "node_modules", "__pycache__", ".venv", "venv", ".hg", ".svn"})


async def walk_files(
    executor: Executor, base: str, *, hidden: bool = False, limit: int = 1_000_000
) -> AsyncIterator[str]:
    """Yield file paths under ``base`` (workspace-relative), depth first, sorted per directory."""
    stack = [base]
    seen = 0
    while stack:
        directory = stack.pop()
        entries = sorted(await executor.list_dir(directory), key=lambda e: e.name, reverse=True)
        for entry in entries:
            if not hidden and entry.name.startswith("."):
                continue
            if is_secret(entry.path):
                continue  # never listed for reading: see rho_domain.secrets
            if entry.kind is FileKind.DIRECTORY:
                if entry.name not in SKIPPED_DIRS:
                    stack.append(entry.path)
            elif entry.kind is FileKind.FILE:
                seen += 1
                if seen > limit:
                    return
                yield entry.path


class GlobMatcher:
    """A glob over '/'-separated relative paths: ``**`` as a whole component is any number
    of directories (at the end: anything below), ``*`` any part of one name (``**`` inside a
    component too), ``?`` one character, ``[...]`` a set.

    Matching is component by component over the set of pattern positions still possible, and
    each name is matched by a regex that cannot backtrack (``star_free_regex``): the time is
    bounded by path depth x pattern length, whatever the pattern. (A single regex with
    ``(?:.*/)?`` per ``**/`` took seconds per path at ten of them, and exponentially more.)
    """

    def __init__(self, pattern: str) -> None:
        parts: list[str] = []
        for part in pattern.split("/"):
            if part == "**" and parts and parts[-1] == "**":
                continue  # **/** is **
            parts.append(part)
        if parts and parts[-1] == "**":
            parts.append("*")  # a trailing ** matches what is below, not the directory
        self.pattern = pattern
        self._parts = tuple(parts)
        self._names = tuple(None if p == "**" else _name_regex(p) for p in parts)

    def match(self, path: str) -> bool:
        """Whether the whole of ``path`` matches."""
        states = self._close({0})
        for name in path.split("/"):
            following: set[int] = set()
            for index in states:
                if index == len(self._parts):
                    continue
                regex = self._names[index]
                if regex is None:
                    following.add(index)  # ** takes this name too
                elif regex.fullmatch(name):
                    following.add(index + 1)
            if not following:
                return False
            states = self._close(following)
        return len(self._parts) in states

    def _close(self, states: set[int]) -> set[int]:
        """``states`` plus the positions after any ``**`` that matches no name."""
        out = set(states)
        for index in sorted(states):
            while index < len(self._parts) and self._names[index] is None:
                index += 1
                out.add(index)
        return out


def _name_regex(component: str) -> re.Pattern[str]:
    pieces: list[str | None] = []
    i = 0
    while i < len(component):
        ch = component[i]
        if ch == "*":
            pieces.append(None)
        elif ch == "?":
            pieces.append("[^/]")
        elif ch == "[" and (end := component.find("]", i + 1)) >= 0:
            translated = fnmatch.translate(component[i : end + 1])
            pieces.append(translated[4:-3])  # strip fnmatch's (?s:...)\Z wrapper
            i = end
        else:
            pieces.append(re.escape(ch))
        i += 1
    from rho_domain.shell.glob import star_free_regex  # with the first pattern matched

    return re.compile(star_free_regex(pieces), re.DOTALL)


def glob_matcher(pattern: str, base: str) -> GlobMatcher:
    """Matcher for paths relative to ``base``; slash-less patterns match at any depth."""
    if "/" not in pattern.rstrip("/"):
        pattern = "**/" + pattern
    del base
    return GlobMatcher(pattern)


def relative_to(path: str, base: str) -> str:
    """``path`` relative to ``base`` (POSIX paths; ``.`` as base leaves it unchanged)."""
    base = posixpath.normpath(base)
    return path if base in (".", "") else posixpath.relpath(path, base)
