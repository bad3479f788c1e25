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


# A set's patterns by the test ``GlobSet.matches`` gives them: whole texts, suffixes, prefixes,
# pieces anywhere, the general ones' pieces, and those left to fnmatch. A plain tuple: a
# NamedTuple's class would cost the import more than the set's work it puts off.
_Groups = tuple[
    frozenset[str],
    tuple[str, ...],
    tuple[str, ...],
    tuple[str, ...],
    tuple[tuple[str, ...], ...],
    tuple[str, ...],
]


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


def _shape(pattern: str) -> tuple[int, str, tuple[str, ...]]:
    """``pattern``'s shape (the module docstring's), the piece its test reads, its pieces."""
    pieces = tuple(pattern.split("*"))
    if "?" in pattern or "[" in pattern:
        return _FNMATCH, pattern, pieces
    if len(pieces) == 1:
        return _EXACT, pattern, pieces
    if len(pieces) == 2 and not pieces[0]:
        return _SUFFIX, pieces[1], pieces
    if len(pieces) == 2 and not pieces[1]:
        return _PREFIX, pieces[0], pieces
    if len(pieces) == 3 and not pieces[0] and not pieces[2]:
        return _INSIDE, pieces[1], pieces
    return _GENERAL, pieces[0], pieces


class GlobSet:
    """``patterns``, in order, with each one's shape (module docstring) worked out once, at
    the first question: ``matches`` says whether any matches; ``matching`` names which, in
    order.

    A plain class, not attrs: it is built at the secrets policy's import, which attrs' code
    generation for a class would make ~1 ms longer. Nothing is worked out when it is built
    (the policy's modules build eight, 732 patterns, and a one-shot asks four of them, never
    ``matching``): ``matches`` sorts the patterns into its groups at its first call,
    ``matching`` into their shapes at its own. Read-only by convention: nothing changes the
    patterns after ``__init__``; two threads that work the same groups out at once compute
    equal values, and each group is published whole."""

    __slots__ = ("_groups", "_shapes", "patterns")

    def __init__(self, patterns: tuple[str, ...]) -> None:
        self.patterns = patterns
        self._groups: _Groups | None = None
        self._shapes: tuple[tuple[str, int, str, tuple[str, ...]], ...] | None = None

    def _sorted(self) -> _Groups:
        """The patterns sorted into ``matches``' groups (worked out once)."""
        exact: set[str] = set()
        suffixes: list[str] = []
        prefixes: list[str] = []
        inside: list[str] = []
        general: list[tuple[str, ...]] = []
        other: list[str] = []
        for pattern in self.patterns:
            shape, piece, pieces = _shape(pattern)
            if shape == _EXACT:
                exact.add(piece)
            elif shape == _SUFFIX:
                suffixes.append(piece)
            elif shape == _PREFIX:
                prefixes.append(piece)
            elif shape == _INSIDE:
                inside.append(piece)
            elif shape == _GENERAL:
                general.append(pieces)
            else:
                other.append(pattern)
        groups: _Groups = (
            frozenset(exact), tuple(suffixes), tuple(prefixes), tuple(inside), tuple(general),
            tuple(other),
        )  # fmt: skip
        self._groups = groups
        return groups

    def _shaped(self) -> tuple[tuple[str, int, str, tuple[str, ...]], ...]:
        """Each pattern with its shape, the piece its test reads and its pieces (worked out
        once)."""
        shapes = tuple((pattern, *_shape(pattern)) for pattern in self.patterns)
        self._shapes = shapes
        return shapes

    def __repr__(self) -> str:
        return f"GlobSet({self.patterns!r})"

    def matches(self, text: str) -> bool:
        """True when some pattern matches ``text`` (``fnmatchcase``)."""
        exact, suffixes, prefixes, inside, general, other = self._groups or self._sorted()
        # Loops, not any(...) over generators: empty groups then cost nothing (this runs for
        # every path a tool touches).
        if text in exact or text.endswith(suffixes):
            return True
        if text.startswith(prefixes):
            return True
        for piece in inside:
            if piece in text:
                return True
        for pieces in general:
            # the ends first: they rule out nearly every text, without a call
            if (
                text.startswith(pieces[0])
                and text.endswith(pieces[-1])
                and _pieces_match(text, pieces)
            ):
                return True
        return bool(other) and any(fnmatch.fnmatchcase(text, p) for p in other)

    def matching(self, text: str) -> Iterator[str]:
        """The patterns that match ``text``, in their order, each tried alone (for naming the
        rule after ``matches`` said yes)."""
        # Each pattern's test by its shape, inline: a call per pattern (``glob_matches``) was
        # most of the cost of naming a location rule, which tries up to 320 patterns.
        for pattern, shape, piece, pieces in self._shapes or self._shaped():
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
