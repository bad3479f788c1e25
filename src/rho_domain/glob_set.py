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
from collections.abc import Iterable, Iterator

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


def _gate(pieces: tuple[str, ...]) -> str | None:
    """A name every text the pattern of ``pieces`` (its literals, each of which a matching
    text holds) matches has between two slashes, so an element of ``text.split("/")``: the
    longest ``X`` of a ``/X/`` inside one of its pieces, or None when no piece has one."""
    names = [name for piece in pieces for name in piece.split("/")[1:-1]]
    return max(names, key=len, default="") or None


class GlobSet:
    """``patterns``, in order, with each one's shape (module docstring) worked out once.
    ``matches`` says whether any matches; ``matching`` names which, in order.

    Suffixes, prefixes and exact texts are tested together (one ``str`` call or set look-up
    for each shape). A pattern of another shape is tried only when the text has the name its
    gate (``_gate``) says every matching text has: one set intersection with the text's
    names rules out nearly all of them (the locations' ~170 patterns of pieces cost ~0.2 ms a
    path, tried one by one, on a path as long as a test's temporary directory).

    A plain class, not attrs: it is built at the secrets policy's import, which attrs' code
    generation for a class would make ~1 ms longer. Read-only by convention: nothing changes
    it after ``__init__``."""

    __slots__ = (
        "_exact", "_exact_at", "_gated", "_gates", "_open_at", "_prefix_at", "_prefixes",
        "_shapes", "_suffix_at", "_suffixes", "patterns",
    )  # fmt: skip

    def __init__(self, patterns: tuple[str, ...]) -> None:
        self.patterns = patterns
        exact: dict[str, list[int]] = {}
        suffixes: list[str] = []
        prefixes: list[str] = []
        suffix_at: list[int] = []
        prefix_at: list[int] = []
        gated: dict[str, list[int]] = {}
        open_at: list[int] = []  # tried for every text: no gate
        shapes: list[tuple[str, int, str, tuple[str, ...]]] = []
        for at, pattern in enumerate(patterns):
            pieces = tuple(pattern.split("*"))
            gate = None
            if "?" in pattern or "[" in pattern:
                shapes.append((pattern, _FNMATCH, pattern, pieces))
            elif len(pieces) == 1:
                exact.setdefault(pattern, []).append(at)
                shapes.append((pattern, _EXACT, pattern, pieces))
            elif len(pieces) == 2 and not pieces[0]:
                suffixes.append(pieces[1])
                suffix_at.append(at)
                shapes.append((pattern, _SUFFIX, pieces[1], pieces))
            elif len(pieces) == 2 and not pieces[1]:
                prefixes.append(pieces[0])
                prefix_at.append(at)
                shapes.append((pattern, _PREFIX, pieces[0], pieces))
            elif len(pieces) == 3 and not pieces[0] and not pieces[2]:
                gate = _gate(pieces)
                shapes.append((pattern, _INSIDE, pieces[1], pieces))
            else:
                gate = _gate(pieces)
                shapes.append((pattern, _GENERAL, pieces[0], pieces))
            if shapes[-1][1] in (_INSIDE, _GENERAL, _FNMATCH):
                (open_at if gate is None else gated.setdefault(gate, [])).append(at)
        self._shapes = tuple(shapes)
        self._exact = frozenset(exact)
        self._exact_at = {text: tuple(ats) for text, ats in exact.items()}
        self._suffixes = tuple(suffixes)
        self._prefixes = tuple(prefixes)
        self._suffix_at = tuple(suffix_at)
        self._prefix_at = tuple(prefix_at)
        self._gated = {name: tuple(ats) for name, ats in gated.items()}
        self._gates = frozenset(gated)
        self._open_at = tuple(open_at)

    def __repr__(self) -> str:
        return f"GlobSet({self.patterns!r})"

    def matches(self, text: str) -> bool:
        """True when some pattern matches ``text`` (``fnmatchcase``)."""
        if text in self._exact or text.endswith(self._suffixes):
            return True
        if text.startswith(self._prefixes):
            return True
        return next(self._tried(text, self._candidates(text)), None) is not None

    def matching(self, text: str) -> Iterator[str]:
        """The patterns that match ``text``, in their order (for naming the rule after
        ``matches`` said yes)."""
        at = self._candidates(text)
        at += self._exact_at.get(text, ())
        if text.endswith(self._suffixes):
            at += self._suffix_at
        if text.startswith(self._prefixes):
            at += self._prefix_at
        return self._tried(text, sorted(set(at)))

    def _candidates(self, text: str) -> list[int]:
        """The patterns of pieces (indices) that may match ``text``: those without a gate, and
        those whose gate is one of its names. No other pattern of pieces can."""
        at = list(self._open_at)
        for name in self._gates.intersection(text.split("/")):
            at += self._gated[name]
        return at

    def _tried(self, text: str, indices: Iterable[int]) -> Iterator[str]:
        """The patterns at ``indices`` (in that order) that match ``text``, each tried alone."""
        # Each pattern's test by its shape, inline: a call per pattern (``glob_matches``) was
        # most of the cost of naming a location rule, which tries up to 320 patterns.
        for index in indices:
            pattern, shape, piece, pieces = self._shapes[index]
            if shape == _EXACT:
                hit = text == piece
            elif shape == _SUFFIX:
                hit = text.endswith(piece)
            elif shape == _PREFIX:
                hit = text.startswith(piece)
            elif shape == _INSIDE:
                hit = piece in text
            elif shape == _GENERAL:
                # the ends first: they rule out nearly every text, without a call
                hit = (
                    text.startswith(piece)
                    and text.endswith(pieces[-1])
                    and _pieces_match(text, pieces)
                )
            else:
                hit = fnmatch.fnmatchcase(text, pattern)
            if hit:
                yield pattern
