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


def glob_regex(pattern: str) -> re.Pattern[str]:
    """Compile a glob with ``**`` to a regex over '/'-separated relative paths."""
    out = []
    i = 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        else:
            ch = pattern[i]
            if ch == "*":
                out.append("[^/]*")
            elif ch == "?":
                out.append("[^/]")
            elif ch == "[":
                end = pattern.find("]", i + 1)
                if end < 0:
                    out.append(re.escape(ch))
                else:
                    translated = fnmatch.translate(pattern[i : end + 1])
                    out.append(translated[4:-3])  # strip fnmatch's (?s:...)\Z wrapper
                    i = end
            else:
                out.append(re.escape(ch))
            i += 1
    return re.compile("".join(out) + r"\Z")


def glob_matcher(pattern: str, base: str) -> re.Pattern[str]:
    """Matcher for paths relative to ``base``; slash-less patterns match at any depth."""
    if "/" not in pattern.rstrip("/"):
        pattern = "**/" + pattern
    del base
    return glob_regex(pattern)


def relative_to(path: str, base: str) -> str:
    """``path`` relative to ``base`` (POSIX paths; ``.`` as base leaves it unchanged)."""
    base = posixpath.normpath(base)
    return path if base in (".", "") else posixpath.relpath(path, base)
