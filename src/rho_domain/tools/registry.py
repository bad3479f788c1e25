"""ToolRegistry: the tools a model can see, and the one place where calls are dispatched.

Every failure becomes a tool result the model can read and correct: an unknown tool, arguments
that are not JSON or do not match the schema, a handler exception, a timeout (every call has
a deadline: ``default_timeout`` unless the config sets ``tool_timeout``), a ``SystemExit`` of
the handler (``rho_domain.plugged``). Only ``asyncio.CancelledError`` and ``KeyboardInterrupt``
propagate (the session was cancelled, a second Ctrl+C).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from rho_domain.errors import ConfigError, PlacementFailed, RhoError, ToolError
from rho_domain.messages import ToolCall
from rho_domain.model import ToolSpec
from rho_domain.permissions import PermissionProfile
from rho_domain.plugged import contained, described, member_name, message_of
from rho_domain.schema_kinds import as_sent
from rho_domain.tools.base import ToolContext, ToolHandler, ToolOutput, ToolPolicy, error_output
from rho_domain.tools.prepared import PreparedCall, decode_arguments, prepare
from rho_domain.tools.truncation import truncate_middle, unicode_text

_REMEMBERED_POLICIES = 256
INLINE_ARGUMENT_CHARS = 1024
"""A batch whose calls' arguments total at most this many characters is prepared on the
event loop: parsing, validating and judging it costs well under a millisecond (the SQL check
reads ~8 ms per 1,000 tokens at worst, and 1,024 characters hold fewer than 400), less than
the hand-off to a worker thread and back, which costs a context switch each way (about 1 ms a
run on a loaded machine, bench/bench_overhead.py). A longer batch goes to a thread: a 40 KB
statement's check must not hold up the loop."""

DEFAULT_TOOL_TIMEOUT = 600.0  # seconds, for every call but delegate when none is configured
SHELL_MARGIN = 30.0  # beyond the profile's shell timeout, so bash reports its own timeout


def default_timeout(name: str, profile: PermissionProfile) -> float | None:
    """The deadline of a call to tool ``name`` when the config sets no ``tool_timeout``:
    ``DEFAULT_TOOL_TIMEOUT``, or the profile's shell timeout plus ``SHELL_MARGIN`` when that
    is longer. None for ``delegate``: a sub-agent's run is bounded by its own turns, budget
    and tool deadlines, and cutting it would lose its work."""
    if name == "delegate":
        return None
    return max(DEFAULT_TOOL_TIMEOUT, profile.shell_timeout + SHELL_MARGIN)


def parse_arguments(call: ToolCall) -> dict[str, Any]:
    """Parse a call's raw JSON arguments into an object, or raise ``ToolArgumentsError``
    (``prepared.decode_arguments``; a call the loop runs is parsed once, by ``prepare``)."""
    return decode_arguments(call)


