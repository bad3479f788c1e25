"""write and edit: create or change files, through the executor's atomic, confined writes.

write: CREATE_ONLY refuses existing files (the executor uses O_EXCL, no check-then-write);
FULL overwrites atomically (temp file + rename; permission bits kept, never setuid, setgid or
sticky). edit: exact search/replace; no match or several matches (without ``replace_all``) is
an error that says where; the file's line endings (CRLF stays CRLF), BOM and encoding (UTF-8,
else Latin-1 byte-for-byte) are preserved; the result shows a short unified diff.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

from rho_domain.errors import ToolError
from rho_domain.tools import line_endings
from rho_domain.tools.base import DANGEROUS, ToolContext, ToolHandler, ToolOutput, ToolPolicy

MAX_WRITE = 10 << 20
MAX_EDIT_FILE = 10 << 20
DIFF_LINES = 60


class WriteHandler(ToolHandler):
    """``write``: create a file (or replace one where the profile allows) with the given content."""

    name = "write"
    parameters: Mapping[str, Any] = {
        "type": "object",
        "properties": {"path": {"type": "string"}, "content": {"type": "string"}},
        "required": ["path", "content"],
        "additionalProperties": False,
    }

    def __init__(self, *, create_only: bool) -> None:
        self.create_only = create_only

    @property
    def description(self) -> str:
        """What the model is told, which says whether existing files may be replaced."""
        if self.create_only:
            return "Create a new file with the given content (existing files are never replaced)."
        return "Write a file (created, or replaced atomically). Parent directories are created."

    def policy_for(self, arguments: Mapping[str, Any]) -> ToolPolicy:
        """Writing a file is always dangerous; inside ``.git``, destructive too."""
        return _policy(arguments)

    async def handle(self, arguments: Mapping[str, Any], ctx: ToolContext) -> ToolOutput:
        """See ``ToolHandler.handle``."""
        path = str(arguments["path"])
        data = _utf8(str(arguments["content"]), "content")
        _check_size(ctx, f"content is {len(data):,} bytes", len(data))
        replaced = await ctx.executor.write(path, data, overwrite=not self.create_only)
        ctx.written.written += len(data)
        lines = data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)
        verb = "Overwrote" if replaced else "Created"
        return ToolOutput(
            content=f"{verb} {path} ({len(data):,} bytes, {lines} lines)",
            metadata={"path": path, "bytes": len(data), "overwrote": replaced},
        )


class EditHandler(ToolHandler):
    """``edit``: replace one exact, unique occurrence of a text in a file."""

    name = "edit"
    description = (
        "Replace old_string with new_string in a file. old_string must match exactly once "
        "(including whitespace) unless replace_all is true; the error shows where it matched."
    )
    parameters: Mapping[str, Any] = {
        "type": "object",
        "properties": {
            "path": {"type": "string"},
            "old_string": {"type": "string"},
            "new_string": {"type": "string"},
            "replace_all": {"type": "boolean"},
        },
        "required": ["path", "old_string", "new_string"],
        "additionalProperties": False,
    }

    def policy_for(self, arguments: Mapping[str, Any]) -> ToolPolicy:
        """Editing a file is always dangerous; inside ``.git``, destructive too."""
        return _policy(arguments)

    async def handle(self, arguments: Mapping[str, Any], ctx: ToolContext) -> ToolOutput:
        """See ``ToolHandler.handle``."""
        path = str(arguments["path"])
        old, new = str(arguments["old_string"]), str(arguments["new_string"])
        replace_all = bool(arguments.get("replace_all", False))
        if not old:
            raise ToolError("old_string is empty; use write to create a file")
        if old == new:
            raise ToolError("old_string and new_string are the same")
        raw = await ctx.executor.read(path, length=MAX_EDIT_FILE + 1)
        if len(raw) > MAX_EDIT_FILE:
            raise ToolError(f"{path} is larger than {MAX_EDIT_FILE:,} bytes; edit refused")
        bom = raw.startswith(b"\xef\xbb\xbf")
        body = raw[3:] if bom else raw
        try:
            text, encoding = body.decode("utf-8"), "utf-8"
        except UnicodeDecodeError:
            text, encoding = body.decode("latin-1"), "latin-1"
        spelling = line_endings.spell(text, old, new)  # CRLF, LF or both, as the file has
        count = line_endings.count(text, spelling)
        if count == 0:
            raise ToolError(_not_found(path, text, old))
        if count > 1 and not replace_all:
            raise ToolError(_ambiguous(path, text, spelling, count))
        # Measured before the replacement is built: replace_all multiplies new_string by the
        # matches, and a few thousand matches of a long new_string outgrow the agent's memory.
        times = count if replace_all else 1
        grown = len(raw) + line_endings.growth(
            text, spelling, times, lambda value: _size(value, encoding)
        )
        _check_size(ctx, f"{path} would be {grown:,} bytes after {times:,} replacement(s)", grown)
        updated = line_endings.replace(text, spelling, every=replace_all)
        if encoding == "utf-8":
            data = _utf8(updated, "new_string")
        else:
            try:
                data = updated.encode(encoding)
            except UnicodeEncodeError:
                raise ToolError(
                    f"{path} is Latin-1; new_string has characters it cannot hold"
                ) from None
        data = (b"\xef\xbb\xbf" if bom else b"") + data
        await ctx.executor.write(path, data, overwrite=True)
        ctx.written.written += len(data)
        diff = _diff(path, text, updated)
        return ToolOutput(
            content=f"Edited {path}: {count if replace_all else 1} replacement(s)\n{diff}",
            metadata={"path": path, "replacements": count if replace_all else 1},
        )


def _utf8(text: str, what: str) -> bytes:
    """``text`` as UTF-8; a lone surrogate (U+D800-DFFF, escaped in JSON: no character) is
    the model's error to fix, not a crash of the tool."""
    try:
        return text.encode()
    except UnicodeEncodeError as exc:
        raise ToolError(
            f"{what} holds a lone surrogate ({text[exc.start]!r} at {exc.start}), which is no "
            "character and cannot be written as UTF-8"
        ) from None


