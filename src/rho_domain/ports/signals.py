"""SignalSource: control of a running session from elsewhere (another task or process)."""

from __future__ import annotations

from abc import abstractmethod
from typing import TYPE_CHECKING, Protocol

from rho_domain.lazy_names import lazy_names

if TYPE_CHECKING:
    from rho_domain.ports.directive import Directive as Directive

# built by a store reading an operator's directive, not by every run naming the port
__getattr__ = lazy_names(__name__, {"Directive": "rho_domain.ports.directive"})


class SignalSource(Protocol):
    """Cancel, pause, directives and context-export requests for a session.

    The session never polls for a cancel: it races its work against ``wait_for_cancel``.
    (Adapters may offer a ``cancel_requested`` check of their own; the port does not need one.)
    """

    @abstractmethod
    async def clear_cancel(self, session_id: str) -> None:
        """Consume a cancel request, so that the next run is not cancelled too."""

    @abstractmethod
    async def clear_pause(self, session_id: str) -> None:
        """Lift a pause, so that the next run does not start paused (a run that ends clears
        the pause it was given, whatever ended it). No pause: nothing to do."""

    @abstractmethod
    async def wait_for_cancel(self, session_id: str) -> None:
        """Return when a cancel is requested (the session races its work against this).

        Adapters that poll (files) do so here, at their own pace; the task is cancelled by
        the session when the run ends.
        """

    @abstractmethod
    async def is_paused(self, session_id: str) -> bool:
        """True while the session must wait before its next model call or tool."""

    @abstractmethod
    async def directives(self, session_id: str, *, after: int) -> tuple[Directive, ...]:
        """Directives with ``offset >= after``, in order."""

    @abstractmethod
    async def export_requests(self, session_id: str) -> tuple[str, ...]:
        """Ids of the context exports asked of this session and not answered yet (``monitor
        connect``), oldest or least first; a store may give only the first of many (the
        others come once those are answered). The session answers them between steps."""

    @abstractmethod
    async def answer_export(self, session_id: str, request_id: str, text: str) -> None:
        """Deliver the export asked for by ``request_id``; it is no longer pending afterwards.
        Raises StoreError when it cannot be written."""
