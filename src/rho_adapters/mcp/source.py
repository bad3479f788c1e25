"""McpToolSource: the tools of a session's MCP servers, as the ``ToolSource`` port serves them.

The first ``current`` starts every server at once, each bounded by its ``startup_timeout``
(start, ``initialize`` and ``tools/list`` together); a server that fails is left out, its
problem reported, and the others serve. A ``notifications/tools/list_changed`` marks its
server: the next ``current`` (before the next model call) or call lists it again, and a
call of a tool it now lists otherwise is not made (``call``). A server that exits is left
out, with its exit code and last stderr lines as the problem, and started again by the next
``current`` (a long session outlives a crash); a restart that fails is tried again after a
backoff (``restart_backoff``: 1 s doubling to 60 s), so a server that crashes at once costs a
start now and then, not one per model call. A server that never started (a bad
command, a startup timeout) is not retried: its problem is in the configuration.

A call runs under its server's ``call_timeout``; its result is capped at ``output_limit``
characters (default: the agent's tool output limit), the whole saved under ``output_dir``
(beside the session's trace; without a store, a temporary directory kept after the session,
so the result's path stays true) while the session's saved outputs stay within
``saved_budget`` characters (``MAX_SAVED``): a server chooses how long its answers are.
"""

from __future__ import annotations

import asyncio
import contextlib
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from rho_adapters.clock import SystemClock
from rho_adapters.mcp.client import McpClient
from rho_adapters.mcp.results import capped, output_file, result_text
from rho_adapters.mcp.servers import Connect, ServerState, connect, ready, relisted, restart_due
from rho_adapters.mcp.shown_tools import served
from rho_domain.errors import ConfigError, McpError, McpSessionExpired
from rho_domain.mcp_config import McpServerConfig, check_name_room
from rho_domain.ports.clock import Clock
from rho_domain.tools.base import ToolContext, ToolOutput
from rho_domain.tools.source import NO_TOOLS, SourcedTools, ToolSource

__all__ = ["MAX_SAVED", "Connect", "McpToolSource", "ServerState", "connect"]

MAX_SAVED = 1024**3  # characters of full outputs one session saves, all calls together


