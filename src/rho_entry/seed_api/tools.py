"""The design documents' tool API: ``ToolHandler``, ``ToolInvocation``, ``ToolOutput``,
``ToolRegistry``, as a thin layer over the domain's tools.

A tool written the documents' way::

    class Weather(ToolHandler):
        name = "weather"
        description = "Today's weather in a city."
        parameters = {"type": "object", "properties": {"city": {"type": "string"}},
                      "required": ["city"]}

        async def handle(self, invocation: ToolInvocation) -> ToolOutput:
            return ToolOutput(content=f"sunny in {invocation.arguments['city']}")

is adapted once (``as_domain_handler``) into the domain's ``rho_domain.tools.base.ToolHandler``
protocol, so in a Session (``Agent(config, tools=[Weather()])``) it goes through the same
argument checks, approval policy (``requires_approval`` is its risk: a call of such a tool is
"dangerous", asked under ``ApprovalMode.DANGEROUS`` and ``GRANULAR`` whether or not the
profile names it), timeout and truncation as a built-in tool.

``ToolRegistry`` is the domain registry plus the documents' ``register``, ``get_specs`` (OpenAI
function-calling format) and ``dispatch(invocation)``. Dispatching an invocation outside a
Session runs the tool in the registry's own workspace (the working directory it was made for,
under its permission profile, ``readonly`` unless said otherwise), without approvals: the
caller is the user, not a model.
"""

from __future__ import annotations

import inspect
import json
import os
from abc import ABC, abstractmethod
from collections.abc import Iterable, Mapping
from types import MappingProxyType
from typing import Any

import attrs

from rho_domain.config_checks import path_text
from rho_domain.messages import ToolCall
from rho_domain.model import ToolSpec
from rho_domain.permissions import PermissionProfile, readonly_profile
from rho_domain.tools import base
from rho_domain.tools import registry as domain_registry
from rho_domain.tools.prepared import PreparedCall
from rho_domain.value_methods import value_eq, value_hash, value_repr


@attrs.frozen
class ToolInvocation:
    """One call of a tool: its id, the tool's name and the parsed JSON arguments."""

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    call_id: str
    tool_name: str
    arguments: Mapping[str, Any] = attrs.field(factory=dict)


@attrs.frozen(init=False)
class ToolOutput(base.ToolOutput):
    """``ToolOutput(content, success=True, metadata=None)``: the domain's ``ToolOutput``
    (``is_error`` is ``not success``) built the documents' way."""

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    def __init__(
        self, content: str, success: bool = True, metadata: Mapping[str, Any] | None = None
    ) -> None:
        self.__attrs_init__(content=content, is_error=not success, metadata=dict(metadata or {}))


class ToolHandler(ABC):
    """The documents' abstract tool: ``name``, ``description``, ``parameters`` (a JSON
    Schema object), ``requires_approval`` (default False) and ``async handle(invocation)``.

    ``handle`` receives arguments already parsed, coerced and checked against ``parameters``;
    it returns a ``ToolOutput`` (a plain string is taken as a successful output). Raising
    ``ToolError`` or any exception becomes an error result the model reads.
    """

    @property
    @abstractmethod
    def name(self) -> str:
        """The name the model calls it by (unique in a registry)."""

    @property
    @abstractmethod
    def description(self) -> str:
        """What the tool does, for the model."""

    @property
    @abstractmethod
    def parameters(self) -> Mapping[str, Any]:
        """The JSON Schema object the arguments are checked against."""

    @property
    def requires_approval(self) -> bool:
        """True when a call may change things: the profile's approval mode then decides."""
        return False

    @abstractmethod
    async def handle(self, invocation: ToolInvocation) -> base.ToolOutput:
        """Do the work."""

    def to_spec(self) -> dict[str, Any]:
        """This tool in OpenAI function-calling format (``ToolSpec.to_openai``)."""
        spec = ToolSpec(name=self.name, description=self.description, parameters=self.parameters)
        return spec.to_openai()


