"""A pure Server-Sent Events decoder: bytes in, events out, no I/O.

Contract (what OpenAI, vLLM, llama.cpp, Ollama, Groq, Cerebras and Anthropic actually send):

- A UTF-8 byte order mark before the first line is dropped (the SSE standard's decoding;
  before, it made the first line's field ``\ufeffdata``, unknown, and the first delta was lost
  without a word), also when it comes split across network chunks.
- Lines end in LF, CR or CRLF; a CR at the end of one network chunk followed by an LF at the
  start of the next is one line end, not two.
- Bytes are buffered until a line ends, so a multi-byte UTF-8 character split across network
  chunks decodes correctly.
- ``:`` lines are comments (keep-alives such as ``: OPENROUTER PROCESSING``) and are skipped.
- ``data:x`` and ``data: x`` are the same (one leading space is stripped, further ones kept);
  several ``data`` lines of one event are joined with a newline; ``event:`` names the event;
  ``id``, ``retry`` and unknown fields are ignored.
- An event is dispatched on an empty line. At EOF (``flush``) a pending event without its
  blank line is dispatched anyway: two recorded servers end that way.
- No size cap: a single event may be many megabytes (tool arguments).
"""

from __future__ import annotations

from collections.abc import AsyncIterable, AsyncIterator
from typing import TYPE_CHECKING

from rho_domain.lazy_names import lazy_names

if TYPE_CHECKING:  # the event's class: with the first event dispatched (sse_event.py)
    from rho_adapters.model.sse_event import SSEEvent as SSEEvent

__getattr__ = lazy_names(__name__, {"SSEEvent": "rho_adapters.model.sse_event"})

_TERMINATORS = (b"\n", b"\r")
_BOM = b"\xef\xbb\xbf"