def _size(text: str, encoding: str) -> int:
    return len(text.encode(encoding, "replace"))


def _check_size(ctx: ToolContext, what: str, size: int) -> None:
    """Refuse a file past the tools' cap or the profile's file-size limit (the RLIMIT_FSIZE
    its commands run under: a file the shell may not write, the write tool may not either),
    or one that would take the run past what it may write in all (``_check_total``)."""
    profile = ctx.profile
    if size > MAX_WRITE:
        raise ToolError(f"{what}; the limit is {MAX_WRITE:,}")
    limit = profile.limits.file_size_bytes
    if limit is not None and size > limit:
        raise ToolError(
            f"{what}; the profile's file size limit is {profile.limits.describe('file size')}"
        )
    _check_total(ctx, what, size)


def _check_total(ctx: ToolContext, what: str, size: int) -> None:
    """Refuse a write that would take the run's bytes written past ``run_written_mib``."""
    limits, done = ctx.profile.limits, ctx.written.written
    limit = limits.run_written_bytes
    if limit is not None and done + size > limit:
        raise ToolError(
            f"{what}, and this run has already written {done:,} bytes with write and edit "
            "(its sub-agents' writes included); "
            f"a run may write {limits.run_written_mib} MiB in all (the profile's "
            "limits.run_written_mib). Nothing was written: stop and tell the user, who may "
            "raise the limit or go on in a new run"
        )


def _ambiguous(path: str, text: str, spelling: line_endings.Spelling, count: int) -> str:
    lines = [str(text.count("\n", 0, i) + 1) for i in line_endings.starts(text, spelling, 10)]
    return (
        f"old_string matches {count} times in {path} (at lines {', '.join(lines)}); add "
        "surrounding lines to make it unique, or set replace_all"
    )


def _not_found(path: str, text: str, old: str) -> str:
    first = next((line.strip() for line in old.splitlines() if line.strip()), "")
    near = [
        f"{number}: {line.strip()[:120]}"
        for number, line in enumerate(text.splitlines(), start=1)
        if first and first in line
    ][:5]
    hint = (
        "; lines containing its first line: " + " | ".join(near)
        if near
        else "; check whitespace and indentation (read the file first)"
    )
    return f"old_string not found in {path}{hint}"


def _diff(path: str, before: str, after: str) -> str:
    import difflib  # with the first edit, not with every registry of tools

    lines = list(
        difflib.unified_diff(
            before.splitlines(), after.splitlines(), f"a/{path}", f"b/{path}", n=2, lineterm=""
        )
    )
    if len(lines) > DIFF_LINES:
        lines = [*lines[:DIFF_LINES], f"[... {len(lines) - DIFF_LINES} more diff lines]"]
    return "\n".join(lines)


def _policy(arguments: Mapping[str, Any]) -> ToolPolicy:
    """DANGEROUS; a path with a ``.git`` component asks even after "always": git runs the
    hooks and the config's commands (core.fsmonitor, aliases) found there later."""
    path = str(arguments.get("path", ""))
    if ".git" in path.replace("\\", "/").casefold().split("/"):
        return attrs.evolve(
            DANGEROUS, destructive=f"writes {path} inside .git (hooks and config run later)"
        )
    return DANGEROUS