class McpToolSource(ToolSource):
    """The tools of ``servers`` (by name), started on the first ``current``. A server that
    fails to restart is tried again after ``restart_backoff``'s waits, by ``clock``. Raises
    ConfigError for a server name over ``mcp_config.MAX_SERVER_NAME`` characters."""

    def __init__(
        self,
        servers: Mapping[str, McpServerConfig],
        *,
        environ: Mapping[str, str],
        output_limit: int,
        output_dir: Callable[[str], Path | None] | None = None,
        connect: Connect = connect,
        restart_backoff: tuple[float, float] = (1.0, 60.0),
        clock: Clock | None = None,
        saved_budget: int = MAX_SAVED,
    ) -> None:
        for name in servers:  # a longer one leaves its tools no unique names
            check_name_room(name)
        self.servers = {name: ServerState(name, config) for name, config in servers.items()}
        self._environ = environ
        self._output_limit = output_limit
        self._output_dir = output_dir
        self._saved_budget = saved_budget  # characters of full outputs saved, at most
        self._saved = 0
        self._connect = connect
        self._backoff = restart_backoff  # (first wait, longest wait) between failed restarts
        self._clock = SystemClock() if clock is None else clock  # what restarts are timed by
        self._lock = asyncio.Lock()
        self._reconnecting = asyncio.Lock()
        self._started = False
        self._closed = False
        self._changed = True
        self._snapshot = NO_TOOLS
        self._temporary: Path | None = None

    async def current(self) -> SourcedTools:
        """See ``ToolSource.current``."""
        if self._closed:
            return NO_TOOLS
        async with self._lock:
            if not self._started:
                self._started = True
                try:
                    await asyncio.gather(*(self._start(s) for s in self.servers.values()))
                except BaseException:  # cancelled while starting: start afresh next time
                    await self._forget_starts()
                    raise
            now = self._clock.monotonic()
            due = [s for s in self.servers.values() if restart_due(s, now)]
            await asyncio.gather(*(self._restart(s) for s in due))
            stale = [s for s in self.servers.values() if s.stale and s.state == "ready"]
            await asyncio.gather(*(self._list(s) for s in stale))
            if self._changed:
                self._snapshot = served(self.servers.values(), self.call)
                self._changed = False
            return self._snapshot

    async def call(
        self,
        server: str,
        tool: str,
        arguments: Mapping[str, Any],
        ctx: ToolContext,
        /,
        *,
        listed: Mapping[str, Any] | None = None,
    ) -> ToolOutput:
        """Call ``tool`` on ``server`` and return its capped result. Raises ``McpError``
        (``McpTimeout`` after the server's ``call_timeout``). An HTTP server that forgot our
        session gets a new one (``initialize`` again) and the call once more. ``listed``:
        the entry the handler was made from; a tool now listed otherwise (announced, listed
        again, or listed by the new session) is not called, since the call was approved as
        shown (``relisted``)."""
        state = self.servers[server]
        if listed is not None and state.state == "ready" and state.stale:
            await self.current()  # lists it again, as the next model call would
        if refused := relisted(state, tool, listed):
            return refused
        client = ready(state)
        timeout = state.config.call_timeout
        try:
            result = await client.call_tool(tool, arguments, timeout=timeout)
        except McpSessionExpired:
            client = await self._reconnect(state, client)
            # listed afresh: a server redeployed meanwhile forgets us, sends no list_changed
            if refused := relisted(state, tool, listed):
                return refused
            result = await client.call_tool(tool, arguments, timeout=timeout)
        # in a thread: structured content is made indented JSON by pure Python, seconds for
        # millions of values, during which the event loop (every deadline) would stand still
        text = await asyncio.to_thread(result_text, result)
        limit = state.config.output_limit or self._output_limit
        save, unsaved = None, ""
        if len(text) > limit and self._saved + len(text) > self._saved_budget:
            unsaved = f"this session's saved outputs would pass {self._saved_budget:,} characters"
        elif len(text) > limit:
            save = output_file(self._directory(ctx.session_id), server, tool, ctx.call_id)
            self._saved += len(text)
        content, saved = await asyncio.to_thread(capped, text, limit, save, unsaved)
        metadata: dict[str, Any] = {"mcp_server": server, "mcp_tool": tool}
        if saved is not None:
            metadata["full_output"] = saved
        is_error = result.get("isError") is True
        return ToolOutput(content=content, is_error=is_error, metadata=metadata)

    async def aclose(self) -> None:
        """Stop every server (concurrently). Idempotent."""
        self._closed = True
        clients = [s.client for s in self.servers.values() if s.client is not None]
        for state in self.servers.values():
            state.client = None
        await asyncio.gather(*(c.aclose() for c in clients), return_exceptions=True)

    async def _start(self, state: ServerState) -> None:
        config = state.config
        try:
            transport = self._connect(state.name, config, self._environ)
        except ConfigError as exc:
            self._fail(state, str(exc))
            return

        def gone(why: str) -> None:
            if state.client is client:  # not one replaced by a new session
                self._gone(state, why)

        client = McpClient(
            state.name, transport, on_list_changed=lambda: self._mark_stale(state), on_gone=gone
        )
        state.client = client
        try:
            async with asyncio.timeout(config.startup_timeout):
                await client.start(timeout=config.startup_timeout)
                state.tools = await client.list_tools(timeout=config.startup_timeout)
        except (McpError, TimeoutError) as exc:
            unread = client.peer.unread_since(0)  # maybe the reason: what we could not read
            why = (
                str(exc)
                if isinstance(exc, McpError)
                else (
                    f"MCP server {state.name!r} did not start within {config.startup_timeout:g} s "
                    f"(the startup_timeout; raise mcp_servers.{state.name}.startup_timeout if it "
                    f"is just slow){'; ' + unread if unread else ''}"
                )
            )
            state.client = None
            with contextlib.suppress(Exception):
                await client.aclose()
            self._fail(state, why)
            return
        state.state, state.problem = "ready", ""
        state.restarts, state.restart_at = 0, None
        self._changed = True

    async def _restart(self, state: ServerState) -> None:
        """Start a server that went away again; when that fails, wait longer next time."""
        old, state.client = state.client, None
        if old is not None:
            with contextlib.suppress(Exception):
                await old.aclose()
        state.state, state.stale = "starting", False
        await self._start(state)
        if state.state != "ready":
            state.restarts += 1
            first, longest = self._backoff
            wait = min(longest, first * 2 ** (state.restarts - 1))
            state.restart_at = self._clock.monotonic() + wait
            state.problem += f" (restarting it again in {wait:g} s)"

    async def _reconnect(self, state: ServerState, old: McpClient) -> McpClient:
        """A new session with the server whose session ``old`` was (once, however many
        calls found it expired)."""
        async with self._reconnecting:
            if state.client is old:
                await self._restart(state)  # failing, it is tried again after a backoff
        return ready(state)

    async def _list(self, state: ServerState) -> None:
        """List a server's changed tools, all its pages within its ``startup_timeout`` (as
        the first listing): the next model call waits for this. An HTTP server that forgot
        our session gets a new one (listed as it starts); one whose listing fails is started
        again by the next ``current``."""
        state.stale = False
        timeout = state.config.startup_timeout
        client = ready(state)  # listed only when ready
        try:
            async with asyncio.timeout(timeout):
                state.tools = await client.list_tools(timeout=timeout)
        except McpSessionExpired:  # as for a call: a new session, listed afresh
            with contextlib.suppress(McpError):  # a failed start is its problem, retried
                await self._reconnect(state, client)
        except McpError as exc:
            self._fail(state, f"{exc} (listing its changed tools)")
        except TimeoutError:
            self._fail(
                state,
                f"MCP server {state.name!r} did not list its changed tools within {timeout:g} s "
                f"(the startup_timeout; raise mcp_servers.{state.name}.startup_timeout if it is "
                "just slow)",
            )
        if state.state == "failed":  # it served: started again by the next current, as
            state.restart_at = self._clock.monotonic()  # one that exited (not never)
        self._changed = True

    async def _forget_starts(self) -> None:
        self._started = False
        for state in self.servers.values():
            client, state.client = state.client, None
            state.state, state.problem, state.tools = "starting", "", []
            if client is not None:
                with contextlib.suppress(Exception):
                    await asyncio.shield(client.aclose())

    def _mark_stale(self, state: ServerState) -> None:
        state.stale = True

    def _gone(self, state: ServerState, why: str) -> None:
        if not self._closed and state.state == "ready":
            self._fail(state, f"MCP server {state.name!r} {why}; its tools are gone")
            state.restart_at = self._clock.monotonic()  # the next ``current`` starts it again

    def _fail(self, state: ServerState, problem: str) -> None:
        state.state = "failed"
        state.problem = problem
        self._changed = True

    def _directory(self, session_id: str) -> Path:
        directory = self._output_dir(session_id) if self._output_dir is not None else None
        if directory is not None:
            return directory
        if self._temporary is None:
            # kept after the session: the result names the file for the user to read
            self._temporary = Path(tempfile.mkdtemp(prefix="rho-agent-mcp-"))
        return self._temporary