class SSEDecoder:
    """Incremental decoder. ``feed`` each network chunk, then ``flush`` once at EOF."""

    __slots__ = ("_begun", "_data", "_event", "_pending", "_skip_lf")

    def __init__(self) -> None:
        # Bytes of an unfinished line, kept as a list so a huge line arriving in many chunks
        # is joined once (not re-copied on every chunk).
        self._pending: list[bytes] = []
        self._skip_lf = False  # the previous chunk ended in CR: a leading LF belongs to it
        self._data: list[str] = []
        self._event = ""
        self._begun = False  # a chunk went through ``feed``'s lines: no BOM can follow

    def whole(self, chunk: bytes) -> str | None:
        """The data of ``chunk`` when it is one whole unnamed event and nothing is pending
        (how servers send each delta), else None: ``whole_events`` for one event. Consumes
        nothing: a caller that gets None gives the chunk to ``feed``."""
        datas = self.whole_events(chunk)
        return datas[0] if datas is not None and len(datas) == 1 else None

    def whole_events(self, chunk: bytes) -> list[str] | None:
        """The data of each event of ``chunk`` when it is one or more whole unnamed events of
        one ``data:`` line each and nothing is pending (several deltas of a server that came
        in one read), else None. Consumes nothing, as ``whole``: a caller that gets the data
        has what ``feed`` would have returned as one ``SSEEvent`` each."""
        if not (
            chunk.startswith(b"data: ")
            and chunk.endswith(b"\n\n")
            and not (self._pending or self._data or self._event or self._skip_lf)
            and b"\r" not in chunk
        ):
            return None
        # Split after decoding: "\n\n" is ASCII, so no character straddles a split (and a
        # broken UTF-8 sequence before one is replaced alike either way).
        events = chunk[:-2].decode("utf-8", "replace").split("\n\n")
        for event in events:
            if not event.startswith("data: ") or "\n" in event:
                return None  # a comment, a field other than data, two data lines, a blank
        return [event[6:] for event in events]

    def feed(self, chunk: bytes) -> list[SSEEvent]:
        """Consume one network chunk; return the events it completed (possibly none)."""
        datas = self.whole_events(chunk)
        if datas is not None:
            # What the general path below makes of it, without splitting and joining lines.
            from rho_adapters.model.sse_event import SSEEvent

            return [SSEEvent(data) for data in datas]
        if (self._skip_lf or not self._begun) and chunk:
            chunk = self._unframed(chunk)
        if not chunk:
            return []
        if self._pending:
            self._pending.append(chunk)
            if b"\n" not in chunk and b"\r" not in chunk:
                return []  # the line goes on: joined once, when it ends
            chunk = b"".join(self._pending)
            self._pending.clear()
        # Each membership test scans the chunk: one for CR, and the common LF-only case
        # needs no other (a chunk without any LF leaves its text pending below).
        if b"\r" in chunk:
            lines = [line.rstrip(b"\r\n") for line in chunk.splitlines(keepends=True)]
            if not chunk.endswith(_TERMINATORS):
                self._pending.append(lines.pop())
            elif chunk.endswith(b"\r"):
                self._skip_lf = True
        else:  # LF only, as nearly every server sends
            lines = chunk.split(b"\n")
            if last := lines.pop():  # the text after the last LF: an unfinished line
                self._pending.append(last)
        # This runs for every network chunk of every stream: a ``data:`` line and the blank
        # line that ends an unnamed event are handled inline, the rest by ``_line``.
        events: list[SSEEvent] = []
        for line in lines:
            if line.startswith(b"data: "):
                self._data.append(line[6:].decode("utf-8", "replace"))
            elif not line and self._data and not self._event:
                from rho_adapters.model.sse_event import SSEEvent

                events.append(SSEEvent("\n".join(self._data)))
                self._data = []
            else:
                self._line(line, events)
        return events

    def _unframed(self, chunk: bytes) -> bytes:
        """``chunk`` without what belongs to no line: the LF of a CRLF the previous chunk
        ended in, or a BOM before the first line (only ``feed`` can see one: a chunk of whole
        events starts with ``data: ``)."""
        if self._skip_lf:
            self._skip_lf = False
            if chunk[:1] == b"\n":
                chunk = chunk[1:]
        if not self._begun:
            # A BOM may come split across network chunks (one byte, then two): the part
            # that could still be one waits in ``_pending`` for the rest.
            if self._pending:
                chunk = b"".join(self._pending) + chunk
                self._pending.clear()
            if len(chunk) < len(_BOM) and _BOM.startswith(chunk):
                self._pending.append(chunk)
                return b""
            self._begun = True
            if chunk.startswith(_BOM):
                chunk = chunk[len(_BOM) :]
        return chunk

    @property
    def holds_part(self) -> bool:
        """Whether part of an event has arrived and waits for the rest (a ``data`` or
        ``event`` line, or an unfinished line that is not a comment): a chunk that completed
        no event but leaves this true was progress, one that leaves it false (comments,
        blank lines) a keep-alive."""
        return bool(self._data or self._event or (self._pending and self._pending[0][:1] != b":"))

    def flush(self) -> list[SSEEvent]:
        """End of stream: finish the last line and dispatch a pending event."""
        events: list[SSEEvent] = []
        if self._pending:
            line = b"".join(self._pending)
            self._pending.clear()
            self._line(line, events)
        self._line(b"", events)
        self._skip_lf = False
        return events

    def _line(self, line: bytes, events: list[SSEEvent]) -> None:
        if not line:
            if self._data:
                from rho_adapters.model.sse_event import SSEEvent

                events.append(SSEEvent("\n".join(self._data), self._event))
                self._data = []
            self._event = ""
            return
        if line[0] == 0x3A:  # ":" comment / keep-alive
            return
        name, sep, value = line.partition(b":")
        if sep and value[:1] == b" ":
            value = value[1:]
        if name == b"data":
            self._data.append(value.decode("utf-8", "replace"))
        elif name == b"event":
            self._event = value.decode("utf-8", "replace")
        # id, retry and unknown fields: legal, and meaningless for chat streams


async def aiter_sse(chunks: AsyncIterable[bytes]) -> AsyncIterator[SSEEvent]:
    """Decode an async byte stream into events, including the unterminated last one."""
    decoder = SSEDecoder()
    async for chunk in chunks:
        for event in decoder.feed(chunk):
            yield event
    for event in decoder.flush():
        yield event
