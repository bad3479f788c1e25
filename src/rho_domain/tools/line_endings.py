r"""An ``edit``'s old_string and new_string, spelled in the line endings of the file.

The model reads lines without their endings (``read`` shows none) and writes its strings
with ``\n`` (or, copied from elsewhere, ``\r\n``). A file ends its lines with CRLF, LF or
a mix of both (a pasted line, a merge). Each line break of old_string matches the file's
ending, and each line break of new_string is written with the ending of the text it
replaces (line by line): a CRLF file stays CRLF, an LF file with one CRLF line keeps it,
and no ``\r\r\n`` is made of a new_string that already had CRLF.

A file with one kind of ending (nearly all) is matched and replaced with str's own methods, in
C; only a file mixing both goes through a regular expression, a match at a time.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import attrs

from rho_domain.value_methods import value_eq, value_hash, value_repr

CRLF, LF = "\r\n", "\n"
_BREAK = re.compile("\r?\n")


@attrs.frozen
class Spelling:
    """How to find old_string in one file and what to write for each occurrence.

    ``old``/``new``: the strings in the file's one ending (None for a file mixing both);
    ``pattern``/``replacement``: for a mixed file, each line break of old_string matching
    either ending, and new_string spelled in the ending of each match.
    """

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    old: str | None
    new: str | None
    pattern: re.Pattern[str]
    replacement: Callable[[re.Match[str]], str]


def spell(text: str, old: str, new: str) -> Spelling:
    """``old`` and ``new`` (any endings) as ``text`` spells them."""
    old, new = old.replace(CRLF, LF), new.replace(CRLF, LF)
    crlf = text.count(CRLF)
    mixed = 0 < crlf < text.count(LF)
    pattern = re.compile("\r?\n".join(re.escape(part) for part in old.split(LF)))
    if not mixed:
        ending = CRLF if crlf else LF
        old, new = old.replace(LF, ending), new.replace(LF, ending)
        return Spelling(old, new, pattern, lambda _: new)

    def replacement(match: re.Match[str]) -> str:
        # new_string's n-th line break takes the ending of the match's n-th (its last for
        # the breaks past them; none: the ending of the line the match is on)
        endings = _BREAK.findall(match.group()) or [_ending_at(text, match.end())]
        lines = new.split(LF)
        out = [lines[0]]
        for index, line in enumerate(lines[1:]):
            out += [endings[min(index, len(endings) - 1)], line]
        return "".join(out)

    return Spelling(None, None, pattern, replacement)


def count(text: str, spelling: Spelling) -> int:
    """How many non-overlapping occurrences ``text`` holds."""
    if spelling.old is not None:
        return text.count(spelling.old)
    return sum(1 for _ in spelling.pattern.finditer(text))


def starts(text: str, spelling: Spelling, limit: int) -> list[int]:
    """Where the first ``limit`` occurrences begin."""
    found: list[int] = []
    for match in spelling.pattern.finditer(text):
        if len(found) == limit:
            break
        found.append(match.start())
    return found


def growth(text: str, spelling: Spelling, times: int, size: Callable[[str], int]) -> int:
    """How many bytes (as ``size`` counts them) replacing the first ``times`` occurrences adds."""
    if spelling.old is not None and spelling.new is not None:
        return times * (size(spelling.new) - size(spelling.old))
    total = 0
    for index, match in enumerate(spelling.pattern.finditer(text)):
        if index == times:
            break
        total += size(spelling.replacement(match)) - size(match.group())
    return total


def replace(text: str, spelling: Spelling, *, every: bool) -> str:
    """``text`` with the first occurrence replaced, or every one."""
    if spelling.old is not None and spelling.new is not None:
        return text.replace(spelling.old, spelling.new, -1 if every else 1)
    return spelling.pattern.sub(spelling.replacement, text, count=0 if every else 1)


def _ending_at(text: str, index: int) -> str:
    """The ending of the line holding ``text[index]`` (past the last line break: the one
    before it)."""
    newline = text.find(LF, index)
    if newline < 0:
        newline = text.rfind(LF, 0, index)
    return CRLF if newline > 0 and text[newline - 1] == "\r" else LF
