"""ChatModel: the port to a language model endpoint; ContextMeter: its context window."""

from __future__ import annotations

import functools
from abc import abstractmethod
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Protocol, cast, runtime_checkable

from rho_domain.model import ModelRequest

if TYPE_CHECKING:
    from rho_domain.model import StreamEvent


class ChatModel(Protocol):
    """Streams one model call.

    Adapters translate the wire protocol; the loop never sees HTTP.
    """

    @abstractmethod
    def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        """Start the call and yield its events, ending with exactly one ``StreamFinished``.

        A ``RetryNotice`` announces each retry before its wait. Raises a ``ModelError`` subclass
        on failure; text streamed before a failure is in the error's ``partial_text``. The
        caller may stop iterating early (cancellation): the
        adapter must then release the connection (``aclose`` of the generator).
        """

    @abstractmethod
    async def aclose(self) -> None:
        """Release connections. Idempotent; the model may not be used afterwards."""


@runtime_checkable
class ContextMeter(Protocol):
    """What a model endpoint knows about its context window. Optional: a ChatModel that also
    implements it lets the session fit requests to the real window with real token counts;
    ``context_meter(model)`` finds it."""

    @abstractmethod
    async def context_window(self) -> int | None:
        """The server's context window in tokens, or None when it does not say. May ask the
        server once (then remembers); a caller arriving while it asks waits for that answer
        (a run asks ahead, beside its start: ``context_fit.ask_window_ahead``); never raises."""

    @abstractmethod
    def estimate_tokens(self, request: ModelRequest) -> int:
        """Prompt tokens of ``request`` (system, messages, tool schemas, template framing)
        estimated without I/O, corrected by every real count seen so far."""

    @abstractmethod
    async def count_tokens(self, request: ModelRequest) -> int:
        """Prompt tokens of ``request`` counted by the server's tokenizer where it has one,
        else ``estimate_tokens``. Never raises for a server without a tokenizer."""


def context_meter(model: ChatModel) -> ContextMeter | None:
    """The model as a ContextMeter, or None when it is not one. Decided by the model's class
    (its methods), once per class."""
    return cast(ContextMeter, model) if _is_meter_class(type(model)) else None


@functools.lru_cache(maxsize=256)
def _is_meter_class(cls: type) -> bool:
    # A runtime-checkable Protocol's isinstance walks the protocol's attributes on every call
    # (~10 us on Python 3.11), and a run asks about its model several times.
    return issubclass(cls, ContextMeter)
