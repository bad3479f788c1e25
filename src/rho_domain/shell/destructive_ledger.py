"""What one destructive-command check keeps while it walks a line (``shell.destructive_walk``).

Two ledgers, each changed only through its methods:

* ``WorkBudget``: the characters parsed and words judged so far, nested strings included, out
  of ``WORK_BUDGET``; ``spend`` says the reason to ask once it is spent, so a line built to
  make the check slow (``eval eval ... ls ls ls``) asks instead of taking seconds.
* ``WrittenFiles``: the paths the line's commands wrote, in order (``line``), beside what
  earlier calls of the session wrote (``session``, ``shell.destructive_session``): a later
  command that runs one of them asks, and ``by`` says who wrote it. Paths are kept
  normalized (``posixpath.normpath``); a word names a written file by its path, or, when it
  holds a ``/``, by its last component (``/abs/x.txt`` or ``../x.txt`` after a ``cd``).
"""

from __future__ import annotations

import posixpath
from collections.abc import Sequence

import attrs

from rho_domain.earlier_writes import EARLIER_CALL
from rho_domain.value_methods import value_eq, value_repr

WORK_BUDGET = 50_000
"""Characters parsed and words judged in one check, nested strings included: past it the line
asks (eval eval eval ... over a long line would otherwise take seconds)."""

_SPENT = "the command line is too complex to check (nested runs of long lines)"


@attrs.define
class WorkBudget:
    """The work one check may still do."""

    __repr__ = value_repr
    __eq__ = value_eq

    left: int = WORK_BUDGET

    def spend(self, work: int) -> str:
        """Count ``work``; the reason to ask once the budget is spent, else ""."""
        self.left -= work
        return _SPENT if self.left < 0 else ""

    def again(self, argv: Sequence[object], start: int) -> str:
        """Count reading ``argv`` again from ``start`` (the suffix a wrapper runs) as the
        whole line's words: each suffix read is as long as the line (where it runs, what it
        writes), and a line of thousands of program names read once per suffix took a
        minute of CPU (``eval eval ... ls ls ls``); the first read (``start`` 0) is free."""
        return self.spend(len(argv)) if start else ""


@attrs.define
class WrittenFiles:
    """The files this line wrote so far (``line``) and those earlier calls wrote
    (``session``: run as if this line had written them first)."""

    __repr__ = value_repr
    __eq__ = value_eq

    line: set[str] = attrs.field(factory=set)
    session: frozenset[str] = frozenset()

    def add(self, *words: str) -> None:
        """Remember ``words`` as paths this line wrote."""
        self.line.update(_path(word) for word in words)

    def so_far(self) -> frozenset[str]:
        """What this line wrote up to now (before the command being judged)."""
        return frozenset(self.line)

    def holds(self, path: str) -> bool:
        """True when ``path`` is, to the letter, one this line or an earlier call wrote."""
        return path in self.line or path in self.session

    def names(self) -> set[str]:
        """The last components of every written path, worked out once per command."""
        return {posixpath.basename(path) for path in self.line | self.session}

    def runs(self, word: str, names: set[str]) -> bool:
        """True when running ``word`` runs a written file: its path, or a path to a file of
        the same name (``names``: ``names()``)."""
        path = _path(word)
        if path in self.line or path in self.session:
            return True
        return "/" in word and posixpath.basename(path) in names

    def by(self, word: str, line: str = "this command line") -> str:
        """Who wrote ``word`` first, for a reason: this ``line``, or an earlier call."""
        if _path(word) in self.line:
            return f"{line} writes first"
        names = {posixpath.basename(path) for path in self.line}
        if "/" in word and posixpath.basename(_path(word)) in names:
            return f"{line} writes first"
        return f"{EARLIER_CALL} wrote"


def _path(word: str) -> str:
    return posixpath.normpath(word) if word else word
