"""ManualToolSource: a ``ToolSource`` whose tools a test sets, and that records the asks.

It serves what ``serve`` last gave it, as the same object until ``serve`` is called again
(as a real source does while nothing changed), counts ``current`` calls and says whether it
was closed. Use it to test how an agent lives with tools that come and go, without starting
a server; ``rho_adapters.mcp.McpToolSource`` is the real one.
"""

from __future__ import annotations

from collections.abc import Sequence

from rho_domain.tools.base import ToolHandler
from rho_domain.tools.source import NO_TOOLS, SourcedTools, ToolSource


class ManualToolSource(ToolSource):
    """Serves the tools, instructions and problems a test sets with ``serve``."""

    def __init__(self, handlers: Sequence[ToolHandler] = (), *, instructions: Sequence[str] = ()):
        self.asks = 0  # calls of ``current``
        self.closed = False
        self._served = NO_TOOLS  # an agent's own "nothing sourced": no rebuild for nothing
        if handlers or instructions:
            self.serve(handlers, instructions=instructions)

    def serve(
        self,
        handlers: Sequence[ToolHandler] = (),
        *,
        instructions: Sequence[str] = (),
        problems: Sequence[str] = (),
    ) -> None:
        """Serve these from the next ``current`` on (a changed list, a failed server...)."""
        self._served = SourcedTools(
            handlers=tuple(handlers), instructions=tuple(instructions), problems=tuple(problems)
        )

    async def current(self) -> SourcedTools:
        """What ``serve`` last set (no tools once closed)."""
        self.asks += 1
        return NO_TOOLS if self.closed else self._served

    async def aclose(self) -> None:
        """Mark it closed."""
        self.closed = True
