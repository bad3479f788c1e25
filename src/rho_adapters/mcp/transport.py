"""The transport port of an MCP connection: what ``RpcPeer`` needs of the thing that moves its
messages (``stdio.py``: a server's stdin and stdout; ``http.py``: Streamable HTTP), and the
shape of a message (a decoded JSON-RPC object). Implementations raise only ``McpError``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

Message = dict[str, Any]


class Transport(Protocol):
    """Moves JSON-RPC messages to and from one server (``stdio.py``, ``http.py``)."""

    async def start(self, deliver: Callable[[str], None], closed: Callable[[str], None]) -> None:
        """Connect; from now on call ``deliver`` with each message received and ``closed``
        once, with why, when the server is gone. Raises ``McpError`` when it cannot start."""
        ...

    async def send(self, message: Message) -> None:
        """Send one message (for HTTP: and deliver its response). Raises ``McpError``."""
        ...

    def negotiated(self, version: str) -> None:
        """The protocol version the handshake agreed on (HTTP sends it on every request)."""
        ...

    @property
    def answers_in_reply(self) -> bool:
        """True when ``send`` of a request delivers its answer before it returns, or the
        answer never comes (HTTP: it is in the reply to the request's POST); False when
        answers arrive on their own, later (stdio: a line read from the server)."""
        ...

    async def aclose(self) -> None:
        """Disconnect and stop the server. Idempotent."""
        ...


__all__ = ["Message", "Transport"]
