"""The tool contract: what every tool handler declares and how it is called.

A handler is written once, against ports only (``ToolContext.executor``, ``.databases``), so
the same code runs locally, in a sandbox or against in-memory fakes.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Protocol

import attrs

from rho_domain.permissions import PermissionProfile
from rho_domain.ports.clock import Clock
from rho_domain.ports.executor import Executor
from rho_domain.value_methods import value_eq, value_hash, value_repr

if TYPE_CHECKING:
    # the database port is built only when a run has databases; the delegation's values with
    # the first delegate call or child continued (``tools.children``)
    from rho_domain.ports.database import Database
    from rho_domain.tools.children import Delegator


@attrs.frozen(kw_only=True)
class ToolPolicy:
    """How risky a call is. ``read_only`` tools never change anything; ``dangerous`` ones
    need approval under ApprovalMode.DANGEROUS.

    ``refused`` (empty when the call may run) is why the handler would refuse this call under
    the profile it was built for, word for word as it would say it: the call is denied before
    anyone is asked to approve it. ``destructive`` (empty when none) is why this call asks a
    human even when its tool was approved for the rest of the session ("always"). ``asks``
    (empty when the handler has nothing to add) is what the handler recognised in a
    dangerous call, shown instead of the generic reason when it asks (``bash runs make,
    pytest; writes build.log``).
    """

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    read_only: bool = True
    dangerous: bool = False
    refused: str = ""
    destructive: str = ""
    asks: str = ""


READ_ONLY = ToolPolicy(read_only=True, dangerous=False)
DANGEROUS = ToolPolicy(read_only=False, dangerous=True)


@attrs.frozen(kw_only=True)
class ToolOutput:
    """What a tool returns. ``content`` is for the model; ``metadata`` for UIs and traces."""

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    content: str
    is_error: bool = False
    metadata: Mapping[str, Any] = attrs.field(factory=dict)

    @property
    def success(self) -> bool:
        """``not is_error``: the design documents' name for the outcome."""
        return not self.is_error


def error_output(message: str, **metadata: Any) -> ToolOutput:
    """A failed tool result the model reads (``metadata`` for UIs and traces)."""
    return ToolOutput(content=message, is_error=True, metadata=metadata)


@attrs.define
class WriteTally:
    """What the write and edit tools have written in one run, in bytes: the profile's
    ``limits.run_written_mib`` bounds it (each write alone is bounded by the file-size limit;
    without this, a run could fill the disk one 10 MB write at a time). The loop starts a new
    one with each run (``ToolBatch.written``); a handler adds what it wrote."""

    __repr__ = value_repr
    __eq__ = value_eq

    written: int = 0


@attrs.frozen(kw_only=True)
class ToolContext:
    """What a handler may use. ``databases`` maps alias to an open Database port;
    ``delegate`` runs a child agent (None inside a child: one level only); ``written``: the
    run's bytes written so far (a context built outside a run counts its own calls only)."""

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    session_id: str
    call_id: str
    executor: Executor
    profile: PermissionProfile
    clock: Clock
    databases: Mapping[str, Database] = attrs.field(factory=dict)
    delegate: Delegator | None = None
    written: WriteTally = attrs.field(factory=WriteTally)


class ToolHandler(Protocol):
    """A tool. Handlers subclass this Protocol explicitly.

    ``parameters`` is a JSON Schema object. ``handle`` receives arguments already parsed,
    coerced and checked against that schema. It returns a ``ToolOutput``; raising ``ToolError``
    is also fine (the registry turns it into an error result). It must not catch
    ``asyncio.CancelledError``.
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
        """The JSON Schema object its arguments are checked against."""

    @abstractmethod
    def policy_for(self, arguments: Mapping[str, Any]) -> ToolPolicy:
        """The policy of one call (a tool may be read-only for some arguments only)."""

    @abstractmethod
    async def handle(self, arguments: Mapping[str, Any], ctx: ToolContext) -> ToolOutput:
        """Do the work."""
