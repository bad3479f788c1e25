"""The event stream of ``rho-agent serve`` as ``AgentClient.events`` reads it: Server-Sent
Events parsed into ``ServerEvent`` values, and whether a connection brought anything (how the
client tells a dropped stream worth reconnecting to from a server that cuts every one).
Lines are read from the bytes by ``bounded_lines``, which refuses an event past
``EVENT_BYTES``: httpx's ``aiter_lines`` kept an endless line (a hostile or broken server
sending ``data: xxxx...`` without a newline) in memory until the process died."""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator, Mapping
from typing import Any

import attrs

from rho_adapters.model.answer_limits import DEFAULT_ANSWER_BYTES
from rho_domain.value_methods import value_eq, value_hash, value_repr
from rho_entry.server.errors import ApiError

EVENT_BYTES = 2 * DEFAULT_ANSWER_BYTES
"""The largest event ``bounded_lines`` reads: an event is one trace line, which holds at most
one model answer (``DEFAULT_ANSWER_BYTES``), and JSON's escapes may double it."""

_LINE_END = re.compile(r"\r\n|\r|\n")  # the three endings SSE allows


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
                except (ValueError, RecursionError):  # nested past the parser too
                    raise ApiError(
                        f"the server sent an event that is not this API's (id {raw_id!r:.40}, "
                        f"data {fields['data']!r:.100}); is this a rho-agent serve server?"
                    ) from None
                yield ServerEvent(event_id, fields.get("event", "message"), data)
            fields = {}
        elif not line.startswith(":"):
            name, _, value = line.partition(":")
            fields[name] = value.removeprefix(" ")


async def bounded_lines(chunks: AsyncIterator[bytes], limit: int) -> AsyncIterator[str]:
    r"""The lines of an SSE body read as ``chunks``, without their endings (``\n``,
    ``\r\n`` or ``\r``). ``ApiError`` as soon as one event (the lines up to a blank one)
    passes ``limit`` characters, before the rest of it is held in memory."""
    pending = bytearray()
    held = 0  # characters of the current event's lines already given
    after_cr = False  # a chunk ended with \r: a \n opening the next one ends no new line
    async for chunk in chunks:
        if after_cr and chunk[:1] == b"\n":
            chunk = chunk[1:]
        if not chunk:
            continue
        last = max(chunk.rfind(b"\n"), chunk.rfind(b"\r"))  # the new bytes only: a long
        cut = len(pending) + last + 1 if last >= 0 else 0  # line is not searched again
        pending += chunk
        if cut:  # a newline is never inside a UTF-8 sequence: the text decodes whole
            text = pending[:cut].decode("utf-8", "replace")
            after_cr = cut == len(pending) and pending[-1] == ord("\r")
            del pending[:cut]
            for line in _LINE_END.split(text)[:-1]:
                held = held + len(line) if line else 0
                yield line
        else:
            after_cr = False
        if held + len(pending) > limit:
            raise ApiError(
                f"the server sent an event of more than {limit} bytes (the stream's events "
                "are trace lines, far smaller); is this a rho-agent serve server?"
            )
    if pending:
        yield pending.decode("utf-8", "replace")
