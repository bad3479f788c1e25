"""glob and list: find files by pattern, and show a directory's entries.

glob: ``rg --files`` when ripgrep is installed (fast on big trees, honours .gitignore), else a
walk through the executor; the paths are matched in a thread (``GlobMatcher``, linear in the
pattern whatever it is), sorted and capped, the cap stated. list: entries with type
and size, directories first, hidden entries only on request, capped.
"""

from __future__ import annotations

import itertools
import posixpath
from collections.abc import Mapping
from typing import Any

from rho_domain.errors import ToolError
from rho_domain.paths import is_secret
from rho_domain.ports.executor import FileKind
from rho_domain.tools.base import READ_ONLY, ToolContext, ToolHandler, ToolOutput, ToolPolicy
from rho_domain.tools.offload import Stop, in_thread
from rho_domain.tools.shown_names import shown_name
from rho_domain.tools.walk import MAX_PATTERN, GlobMatcher, glob_matcher, relative_to, walk_files


class GlobHandler(ToolHandler):
    """``glob``: paths matching a glob pattern, sorted and capped; respects .gitignore."""

    name = "glob"
    description = (
        "Find files whose path matches a glob pattern ('**/*.py', '*.md', 'src/**/test_*.py') "
        "under path (default .). Sorted, capped at max_results. Respects .gitignore."
    )
    parameters: Mapping[str, Any] = {
        "type": "object",
        "properties": {
            "pattern": {"type": "string", "maxLength": MAX_PATTERN},
            "path": {"type": "string"},
            "max_results": {"type": "integer", "minimum": 1, "maximum": 5000},
        },
        "required": ["pattern"],
        "additionalProperties": False,
    }

    def policy_for(self, arguments: Mapping[str, Any]) -> ToolPolicy:
        """Read-only."""
        return READ_ONLY

    async def handle(self, arguments: Mapping[str, Any], ctx: ToolContext) -> ToolOutput:
        """See ``ToolHandler.handle``."""
        pattern = str(arguments["pattern"])
        base = str(arguments.get("path") or ".")
        cap = int(arguments.get("max_results") or 200)
        info = await ctx.executor.stat(base)
        if info.kind is not FileKind.DIRECTORY:
            raise ToolError(f"{base} is not a directory")
        matcher = glob_matcher(pattern, base)
        if await ctx.executor.which("rg") is not None:
            from rho_domain.ports.commands import Command, Stage  # with the first command run

            argv = ("rg", "--no-config", "--files", "--null", "--", base)
            result = await ctx.executor.run(
                Command(
                    pipeline=(Stage(argv=argv, stderr="null"),),
                    max_output_bytes=64 << 20,
                    keep_undecodable=True,  # caf\xe9.txt, as list shows it, not caf\ufffd
                )
            )
            listing = result.output  # up to 64 MB: split in the thread below
            candidates = []
        else:
            listing = ""
            candidates = [p async for p in walk_files(ctx.executor, base)]
        # Off the event loop: a listing of 100,000 paths is CPU work for every session.
        found = await in_thread(lambda stop: _select(stop, listing, candidates, matcher, base))
        if not found:
            return ToolOutput(content=f"No files match {pattern!r} under {base}.")
        shown = found[:cap]
        footer = (
            f"[showing {cap} of {len(found)} files; narrow the pattern]"
            if len(found) > cap
            else f"[{len(found)} file{'s' if len(found) != 1 else ''}]"
        )
        return ToolOutput(
            content="\n".join(map(shown_name, shown)) + "\n" + footer,
            metadata={"count": len(found), "truncated": len(found) > cap},
        )


class ListHandler(ToolHandler):
    """``list``: a directory's entries with kinds and sizes."""

    name = "list"
    description = (
        "List a directory: type, size and name of each entry, directories first. Hidden "
        "entries only with show_hidden; capped at max_entries."
    )
    parameters: Mapping[str, Any] = {
        "type": "object",
        "properties": {
            "path": {"type": "string"},
            "show_hidden": {"type": "boolean"},
            "max_entries": {"type": "integer", "minimum": 1, "maximum": 5000},
        },
        "additionalProperties": False,
    }

    def policy_for(self, arguments: Mapping[str, Any]) -> ToolPolicy:
        """Read-only."""
        return READ_ONLY

    async def handle(self, arguments: Mapping[str, Any], ctx: ToolContext) -> ToolOutput:
        """See ``ToolHandler.handle``."""
        path = str(arguments.get("path") or ".")
        hidden = bool(arguments.get("show_hidden", False))
        cap = int(arguments.get("max_entries") or 500)
        entries = [
            e for e in await ctx.executor.list_dir(path) if hidden or not e.name.startswith(".")
        ]
        entries.sort(key=lambda e: (e.kind is not FileKind.DIRECTORY, e.name.casefold()))
        if not entries:
            return ToolOutput(content=f"{path}: empty directory")
        lines = []
        for entry in entries[:cap]:
            name = shown_name(entry.name)
            if entry.kind is FileKind.DIRECTORY:
                lines.append(f"dir   {'-':>9}  {name}/")
            elif entry.kind is FileKind.SYMLINK:
                lines.append(f"link  {'-':>9}  {name} -> {shown_name(entry.link_target or '')}")
            else:
                kind = "file " if entry.kind is FileKind.FILE else "other"
                lines.append(f"{kind} {_size(entry.size):>9}  {name}")
        if len(entries) > cap:
            lines.append(f"[showing {cap} of {len(entries)} entries]")
        return ToolOutput(content="\n".join(lines), metadata={"count": len(entries)})


def _select(
    stop: Stop, listing: str, candidates: list[str], matcher: GlobMatcher, base: str
) -> list[str]:
    """The sorted paths of ``candidates`` and of rg's NUL-separated ``listing`` that match
    and are not secrets files (in a thread; it stops when the call is cancelled)."""
    found = []
    listed = (posixpath.normpath(p) for p in listing.split("\x00") if p)
    for path in itertools.chain(candidates, listed):
        stop.check()
        if matcher.match(relative_to(path, base)) and not is_secret(path):
            found.append(path)
    return sorted(found)


def _size(size: int) -> str:
    value = float(size)
    for unit in ("B", "K", "M", "G"):
        if value < 1024 or unit == "G":
            return f"{int(value)}{unit}" if unit == "B" else f"{value:.1f}{unit}"
        value /= 1024
    return f"{size}B"
