"""A regular expression compiled when it is first used, not when its module is imported.

``re.compile`` at a module's top runs the standard library's parser and compiler (written in
Python) in every process that imports the module, whether or not the process ever matches
the expression: 0.2-1 M instructions an expression. A module whose expressions serve a rarer
path (an ssh wrapper script, a Windows stream name, a usage error's hint) names each as
``FirstUse(text)`` and calls it where it matches: ``_TIER().fullmatch(value)``. The one-shot's
pin (tests/cli/test_cli_oneshot_imports.py) lists the expressions a one-shot never compiles.

An expression every process matches anyway stays a plain ``re.compile`` at the module's top:
deferring it buys nothing and costs a call at each use.
"""

from __future__ import annotations

import re


class FirstUse:
    """``re.compile(text, flags)``, done at the first call and kept; every call returns the
    same compiled pattern. Two threads calling first may both compile it: either result is
    the same expression, and the one kept is whichever was stored last."""

    __slots__ = ("_compiled", "_flags", "_text")

    def __init__(self, text: str, flags: int = 0) -> None:
        self._text = text
        self._flags = flags
        self._compiled: re.Pattern[str] | None = None

    def __call__(self) -> re.Pattern[str]:
        """The compiled expression (a bad expression raises ``re.error`` here, at its first
        use: the tests that use it find it)."""
        compiled = self._compiled
        if compiled is None:
            compiled = self._compiled = re.compile(self._text, self._flags)
        return compiled

    @property
    def text(self) -> str:
        """The expression's text, as written."""
        return self._text