class ToolRegistry:
    """An immutable set of tools, keyed by name."""

    def __init__(self, handlers: Iterable[ToolHandler] = (), *, output_limit: int = 20_000):
        self._handlers: dict[str, ToolHandler] = {}
        for handler in handlers:
            self._handlers[handler.name] = handler
        self._handlers = dict(sorted(self._handlers.items()))
        self.output_limit = output_limit
        # The specs of the last ``specs()`` and the descriptions and parameter mappings they
        # were built from: every request of every turn asks, and a handler's schema rarely
        # changes (bash's follows its timeout).
        self._specs: tuple[ToolSpec, ...] = ()
        self._built_from: tuple[tuple[str, object], ...] | None = None
        # Policies by (tool name, raw arguments): a policy depends on nothing else, so a call
        # the model repeats is not judged again (the SQL check of a long statement is work).
        self._policies: dict[tuple[str, str], ToolPolicy] = {}

    @property
    def names(self) -> tuple[str, ...]:
        """The tool names, sorted."""
        return tuple(sorted(self._handlers))

    def __contains__(self, name: object) -> bool:
        return name in self._handlers

    def __len__(self) -> int:
        return len(self._handlers)

    def get(self, name: str) -> ToolHandler | None:
        """The handler named ``name``, or None."""
        return self._handlers.get(name)

    def without(self, *names: str) -> ToolRegistry:
        """A copy without the named tools (e.g. a child agent without ``delegate``)."""
        kept = [h for n, h in self._handlers.items() if n not in names]
        return ToolRegistry(kept, output_limit=self.output_limit)

    def with_tools(self, *handlers: ToolHandler) -> ToolRegistry:
        """A copy with more tools (a handler replaces a same-named one)."""
        return ToolRegistry([*self._handlers.values(), *handlers], output_limit=self.output_limit)

    def specs(self) -> tuple[ToolSpec, ...]:
        """Specs sorted by name, so the prompt prefix is stable for caching. A handler whose
        ``description`` or ``parameters`` raises (read again for every model call) is a
        ``ConfigError`` naming the tool and the member: before, its exception ended the run
        as it was ("RuntimeError: ..."), naming neither. Each schema is sent as the APIs
        take it (``schema_kinds.as_sent``: a top type, an array's items), built once."""
        sources = tuple(shown(h) for h in self._handlers.values())
        # Equal (usually identical: a handler's schema is a constant) descriptions and
        # schemas make equal specs; tuple comparison checks identity before equality.
        if sources != self._built_from:
            self._specs = tuple(
                ToolSpec(name=name, description=description, parameters=as_sent(parameters))
                for name, (description, parameters) in zip(self._handlers, sources, strict=True)
            )
            self._built_from = sources
        return self._specs

    def prepare(self, call: ToolCall) -> PreparedCall:
        """``call`` parsed, validated against its tool's schema and judged by its handler's
        policy, once, for every reader after the model (``prepared.PreparedCall``)."""

        def judge(handler: ToolHandler, arguments: Mapping[str, Any]) -> ToolPolicy:
            key = (call.name, call.arguments)
            if (policy := self._policies.get(key)) is None:
                policy = self._policies[key] = handler.policy_for(arguments)
                while len(self._policies) > _REMEMBERED_POLICIES:
                    self._policies.pop(next(iter(self._policies)), None)  # the oldest
            return policy

        return prepare(call, self._handlers.get(call.name), ", ".join(self.names), judge=judge)

    async def prepare_all(self, calls: Sequence[ToolCall]) -> tuple[PreparedCall, ...]:
        """``prepare`` for each call, in a thread when the batch is long: a policy can be CPU
        work (the SQL check reads every token of a statement) and must not hold up the event
        loop; a short batch (``INLINE_ARGUMENT_CHARS``) is prepared on the loop."""
        if not calls:
            return ()
        if sum(len(c.name) + len(c.arguments) for c in calls) <= INLINE_ARGUMENT_CHARS:
            return tuple(self.prepare(c) for c in calls)
        return tuple(await asyncio.to_thread(lambda: [self.prepare(c) for c in calls]))

    def policy_for(self, call: ToolCall) -> ToolPolicy | None:
        """The policy of a call, or None when the tool is unknown or the arguments invalid."""
        return self.prepare(call).policy

    async def dispatch(
        self, call: ToolCall | PreparedCall, ctx: ToolContext, *, timeout: float | None = None
    ) -> ToolOutput:
        """Run one call (prepared, or prepared here) and return its (truncated) output.
        Never raises but CancelledError and KeyboardInterrupt.

        The call is cancelled after ``timeout`` seconds (None: ``default_timeout``), so it
        ends with a "timed out" result however it is stuck, provided that its handler keeps
        CPU work off the event loop (a regex in a worker process, parsing in a thread).
        """
        prepared = call if isinstance(call, PreparedCall) else self.prepare(call)
        if timeout is None:
            timeout = default_timeout(prepared.name, ctx.profile)
        output = await self._dispatch(prepared, ctx, timeout)
        content = truncate_middle(unicode_text(output.content), self.output_limit)
        if content is output.content:
            return output
        return ToolOutput(content=content, is_error=output.is_error, metadata=output.metadata)

    async def _dispatch(
        self, prepared: PreparedCall, ctx: ToolContext, timeout: float | None
    ) -> ToolOutput:
        name, handler, arguments = prepared.name, prepared.handler, prepared.arguments
        if prepared.problem is not None or handler is None or arguments is None:
            return error_output(prepared.problem or f"Tool {name!r} cannot run.")
        try:
            async with asyncio.timeout(timeout):
                return await contained(_handled(handler, arguments, ctx), f"the tool {name!r}")
        except TimeoutError:
            return error_output(
                f"Tool {name!r} timed out after {timeout:g} s and was stopped; narrow "
                "the call (a smaller path, a simpler pattern, a narrower query).",
                timeout=True,
            )
        except ToolError as exc:
            return error_output(f"Tool {name!r}: {message_of(exc)}", error_type=type(exc).__name__)
        except PlacementFailed as exc:  # its message kept apart: a run's end may say it
            return error_output(
                f"Tool {name!r} failed: {described(exc)}",
                error_type=type(exc).__name__,
                unplaced=message_of(exc),
            )
        except RhoError as exc:
            return error_output(
                f"Tool {name!r} failed: {described(exc)}",
                error_type=type(exc).__name__,
            )
        except Exception as exc:  # noqa: BLE001 - a handler bug must not crash the loop
            return error_output(
                f"Tool {name!r} failed unexpectedly: {described(exc)}. "
                f"Arguments were: {_preview(arguments)}",
                error_type=type(exc).__name__,
            )


async def _handled(
    handler: ToolHandler, arguments: Mapping[str, Any], ctx: ToolContext
) -> ToolOutput:
    """``handler.handle``'s output, called inside the awaited code: a ``handle`` that raised
    before returning its awaitable (one written without ``async``) raised outside
    ``contained``, so its ``SystemExit`` or ``CancelledError`` left the run."""
    return await handler.handle(arguments, ctx)


def shown(handler: ToolHandler) -> tuple[str, Mapping[str, Any]]:
    """What the model is shown of ``handler`` besides its name: its description and schema.
    One that raises reading them is a ``ConfigError`` naming the tool and the user's member
    (``plugged.member_name``); ``CancelledError`` and ``KeyboardInterrupt`` pass."""
    member = "description"
    try:
        description = handler.description
        member = "parameters"
        return description, handler.parameters
    except BaseException as exc:  # SystemExit too: the tool's bug, not the process's end
        if isinstance(exc, asyncio.CancelledError | KeyboardInterrupt):
            raise
        raise ConfigError(
            f"tool {handler.name!r}: reading {member_name(handler, member)} raised "
            f"{described(exc)} while listing the tools for the model; the model is shown "
            "each tool's description and parameters, so they must stay readable"
        ) from exc


def _preview(arguments: Mapping[str, Any]) -> str:
    text = json.dumps(arguments, default=str)
    return text if len(text) <= 500 else text[:500] + "..."
