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
from rho_domain.ports.database import Database
from rho_domain.ports.executor import Executor

if TYPE_CHECKING:
    from rho_domain.tools.delegate import Delegator


@attrs.frozen(kw_only=True)
class ToolPolicy:
    """How risky a call is. ``read_only`` tools never change anything; ``dangerous`` ones
    need approval under ApprovalMode.DANGEROUS."""

    read_only: bool = True
    dangerous: bool = False


READ_ONLY = ToolPolicy(read_only=True, dangerous=False)
DANGEROUS = ToolPolicy(read_only=False, dangerous=True)


@attrs.frozen(kw_only=True)
class ToolOutput:
    """What a tool returns. ``content`` is for the model; ``metadata`` for UIs and traces."""

    content: str
    is_error: bool = False
    metadata: Mapping[str, Any] = attrs.field(factory=dict)


def error_output(message: str, **metadata: Any) -> ToolOutput:
    return ToolOutput(content=message, is_error=True, metadata=metadata)


@attrs.frozen(kw_only=True)
class ToolContext:
    """What a handler may use. ``databases`` maps alias to an open Database port;
    ``delegate`` runs a child agent (None inside a child: one level only)."""

    session_id: str
    call_id: str
    executor: Executor
    profile: PermissionProfile
    clock: Clock
    databases: Mapping[str, Database] = attrs.field(factory=dict)
    delegate: Delegator | None = None


class ToolHandler(Protocol):
    """A tool. Handlers subclass this Protocol explicitly.

    ``parameters`` is a JSON Schema object. ``handle`` receives arguments already parsed,
    coerced and checked against that schema. It returns a ``ToolOutput``; raising ``ToolError``
    is also fine (the registry turns it into an error result). It must not catch
    ``asyncio.CancelledError``.
    """

    @property
    @abstractmethod
    def name(self) -> str: ...

    @property
    @abstractmethod
    def description(self) -> str: ...

    @property
    @abstractmethod
    def parameters(self) -> Mapping[str, Any]: ...

    @abstractmethod
    def policy_for(self, arguments: Mapping[str, Any]) -> ToolPolicy:
        """The policy of one call (a tool may be read-only for some arguments only)."""

    @abstractmethod
    async def handle(self, arguments: Mapping[str, Any], ctx: ToolContext) -> ToolOutput:
        """Do the work."""
