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
    path, tried one by one, on a path as long as a test's temporary directory). A set of eight
    patterns of pieces or fewer has no gates: tried one by one, they cost less.

    A plain class, not attrs: it is built at the secrets policy's import, which attrs' code
    generation for a class would make ~1 ms longer. Read-only by convention: nothing changes
    it after ``__init__`` but ``_sorted`` and ``_index``, once each; two threads that work
    the same part out at once compute equal values, and the attribute that says a part is
    done is published after the rest of it."""

    __slots__ = (
        "_exact", "_exact_at", "_gated", "_gates", "_open_at", "_open_fnmatch", "_open_general",
        "_open_inside", "_prefix_at", "_prefixes", "_shapes", "_suffix_at", "_suffixes",
        "patterns",
    )  # fmt: skip

    def __init__(self, patterns: tuple[str, ...]) -> None:
        self.patterns = patterns
        # Nothing is worked out here (the policy's modules build eight sets, 732 patterns, and
        # a one-shot asks four of them): the shapes at the first question (``_sorted``), the
        # gates at the first text a pattern of pieces may match (``_index``).
        self._shapes: tuple[tuple[str, int, str, tuple[str, ...]], ...] | None = None
        self._gates: frozenset[str] | None = None

    def _sorted(self) -> None:
        """Each pattern's shape, and the exact texts, suffixes and prefixes tested together
        (worked out once; ``_shapes``, which says it is done, is published last)."""
        patterns = self.patterns
        exact: set[str] = set()
        suffixes: list[str] = []
        prefixes: list[str] = []
        shapes: list[tuple[str, int, str, tuple[str, ...]]] = []
        for pattern in patterns:
            pieces = tuple(pattern.split("*"))
            if "?" in pattern or "[" in pattern:
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
                shapes.append((pattern, _INSIDE, pieces[1], pieces))
            else:
                shapes.append((pattern, _GENERAL, pieces[0], pieces))
        self._exact = frozenset(exact)
        self._suffixes = tuple(suffixes)
        self._prefixes = tuple(prefixes)
        self._shapes = tuple(shapes)

    def _index(self) -> frozenset[str]:
        """The patterns (indices) by shape, and the gates: worked out at the first text a
        pattern of pieces may match, not at import (~1 ms for the policy's groups)."""
        by_shape: dict[int, list[int]] = {_EXACT: [], _SUFFIX: [], _PREFIX: []}
        gated: dict[str, list[int]] = {}
        open_at: list[int] = []  # no gate: tried for every text
        shapes = self._shapes or ()  # sorted: only ``matches`` and ``matching`` call this
        # a few patterns of pieces are tried faster one by one than through a set's names
        pieced = sum(shape in (_INSIDE, _GENERAL) for _, shape, _, _ in shapes)
        for at, (_, shape, _, pieces) in enumerate(shapes):
            gate = _gate(pieces) if shape in (_INSIDE, _GENERAL) and pieced > 8 else None
            if shape in by_shape:
                by_shape[shape].append(at)
            elif gate is not None:
                gated.setdefault(gate, []).append(at)
            else:
                open_at.append(at)
        exact_at: dict[str, list[int]] = {}
        for at in by_shape[_EXACT]:
            exact_at.setdefault(shapes[at][2], []).append(at)
        self._exact_at = {text: tuple(ats) for text, ats in exact_at.items()}
        self._suffix_at = tuple(by_shape[_SUFFIX])
        self._prefix_at = tuple(by_shape[_PREFIX])
        self._gated = {name: tuple(ats) for name, ats in gated.items()}
        self._open_at = tuple(open_at)
        opened = [shapes[at] for at in open_at]
        self._open_inside = tuple(piece for _, shape, piece, _ in opened if shape == _INSIDE)
        self._open_general = tuple(p for _, shape, _, p in opened if shape == _GENERAL)
        self._open_fnmatch = tuple(p for p, shape, _, _ in opened if shape == _FNMATCH)
        self._gates = frozenset(gated)
        return self._gates

    def __repr__(self) -> str:
        return f"GlobSet({self.patterns!r})"

    def matches(self, text: str) -> bool:
        """True when some pattern matches ``text`` (``fnmatchcase``)."""
        if self._shapes is None:
            self._sorted()
        if text in self._exact or text.endswith(self._suffixes):
            return True
        if text.startswith(self._prefixes):
            return True
        gates = self._index() if self._gates is None else self._gates
        # Loops, not any(...) over generators: empty groups then cost nothing (this runs for
        # every path a tool touches, and for every stem of a copy-like one).
        for piece in self._open_inside:
            if piece in text:
                return True
        for pieces in self._open_general:
            # the ends first: they rule out nearly every text, without a call
            if (
                text.startswith(pieces[0])
                and text.endswith(pieces[-1])
                and _pieces_match(text, pieces)
            ):
                return True
        if gates:
            for name in gates.intersection(text.split("/")):
                if next(self._tried(text, self._gated[name]), None) is not None:
                    return True
        fnmatched = self._open_fnmatch
        return bool(fnmatched) and any(fnmatch.fnmatchcase(text, p) for p in fnmatched)

    def matching(self, text: str) -> Iterator[str]:
        """The patterns that match ``text``, in their order (for naming the rule after
        ``matches`` said yes)."""
        if self._shapes is None:
            self._sorted()
        at = self._candidates(text)  # first: it works out the indices
        at += self._exact_at.get(text, ())
        if text.endswith(self._suffixes):
            at += self._suffix_at
        if text.startswith(self._prefixes):
            at += self._prefix_at
        return self._tried(text, sorted(set(at)))

    def _candidates(self, text: str) -> list[int]:
        """The patterns of pieces (indices) that may match ``text``: those without a gate, and
        those whose gate is one of its names. No other pattern of pieces can."""
        gates = self._index() if self._gates is None else self._gates
        at = list(self._open_at)
        for name in gates.intersection(text.split("/")) if gates else ():
            at += self._gated[name]
        return at

    def _tried(self, text: str, indices: Iterable[int]) -> Iterator[str]:
        """The patterns at ``indices`` (in that order) that match ``text``, each tried alone."""
        # Each pattern's test by its shape, inline: a call per pattern (``glob_matches``) was
        # most of the cost of naming a location rule, which tries up to 320 patterns.
        shapes = self._shapes or ()  # sorted by the caller
        for index in indices:
            pattern, shape, piece, pieces = shapes[index]
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
