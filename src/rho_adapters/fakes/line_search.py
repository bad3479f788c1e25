"""InlineLineSearcher: the ``LineSearcher`` port in the calling process, for tests.

It runs the regex on the event loop, exactly what the port exists to avoid: use it only with
patterns you wrote (tests of ``grep``'s output), never with a model's. ``patterns`` records
each search's pattern and flag.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterable, AsyncIterator, Sequence

from rho_domain.errors import ToolError
from rho_domain.ports.line_search import LineSearcher


class InlineLineSearcher(LineSearcher):
    """A ``LineSearcher`` that matches in-process (tests only; see the module docstring)."""

    def __init__(self) -> None:
        self.patterns: list[tuple[str, bool]] = []

    async def search(
        self, pattern: str, texts: AsyncIterable[str], *, ignore_case: bool
    ) -> AsyncIterator[tuple[int, ...]]:
        """See ``LineSearcher.search``."""
        self.patterns.append((pattern, ignore_case))
        try:
            regex = re.compile(pattern, re.IGNORECASE if ignore_case else 0)
        except re.error as exc:
            raise ToolError(f"invalid regular expression: {exc}") from None
        async for text in texts:
            yield tuple(i for i, line in enumerate(text.splitlines()) if regex.search(line))

    async def found(self, pattern: str, texts: Sequence[str]) -> tuple[bool, ...]:
        """See ``LineSearcher.found``."""
        self.patterns.append((pattern, False))
        try:  # compiled first, as the worker does: an invalid one is refused for no text too
            regex = re.compile(pattern)
        except re.error as exc:
            raise ToolError(f"invalid regular expression: {exc}") from None
        return tuple(regex.search(text) is not None for text in texts)