class DocumentHandler(base.ToolHandler):
    """A ``ToolHandler`` of the documents as a domain tool handler (``as_domain_handler``).

    What the loop says of a member that raised names the documents' handler and its own
    member (``plugged.member_name``): "Deploy.requires_approval", not "DocumentHandler.policy_for".
    """

    # our member -> the caller's member it reads
    wrapped_members: Mapping[str, str] = MappingProxyType({"policy_for": "requires_approval"})

    def __init__(self, handler: ToolHandler) -> None:
        self.handler = handler
        self.__wrapped__ = handler  # named by it in errors (``plugged.member_name``)

    @property
    def name(self) -> str:
        """The wrapped handler's name."""
        return self.handler.name

    @property
    def description(self) -> str:
        """The wrapped handler's description."""
        return self.handler.description

    @property
    def parameters(self) -> Mapping[str, Any]:
        """The wrapped handler's JSON Schema."""
        return self.handler.parameters

    def policy_for(self, arguments: Mapping[str, Any]) -> base.ToolPolicy:
        """Not known to be read-only (never run beside other calls); dangerous when the
        handler ``requires_approval``."""
        return base.ToolPolicy(read_only=False, dangerous=self.handler.requires_approval)

    async def handle(self, arguments: Mapping[str, Any], ctx: base.ToolContext) -> base.ToolOutput:
        """Call the wrapped handler with a ``ToolInvocation`` of this call: an ``async def
        handle`` awaited, a sync one in a daemon thread of its own (``in_own_thread``).
        Called on the event loop, a sync tool that blocked (``time.sleep``, a request) held
        its ``tool_timeout``, ``cancel()`` and the run's time budget until it returned."""
        invocation = ToolInvocation(ctx.call_id, self.name, arguments)
        handle = self.handler.handle
        outcome: object
        if inspect.iscoroutinefunction(handle):
            outcome = handle(invocation)
        else:
            from rho_domain.own_thread import in_own_thread  # with the first sync tool

            outcome = await in_own_thread(lambda: handle(invocation), f"rho-tool {self.name}")
        if inspect.isawaitable(outcome):
            outcome = await outcome
        if isinstance(outcome, base.ToolOutput):
            return outcome
        if isinstance(outcome, str):
            return base.ToolOutput(content=outcome)
        return base.error_output(
            f"tool {self.name!r} returned {type(outcome).__name__}, expected a ToolOutput"
        )


def as_domain_handler(handler: ToolHandler | base.ToolHandler) -> base.ToolHandler:
    """``handler`` as the domain's tool protocol (documents' handlers are wrapped once)."""
    if isinstance(handler, ToolHandler):
        return DocumentHandler(handler)
    return handler


class ToolRegistry(domain_registry.ToolRegistry):
    """The domain registry with the documents' ``register``, ``get_specs`` and
    ``dispatch(invocation)`` (see the module docstring).

    ``working_dir`` (default: the current directory when first used) and ``profile``
    (default: readonly) are the workspace ``dispatch(invocation)`` runs tools in.
    """

    def __init__(
        self,
        handlers: Iterable[ToolHandler | base.ToolHandler] = (),
        *,
        output_limit: int = 20_000,
        working_dir: str | os.PathLike[str] | None = None,
        profile: PermissionProfile | None = None,
    ) -> None:
        super().__init__([as_domain_handler(h) for h in handlers], output_limit=output_limit)
        self.working_dir = path_text(working_dir)  # a Path kept as its text, as AgentConfig's
        self.profile = profile if profile is not None else readonly_profile()
        self._context: base.ToolContext | None = None

    def register(self, handler: ToolHandler | base.ToolHandler) -> None:
        """Add a tool (a handler with the same name is replaced)."""
        handlers = {**self._handlers, handler.name: as_domain_handler(handler)}
        self._handlers = dict(sorted(handlers.items()))

    def unregister(self, name: str) -> None:
        """Remove the tool ``name`` (nothing happens when there is none)."""
        self._handlers = {n: h for n, h in self._handlers.items() if n != name}

    def get_specs(self) -> list[dict[str, Any]]:
        """Every tool in OpenAI function-calling format, sorted by name."""
        return [spec.to_openai() for spec in self.specs()]

    def frozen(self) -> domain_registry.ToolRegistry:
        """A domain registry with these tools, fixed (what an ``Agent`` keeps)."""
        return domain_registry.ToolRegistry(self._handlers.values(), output_limit=self.output_limit)

    async def dispatch(
        self,
        call: ToolCall | PreparedCall | ToolInvocation,
        ctx: base.ToolContext | None = None,
        *,
        timeout: float | None = None,
    ) -> base.ToolOutput:
        """Run one call and return its (truncated) output; never raises but CancelledError.

        A ``ToolInvocation`` without ``ctx`` runs in this registry's workspace."""
        if isinstance(call, ToolInvocation):
            call = ToolCall(call.call_id, call.tool_name, json.dumps(dict(call.arguments)))
        if ctx is None:
            call_id = call.call.id if isinstance(call, PreparedCall) else call.id
            ctx = attrs.evolve(self._workspace(), call_id=call_id)
        return await super().dispatch(call, ctx, timeout=timeout)

    def _workspace(self) -> base.ToolContext:
        if self._context is None:
            from rho_adapters.clock import SystemClock
            from rho_domain.config import AgentConfig
            from rho_entry import wiring
            from rho_entry.config.home import current_dir

            config = AgentConfig(working_dir=self.working_dir or current_dir())
            self._context = base.ToolContext(
                session_id="",
                call_id="",
                executor=wiring.build_executor(config, self.profile, None),
                profile=self.profile,
                clock=SystemClock(),
                databases=self.databases(),
            )
        return self._context

    def databases(self) -> Mapping[str, Any]:
        """The open databases ``dispatch(invocation)`` gives database tools (none here;
        ``ToolFactory`` registries open the configured ones)."""
        return {}

    async def aclose(self) -> None:
        """Close the workspace's executor and databases, if ``dispatch`` opened them."""
        context, self._context = self._context, None
        if context is None:
            return
        for resource in (context.executor, *context.databases.values()):
            close = getattr(resource, "aclose", None)
            if close is not None:
                await close()
