"""grep: search file contents with ripgrep, or a fallback with the same output.

Without ripgrep, the files are read through the executor and the pattern runs in the
``LineSearcher`` port (a killable worker process: a catastrophic regex such as ``(a+)+$``
never runs on the event loop), within the same ``TIMEOUT`` as ripgrep.

The pattern is always passed after ``-e`` and paths after ``--``, so nothing the model writes
can become an option (the public implementation ran ``--pre=/bin/rm``). Output lines are
``path:line:text`` for matches and ``path-line-text`` for context lines, ``--`` between
groups; the footer states the match count and whether ``max_results`` cut the list. Secrets
files (``.env``...) are excluded from the search.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator, Mapping
from typing import Any

from rho_domain.errors import PermissionDenied, ToolError
from rho_domain.ports.executor import FileKind
from rho_domain.ports.line_search import LineSearcher
from rho_domain.tools.base import READ_ONLY, ToolContext, ToolHandler, ToolOutput, ToolPolicy
from rho_domain.tools.offload import Stop, in_thread
from rho_domain.tools.shown_names import shown_name
from rho_domain.tools.walk import MAX_PATTERN, glob_matcher, relative_to, walk_files

SECRET_GLOBS = (
    "!.env",
    "!.env.*",
    "!*.env",
    "!.envrc",
    "!.netrc",
    "!.pgpass",
    "!id_rsa",
    "!id_ed25519",
)
FALLBACK_MAX_FILE = 8 << 20  # bytes searched per file without ripgrep
FALLBACK_MAX_TOTAL = 128 << 20  # bytes searched per call without ripgrep
TIMEOUT = 120.0  # seconds a search may take, with ripgrep or without
_RG_BINARY = ": binary file matches (found "  # rg's line for a binary file that matches
_RG_LINE = r"(\d+)([:-])"  # compiled at the first search's output (re keeps it), not at import


class GrepHandler(ToolHandler):
    """``grep``: search file contents with a regular expression (ripgrep syntax)."""

    name = "grep"
    description = (
        "Search file contents with a regular expression (ripgrep syntax). Returns path:line:text "
        "lines. Respects .gitignore, skips hidden files. Options: path (file or directory), glob "
        "(e.g. '*.py'), ignore_case, context (lines around each match), max_results."
    )
    parameters: Mapping[str, Any] = {
        "type": "object",
        "properties": {
            "pattern": {"type": "string"},
            "path": {"type": "string", "description": "File or directory (default .)."},
            "glob": {"type": "string", "maxLength": MAX_PATTERN},
            "ignore_case": {"type": "boolean"},
            "context": {"type": "integer", "minimum": 0, "maximum": 20},
            "max_results": {"type": "integer", "minimum": 1, "maximum": 2000},
        },
        "required": ["pattern"],
        "additionalProperties": False,
    }

    def __init__(self, searcher: LineSearcher | None = None) -> None:
        self.searcher = searcher

    def policy_for(self, arguments: Mapping[str, Any]) -> ToolPolicy:
        """Read-only."""
        return READ_ONLY

    async def handle(self, arguments: Mapping[str, Any], ctx: ToolContext) -> ToolOutput:
        """See ``ToolHandler.handle``."""
        pattern = str(arguments["pattern"])
        path = str(arguments.get("path") or ".")
        glob = arguments.get("glob")
        ignore_case = bool(arguments.get("ignore_case", False))
        context = int(arguments.get("context") or 0)
        max_results = int(arguments.get("max_results") or 100)
        info = await ctx.executor.stat(path)  # confinement and existence, before any search
        if info.kind is FileKind.OTHER:  # a FIFO would hold the search until its timeout
            raise ToolError(
                f"{path} is not a regular file or a directory (a FIFO, socket or device); "
                "grep searches files: give a file or a directory"
            )
        notes: list[str] = []
        binary: list[str] = []  # files that match but hold NUL bytes: named, not shown
        if await ctx.executor.which("rg") is not None:
            lines = await _ripgrep(ctx, pattern, path, glob, ignore_case, context, binary)
        elif self.searcher is not None:
            lines = await _python_grep(
                ctx,
                self.searcher,
                pattern,
                path,
                info.kind is FileKind.FILE,
                glob,
                ignore_case,
                context,
                notes,
                binary,
            )
        else:
            raise ToolError(
                "grep needs ripgrep (rg) where the files are, or a line searcher to run the "
                "pattern in (build_registry(line_searcher=...)); install ripgrep"
            )
        from rho_domain.tools.grep_render import render  # with the first grep's lines

        return render(lines, max_results, grouped=context > 0, notes=notes, binary=binary)


async def _ripgrep(
    ctx: ToolContext,
    pattern: str,
    path: str,
    glob: Any,
    ignore_case: bool,
    context: int,
    binary: list[str],
) -> list[tuple[str, int, bool, str]]:
    # --mmap: a sparse or huge file is read through the page cache (a cold 5 GiB sparse log:
    # 16 s with read(2), under 3 s mapped).
    argv = ["rg", "--no-config", "--mmap", "--line-number", "--with-filename", "--no-heading"]
    argv.append("--null")
    argv.append("--color=never")
    if ignore_case:
        argv.append("--ignore-case")
    if context:
        argv += ["--context", str(context)]
    for secret in SECRET_GLOBS:
        argv += ["--glob", secret]
    if glob:
        argv += ["--glob", str(glob)]
    argv += ["-e", pattern, "--", path]
    from rho_domain.ports.commands import Command, Stage  # with the first command run

    result = await ctx.executor.run(
        Command(
            pipeline=(Stage(argv=tuple(argv), stderr="null"),),
            timeout=TIMEOUT,
            max_output_bytes=8 << 20,
            keep_undecodable=True,  # names as list shows them; the lines' text as read does
        )
    )
    if result.timed_out:
        raise ToolError(f"grep timed out after {TIMEOUT:g} s; narrow the path or the pattern")
    if result.exit_code not in (0, 1) and "\x00" not in result.output:
        raise ToolError(f"ripgrep failed (exit {result.exit_code}): {result.output.strip()[:500]}")
    # Up to 8 MB of output: parsed in a thread, not on the event loop.
    return await in_thread(lambda stop: _parse_rg(stop, result.output, binary))


def _parse_rg(stop: Stop, output: str, binary: list[str]) -> list[tuple[str, int, bool, str]]:
    r"""(path, line number, is a match, text) of each line of ``rg --null`` output, split at
    the NULs first (a name may hold a line break: "a\nsrc/app.py", split into lines, was a
    match in a file that is not there). A file named alone that rg says is binary and
    matches is added to ``binary``; in a directory rg skips binary files unsaid (searching
    them would read every large binary through: 2 GiB, 0.01 s skipped, 1.5 s searched)."""
    lines: list[tuple[str, int, bool, str]] = []
    rg_line = re.compile(_RG_LINE)
    records = output.split("\x00")
    name = records[0]
    for record in records[1:]:
        stop.check()
        rest, _, after = record.partition("\n")
        match = rg_line.match(rest)
        if match:
            said = rest[match.end() :].encode("utf-8", "surrogateescape").decode("utf-8", "replace")
            lines.append((name, int(match.group(1)), match.group(2) == ":", said))
        name = after.removeprefix("--\n")  # the next name ("--": context groups' separator)
    if len(records) == 1:  # no match shown: a file named alone that is binary and matches
        said, found, _ = output.rstrip("\n").rpartition(_RG_BINARY)
        if found:
            binary.append(said)
    return lines


async def _python_grep(
    ctx: ToolContext,
    searcher: LineSearcher,
    pattern: str,
    path: str,
    is_file: bool,
    glob: Any,
    ignore_case: bool,
    context: int,
    notes: list[str],
    binary: list[str],
) -> list[tuple[str, int, bool, str]]:
    """Search file by file through the executor, within ``FALLBACK_MAX_FILE`` bytes per file
    and ``FALLBACK_MAX_TOTAL`` per call; what was left unsearched is added to ``notes``. The
    regex runs in the ``LineSearcher`` (killable, off the loop), within ``TIMEOUT`` seconds."""
    matcher = glob_matcher(str(glob), path) if glob else None
    read: list[tuple[str, list[str], bool]] = []  # the file the searcher has now, binary?

    async def texts() -> AsyncIterator[str]:
        budget = FALLBACK_MAX_TOTAL
        files = [path] if is_file else walk_files(ctx.executor, path)
        async for name in _each(files):
            if matcher is not None and not matcher.match(relative_to(name, path)):
                continue
            if budget <= 0:
                notes.append(
                    f"stopped after searching {FALLBACK_MAX_TOTAL:,} bytes; narrow the path"
                )
                break
            try:
                data = await ctx.executor.read(name, length=min(FALLBACK_MAX_FILE, budget) + 1)
            except (PermissionDenied, ToolError) as refused:  # a name no path may hold
                notes.append(f"{shown_name(name)}: not searched ({refused})")  # (it ended grep)
                continue
            budget -= len(data)
            if len(data) > FALLBACK_MAX_FILE:
                data = data[:FALLBACK_MAX_FILE]
                notes.append(
                    f"{shown_name(name)}: only the first {FALLBACK_MAX_FILE:,} bytes searched"
                )
            is_binary = b"\x00" in data[:8192]  # as rg judges
            if is_binary and not is_file:
                continue  # binary, as rg skips it in a directory
            text = data.decode("utf-8", "replace")
            read[:] = [(name, text.splitlines(), is_binary)]
            yield text

    out: list[tuple[str, int, bool, str]] = []
    try:
        async with asyncio.timeout(TIMEOUT):
            async for hits in searcher.search(pattern, texts(), ignore_case=ignore_case):
                name, text_lines, is_binary = read[0]
                if is_binary:
                    binary.extend([name] if hits else [])
                    continue
                shown: set[int] = set()
                for i in hits:
                    shown.update(range(max(0, i - context), min(len(text_lines), i + context + 1)))
                hit_set = set(hits)
                out.extend((name, i + 1, i in hit_set, text_lines[i]) for i in sorted(shown))
    except TimeoutError:
        raise ToolError(
            f"grep timed out after {TIMEOUT:g} s; narrow the path or the pattern"
        ) from None
    return out


async def _each(files: list[str] | AsyncIterator[str]) -> AsyncIterator[str]:
    if isinstance(files, list):
        for name in files:
            yield name
    else:
        async for name in files:
            yield name
