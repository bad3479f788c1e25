"""The event stream of ``rho-agent serve`` as ``AgentClient.events`` reads it: Server-Sent
Events parsed into ``ServerEvent`` values, and whether a connection brought anything (how the
client tells a dropped stream worth reconnecting to from a server that cuts every one)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Mapping
from typing import Any

import attrs

from rho_domain.value_methods import value_eq, value_hash, value_repr
from rho_entry.server.errors import ApiError


@attrs.frozen
class ServerEvent:
    """One event of a session's stream: ``id`` is its trace line (None for deltas)."""

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    id: int | None
    kind: str
    data: Mapping[str, Any]


class Heard:
    """What one connection to a stream brought: ``events`` (set by the reader) and
    ``keepalives`` (comment lines, which a quiet stream sends; ``lines`` notes them)."""

    def __init__(self) -> None:
        self.events = False
        self.keepalives = False

    async def lines(self, lines: AsyncIterator[str]) -> AsyncIterator[str]:
        """``lines`` unchanged, noting the keep-alives among them."""
        async for line in lines:
            if line.startswith(":"):
                self.keepalives = True
            yield line


async def parse_events(lines: AsyncIterator[str]) -> AsyncIterator[ServerEvent]:
    """The events of an SSE stream's ``lines``; ``ApiError`` for one that is not this API's
    (an id that is not a number, data that is not JSON)."""
    fields: dict[str, str] = {}
    async for line in lines:
        if not line:
            if "data" in fields:
                raw_id = fields.get("id")
                try:
                    event_id = int(raw_id) if raw_id else None
                    data = json.loads(fields["data"])
                except ValueError:
                    raise ApiError(
                        f"the server sent an event that is not this API's (id {raw_id!r:.40}, "
                        f"data {fields['data']!r:.100}); is this a rho-agent serve server?"
                    ) from None
                yield ServerEvent(event_id, fields.get("event", "message"), data)
            fields = {}
        elif not line.startswith(":"):
            name, _, value = line.partition(":")
            fields[name] = value.removeprefix(" ")
