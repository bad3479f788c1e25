"""ChatModel: the port to a language model endpoint."""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import AsyncIterator
from typing import Protocol

from rho_domain.model import ModelRequest, StreamEvent


class ChatModel(Protocol):
    """Streams one model call.

    Adapters translate the wire protocol; the loop never sees HTTP.
    """

    @abstractmethod
    def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        """Start the call and yield its events, ending with exactly one ``StreamFinished``.

        Raises a ``ModelError`` subclass on failure; text streamed before a failure is in the
        error's ``partial_text``. The caller may stop iterating early (cancellation): the
        adapter must then release the connection (``aclose`` of the generator).
        """

    @abstractmethod
    async def aclose(self) -> None:
        """Release connections. Idempotent; the model may not be used afterwards."""
