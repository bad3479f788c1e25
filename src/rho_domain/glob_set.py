"""A set of shell-style patterns matched as ``fnmatch.fnmatchcase`` matches them, by string
methods instead of one compiled expression.

The secrets policy judges every file a tool touches by a few dozen patterns, and a process used
to pay ~4-8 ms at its first judgement compiling them into regular expressions (sre's parser is
slow on long unions of ``.*`` alternatives). Its patterns are literals and ``*`` only, and each
has one of a few shapes, decided once by splitting on ``*`` (microseconds):

- ``/proc`` (no ``*``): the whole text equals it (a ``frozenset``);
- ``*.pem``: a suffix (one ``str.endswith`` over a tuple for all of them);
- ``/proc/*``: a prefix (one ``str.startswith`` over a tuple);
- ``*/.ssh/*``: a piece anywhere (``in``);
- anything else made of literals and ``*`` (``/etc/ssh/ssh_host_*_key``, ``*/id_*.pub``): its
  pieces in order, the first at the start, the last at the end, each middle one found leftmost
  after the one before (leftmost is enough: a ``*`` takes whatever lies between);
- a pattern with ``?`` or ``[`` (none of the policy's): ``fnmatch.fnmatchcase`` itself, so its
  expression is compiled only if such a pattern is ever asked about.

``*`` matches any characters, ``/`` and newlines included, as in ``fnmatch``; nothing is
casefolded here (the caller casefolds the text when it means to). A backslash is an ordinary
character, as in ``fnmatch``.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterator

# The shapes of the module docstring, in ``GlobSet.matching``'s order of tests.
_EXACT, _SUFFIX, _PREFIX, _INSIDE, _GENERAL, _FNMATCH = range(6)


def _pieces_match(text: str, pieces: tuple[str, ...]) -> bool:
    """True when ``text`` is ``pieces`` joined by ``*``s (at least two pieces)."""
    first, last = pieces[0], pieces[-1]
    end = len(text) - len(last)
    if end < len(first) or not text.startswith(first) or not text.endswith(last):
        return False
    at = len(first)
    for piece in pieces[1:-1]:
        found = text.find(piece, at, end)
        if found < 0:
            return False
        at = found + len(piece)
    return True


def _one_matches(text: str, pattern: str, pieces: tuple[str, ...]) -> bool:
    """``pattern`` (split on ``*`` into ``pieces``) matches ``text``."""
    if "?" in pattern or "[" in pattern:
        return fnmatch.fnmatchcase(text, pattern)
    return text == pattern if len(pieces) == 1 else _pieces_match(text, pieces)


def glob_matches(text: str, pattern: str) -> bool:
    """``fnmatch.fnmatchcase(text, pattern)``, without a compiled expression when ``pattern``
    has no ``?`` or ``[``."""
    return _one_matches(text, pattern, tuple(pattern.split("*")))


class GlobSet:
    """``patterns``, in order, with each one's shape (module docstring) worked out once.
    ``matches`` says whether any matches; ``matching`` names which, in order.

    A plain class, not attrs: it is built at the secrets policy's import, which attrs' code
    generation for a class would make ~1 ms longer. Read-only by convention: nothing changes
    it after ``__init__``."""

    __slots__ = (
        "_exact", "_fnmatch", "_general", "_inside", "_prefixes", "_shapes", "_suffixes",
        "patterns",
    )  # fmt: skip

    def __init__(self, patterns: tuple[str, ...]) -> None:
        self.patterns = patterns
        exact: set[str] = set()
        suffixes: list[str] = []
        prefixes: list[str] = []
        inside: list[str] = []
        general: list[tuple[str, ...]] = []
        other: list[str] = []
        shapes: list[tuple[str, int, str, tuple[str, ...]]] = []
        for pattern in patterns:
            pieces = tuple(pattern.split("*"))
            if "?" in pattern or "[" in pattern:
                other.append(pattern)
                shapes.append((pattern, _FNMATCH, pattern, pieces))
            elif len(pieces) == 1:
                exact.add(pattern)
                shapes.append((pattern, _EXACT, pattern, pieces))
            elif len(pieces) == 2 and not pieces[0]:
                suffixes.append(pieces[1])
                shapes.append((pattern, _SUFFIX, pieces[1], pieces))
            elif len(pieces) == 2 and not pieces[1]:
                prefixes.append(pieces[0])
                shapes.append((pattern, _PREFIX, pieces[0], pieces))
            elif len(pieces) == 3 and not pieces[0] and not pieces[2]:
                inside.append(pieces[1])
                shapes.append((pattern, _INSIDE, pieces[1], pieces))
            else:
                general.append(pieces)
                shapes.append((pattern, _GENERAL, pieces[0], pieces))
        self._shapes = tuple(shapes)
        self._exact = frozenset(exact)
        self._suffixes = tuple(suffixes)
        self._prefixes = tuple(prefixes)
        self._inside = tuple(inside)
        self._general = tuple(general)
        self._fnmatch = tuple(other)

    def __repr__(self) -> str:
        return f"GlobSet({self.patterns!r})"

    def matches(self, text: str) -> bool:
        """True when some pattern matches ``text`` (``fnmatchcase``)."""
        # Loops, not any(...) over generators: empty groups then cost nothing (this runs for
        # every path a tool touches).
        if text in self._exact or text.endswith(self._suffixes):
            return True
        if text.startswith(self._prefixes):
            return True
        for piece in self._inside:
            if piece in text:
                return True
        for pieces in self._general:
            # the ends first: they rule out nearly every text, without a call
            if (
                text.startswith(pieces[0])
                and text.endswith(pieces[-1])
                and _pieces_match(text, pieces)
            ):
                return True
        return bool(self._fnmatch) and any(fnmatch.fnmatchcase(text, p) for p in self._fnmatch)

    def matching(self, text: str) -> Iterator[str]:
        """The patterns that match ``text``, in their order, each tried alone (for naming the
        rule after ``matches`` said yes)."""
        # Each pattern's test by its shape, inline: a call per pattern (``glob_matches``) was
        # most of the cost of naming a location rule, which tries up to 320 patterns.
        for pattern, shape, piece, pieces in self._shapes:
            if shape == _EXACT:
                hit = text == piece
            elif shape == _SUFFIX:
                hit = text.endswith(piece)
            elif shape == _PREFIX:
                hit = text.startswith(piece)
            elif shape == _INSIDE:
                hit = piece in text
            elif shape == _GENERAL:
                hit = text.startswith(piece) and _pieces_match(text, pieces)
            else:
                hit = fnmatch.fnmatchcase(text, pattern)
            if hit:
                yield pattern
