"""LineSearcher: run a regular expression from outside where no pattern can stall us.

Python's ``re`` backtracks, and it holds the interpreter lock while it does: ``(a+)+$``
against a few dozen ``a`` followed by ``b`` runs for hours, in a thread as on the event
loop, and nothing can interrupt it. So the domain never runs a regex it did not write itself:
``grep`` without ripgrep hands its texts to ``search``, and the output schema's ``pattern``
keywords (a client's, a config's) are judged by ``found``. The adapter runs them where they
can be killed (``rho_adapters.local.line_search.ProcessLineSearcher``: a worker process).
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import AsyncIterable, AsyncIterator, Sequence
from typing import Protocol


class LineSearcher(Protocol):
    """Runs one regular expression over texts, off the caller's event loop."""

    @abstractmethod
    def search(
        self, pattern: str, texts: AsyncIterable[str], *, ignore_case: bool
    ) -> AsyncIterator[tuple[int, ...]]:
        """For each text of ``texts``, in order, the 0-based numbers of its lines
        (``str.splitlines``) where ``pattern`` (Python ``re`` syntax) is found (``re.search``).

        Raises ``ToolError`` for an invalid pattern (before any text is read). The work
        stops, killed if it must, when the caller is cancelled or stops iterating (closing
        the iterator): a catastrophic pattern costs only until the caller's deadline."""

    @abstractmethod
    async def found(self, pattern: str, texts: Sequence[str]) -> tuple[bool, ...]:
        """For each of ``texts``, whether ``re.search(pattern, text)`` finds a match in the
        whole text (not line by line). ``ToolError`` for an invalid pattern, or one that
        needs more memory than the worker has; the work is killed when the caller is
        cancelled, so the caller's deadline (``asyncio.timeout``) bounds it."""
