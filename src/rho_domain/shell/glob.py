r"""Pathname expansion as bash does it (``shopt`` defaults, ``LC_ALL=C``), over a directory lister.

The restricted shell never runs bash, so it expands unquoted ``*``, ``?`` and ``[...]``
itself, through the executor (the files are wherever the executor is). Rules, each checked
against real bash in ``tests/tools/test_shell_glob.py``:

* a pattern is split at ``/``; a component without an unquoted ``*``, ``?`` or valid
  bracket expression is literal (not listed, only required to exist);
* ``*`` matches any string, ``?`` one character, ``[abc]``, ``[a-z]``, ``[!x]``/``[^x]`` and
  ``[[:class:]]`` one character of a set (an unknown class name matches nothing; a ``[:``
  that never closes is a ``:``); a ``[`` without its ``]`` is literal; ``**`` is ``*`` (no
  globstar); no extglob, no brace expansion (refused by the lexer); ``[=a=]`` and ``[.a.]``
  inside a bracket are refused (bash matches them irregularly);
* a name starting with ``.`` is matched only by a component that starts with a literal ``.``
  (no dotglob); ``.`` and ``..`` are never matched (bash 5.2's globskipdots);
* a pattern ending in ``/`` matches directories only and keeps the slash;
* the matches are sorted by bytes (C collation); no match leaves the word as written
  (neither nullglob nor failglob).

Patterns are written with quoted characters escaped by ``\`` (``tokens.Token.pattern``).
``expand(pattern, cwd, lister)`` is pure: ``lister(path)`` returns ``(name, is_dir)`` entries
of one directory and raises ``ToolError`` (missing, not a directory) or ``PermissionDenied``
(outside the roots). Directories reached below the pattern's fixed prefix that are refused are
left out; the prefix itself being refused propagates.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Awaitable, Callable, Sequence
from typing import Protocol

from rho_domain.errors import CommandRefused, PermissionDenied, ToolError
from rho_domain.ports.executor import FileInfo, FileKind

Lister = Callable[[str], Awaitable[Sequence[tuple[str, bool]]]]
MAX_LISTINGS = 2_000

_CLASSES = {
    "alpha": "a-zA-Z",
    "digit": "0-9",
    "alnum": "a-zA-Z0-9",
    "upper": "A-Z",
    "lower": "a-z",
    "space": " \\t\\n\\r\\f\\v",
    "blank": " \\t",
    "xdigit": "0-9A-Fa-f",
    "punct": re.escape("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"),
    "cntrl": "\\x00-\\x1f\\x7f",
    "print": "\\x20-\\x7e",
    "graph": "\\x21-\\x7e",
}


def _bracket(component: str, start: int) -> tuple[str, int] | None:
    """The regex class for the bracket expression at ``start`` and the index after it."""
    i = start + 1
    negate = component[i : i + 1] in ("!", "^")
    i += negate
    items: list[str] = []
    first = True
    while i < len(component):
        ch = component[i]
        if ch == "]" and not first:
            body = "".join(items)
            if not body:  # only reversed ranges: nothing (or, negated, anything) matches
                return ("." if negate else "(?!)"), i + 1
            return (f"[^{body}]" if negate else f"[{body}]"), i + 1
        first = False
        if component.startswith("[:", i):
            end = component.find(":]", i + 2)
            if end < 0:  # bash drops a "[" whose "[:" never closes; the ":" is a member
                i += 1
                continue
            # An unknown (or empty) class name matches nothing, as in bash: "[[:a:]]" matches
            # no name, "[![:a:]]" any one character.
            items.append(_CLASSES.get(component[i + 2 : end], ""))
            i = end + 2
            continue
        if component.startswith(("[=", "[."), i):
            raise CommandRefused(
                "equivalence classes ([=a=]) and collating symbols ([.a.]) are not expanded "
                "(bash matches them irregularly): quote the word, or name the files"
            )
        if ch == "\\" and i + 1 < len(component):
            ch = component[i + 1]
            i += 1
        if component[i + 1 : i + 2] == "-" and component[i + 2 : i + 3] not in ("", "]"):
            high = component[i + 2]
            skip = 3
            if high == "\\" and i + 3 < len(component):
                high, skip = component[i + 3], 4
            items.append(f"{re.escape(ch)}-{re.escape(high)}" if ch <= high else "")
            i += skip
            continue
        items.append(re.escape(ch))
        i += 1
    return None


def star_free_regex(pieces: Sequence[str | None]) -> str:
    """A regex over one name from single-character ``pieces`` (None for ``*``) that matches
    in time linear in the name times the pattern, whatever the pattern.

    ``*a*a*a...b`` translated to ``.*a.*a.*a...b`` backtracks through every way to place the
    stars (a 255-byte name against 24 stars never ends). Each stretch between two stars has
    a fixed length, so its leftmost occurrence is always a safe choice: it is found lazily
    inside an atomic group, which the engine never re-enters. Only the last stretch, which
    must end the name, is placed by the one ``.*`` before it (use with ``fullmatch``).
    """
    stretches: list[list[str]] = [[]]
    for piece in pieces:
        if piece is None:
            stretches.append([])
        else:
            stretches[-1].append(piece)
    if len(stretches) == 1:
        return "".join(stretches[0])
    first, *middle, last = ("".join(s) for s in stretches)
    return first + "".join(f"(?>.*?{m})" for m in middle if m) + ".*" + last


def compile_component(component: str) -> re.Pattern[str] | None:
    """A regex for one pattern component, or None when it has no magic (literal). It
    matches in linear time (``star_free_regex``); use it with ``fullmatch``."""
    out: list[str | None] = []
    magic = False
    i = 0
    while i < len(component):
        ch = component[i]
        if ch == "\\" and i + 1 < len(component):
            out.append(re.escape(component[i + 1]))
            i += 2
        elif ch == "*":
            out.append(None)
            magic = True
            i += 1
        elif ch == "?":
            out.append(".")
            magic = True
            i += 1
        elif ch == "[" and (found := _bracket(component, i)) is not None:
            out.append(found[0])
            magic = True
            i = found[1]
        else:
            out.append(re.escape(ch))
            i += 1
    return re.compile(star_free_regex(out), re.DOTALL) if magic else None


def unescape(component: str) -> str:
    """The literal text of a pattern component (quote escapes removed)."""
    return re.sub(r"\\(.)", r"\1", component, flags=re.DOTALL)


def _explicit_dot(component: str) -> bool:
    return component.startswith((".", "\\."))


async def _entries(lister: Lister, path: str, *, strict: bool) -> Sequence[tuple[str, bool]]:
    try:
        return await lister(path)
    except CommandRefused:
        raise
    except PermissionDenied:
        if strict:
            raise
        return ()
    except ToolError:
        return ()


async def expand(pattern: str, cwd: str, lister: Lister) -> tuple[str, ...]:
    """The sorted matches of ``pattern`` (relative to ``cwd``), or () when none match.

    Raises ``CommandRefused`` past ``MAX_LISTINGS`` directory listings (``*/*/*/*`` over a
    large tree would otherwise run unbounded, outside any command's timeout).
    """
    budget = [MAX_LISTINGS]

    async def counted(path: str) -> Sequence[tuple[str, bool]]:
        budget[0] -= 1
        if budget[0] < 0:
            raise CommandRefused(
                f"glob {pattern!r} lists more than {MAX_LISTINGS:,} directories; narrow it "
                "or use find"
            )
        return await lister(path)

    return await _expand(pattern, cwd, counted)


async def _expand(pattern: str, cwd: str, lister: Lister) -> tuple[str, ...]:
    parts = pattern.split("/")
    dirs_only = len(parts) > 1 and parts[-1] == ""
    if dirs_only:
        parts = parts[:-1]
    # (text as bash prints it, path for the lister, is a directory)
    found: list[tuple[str, str, bool]] = [("", cwd, True)]
    if pattern.startswith("/"):
        parts = parts[1:]
        found = [("/", "/", True)]
    strict = True
    for index, part in enumerate(parts):
        last = index == len(parts) - 1
        regex = compile_component(part)
        following: list[tuple[str, str, bool]] = []
        for shown, path, _ in found:
            sep = "" if shown in ("", "/") else "/"
            if regex is None and not last:
                name = unescape(part)
                following.append((shown + sep + name, posixpath.join(path, name), True))
                continue
            entries = await _entries(lister, path, strict=strict)
            if regex is None:
                name = unescape(part)
                following.extend(
                    (shown + sep + name, posixpath.join(path, n), d)
                    for n, d in entries
                    if n == name
                )
                continue
            hidden_ok = _explicit_dot(part)
            following.extend(
                (shown + sep + n, posixpath.join(path, n), d)
                for n, d in entries
                if n not in (".", "..")
                and (hidden_ok or not n.startswith("."))
                and regex.fullmatch(n)
                and (d or (last and not dirs_only))
            )
            strict = False
        found = following
        if not found:
            return ()
    if dirs_only:
        found = [(shown + "/", path, True) for shown, path, is_dir in found if is_dir]
    return tuple(
        sorted({shown for shown, _, _ in found}, key=lambda s: s.encode("utf-8", "surrogateescape"))
    )


class _Listing(Protocol):
    async def list_dir(self, path: str) -> tuple[FileInfo, ...]: ...

    async def stat(self, path: str) -> FileInfo: ...


def port_lister(executor: _Listing) -> Lister:
    """A ``Lister`` over an executor's confined ``list_dir`` (a symlink is a directory when
    ``stat``, which follows it inside the roots only, says so)."""

    async def lister(path: str) -> Sequence[tuple[str, bool]]:
        entries = []
        for entry in await executor.list_dir(path):
            is_dir = entry.kind is FileKind.DIRECTORY
            if entry.kind is FileKind.SYMLINK:
                try:
                    is_dir = (await executor.stat(posixpath.join(path, entry.name))).kind is (
                        FileKind.DIRECTORY
                    )
                except (ToolError, PermissionDenied):
                    is_dir = False
            entries.append((entry.name, is_dir))
        return entries

    return lister
