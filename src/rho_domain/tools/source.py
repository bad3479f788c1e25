"""ToolSource: tools that arrive while the agent runs (MCP servers), known before each run.

An agent's own tools are fixed when it is built. Tools served by another program are not:
listing them is I/O, a server may add or drop tools at any time
(``notifications/tools/list_changed``), and it may be slow or gone. So the session asks its
tool source before each run and before each model call (``current``), and swaps the agent's
sourced tools when the answer changed (``Agent.with_sourced``). A session's children ask the
same source (``Session._related`` passes it on).

Not re-exported by ``rho_domain.ports``: it speaks of tool handlers (``tools.base``), which
import the other ports; import it from here.
"""

from __future__ import annotations

from abc import abstractmethod
from typing import Protocol

import attrs

from rho_domain.tools.base import ToolHandler
from rho_domain.value_methods import value_repr


@attrs.frozen(kw_only=True, eq=False)
class SourcedTools:
    """What a tool source serves at one moment.

    ``handlers`` are the tools (their names unique and not clashing with the agent's own);
    ``instructions`` texts to append to the system prompt (one per server that gave some,
    each headed by its server's name, its own words quoted line by line: a server's text is
    data, never the prompt's); ``problems`` say what could not be listed (a server
    that did not start within its startup timeout, or died), for the user to read. A source
    returns the same object while nothing changed, so the session compares by identity.
    """

    __repr__ = value_repr

    handlers: tuple[ToolHandler, ...] = ()
    instructions: tuple[str, ...] = ()
    problems: tuple[str, ...] = ()


NO_TOOLS = SourcedTools()


class ToolSource(Protocol):
    """Serves tools whose list may change while a session lives (``rho_adapters.mcp``)."""

    @abstractmethod
    async def current(self) -> SourcedTools:
        """The tools as they are now: the first call starts what the source needs (servers
        are started and listed within their startup timeouts); later calls return the same
        object unless a server said its list changed (then it is listed again) or a server
        failed. Never raises for a server's failure: the failure is in ``problems`` and that
        server's tools are absent. Raises ``asyncio.CancelledError`` only."""

    @abstractmethod
    async def aclose(self) -> None:
        """Stop every server (a stdio server's whole process group is killed if it does not
        exit when asked). Idempotent; ``current`` afterwards returns no tools."""
