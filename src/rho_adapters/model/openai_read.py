"""Reading one Chat Completions response: a stream of SSE chunks, or one JSON body.

``read_stream`` decodes SSE (``sse.SSEDecoder``), parses each chunk's JSON (``chunks.loads``)
and feeds it to the ``ChunkAssembler``, yielding the display events as they come: the text of
consecutive deltas that came in one network chunk (``batched_body``: what one socket read
brought) as one ``TextChunk``, so that a burst costs the session one event. A chunk that
is not JSON is skipped with a ``StreamWarning`` while nothing of a tool call has arrived (text
is whole in every chunk, so nothing is lost), and fails the stream inside a tool call. An
event of an SSE type other than ``message`` and ``error``, or a JSON object without any key of
a chunk, is skipped the same way (``unknown_event``); both reach the session as a ``trace``
event, the first ``MAX_WARNINGS`` of an answer each, the rest counted in one
(``skipped_events.Skips``).
After ``[DONE]`` the rest of the body is drained, briefly, so the connection goes back to the pool.
A stream that ends without a finish reason is truncated; a 200 that carried nothing at all is
an ``EmptyStream``, which the model resends without streaming to learn why.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Mapping
from typing import TYPE_CHECKING, Any

from rho_adapters.model._errors import http_errors
from rho_adapters.model.answer_limits import AnswerWatch
from rho_adapters.model.bodies import body_chunks, whole_body
from rho_adapters.model.chunks import ChunkAssembler, loads
from rho_adapters.model.skipped_events import KNOWN_EVENTS, Skips, is_unknown
from rho_adapters.model.sse import SSEDecoder
from rho_domain.errors import ModelError, ModelProtocolError, TruncatedStream
from rho_domain.model import TextChunk

if TYPE_CHECKING:
    from rho_adapters.model.core_client import AnyResponse
    from rho_adapters.model.sse_event import SSEEvent
    from rho_domain.model import StreamEvent

DRAIN_SECONDS = 1.0  # grace for what follows [DONE] before the connection is dropped


class EmptyStream(TruncatedStream):
    """A 200 answer that carried nothing at all (stream or body)."""


async def read_stream(
    response: AnyResponse,
    assembler: ChunkAssembler,
    url: str,
    watch: AnswerWatch,
    *,
    key: str | None = None,
) -> AsyncIterator[StreamEvent]:
    """The events of a streamed response from ``url`` (see the module docstring). The text of
    consecutive deltas that arrived in one network chunk comes as one ``TextChunk``. Each
    network chunk is told to ``watch``: no completed event (keep-alive comments, part of one)
    for its idle seconds is a ``ModelTimeout``, a body past its limits (bytes, seconds) is
    ``AnswerTooLong``. ``key`` (the API key sent) is hidden from skipped events' traces."""
    decoder = SSEDecoder()
    skips = Skips(url, key)
    body = body_chunks(response)
    raw = b""
    async for raw in body:
        events: list[StreamEvent] = []
        try:
            done = _read_chunk(raw, decoder, assembler, skips, events, watch)
        except ModelError:
            for event in _joined(events):  # what the chunk held before the error
                yield event
            raise
        for event in _joined(events):
            yield event
        if done:
            for event in skips.summary():
                yield event
            await _drain(body)
            return
    for event in skips.summary():
        yield event
    for sse in decoder.flush():
        if sse.data.startswith("[DONE]"):
            return
        if (last := _last(sse.data, assembler)) is not _SKIPPED:
            for event in assembler.feed(last):
                yield event
    if assembler.finish_reason is None:
        if not (assembler.events or assembler.partial_text or assembler.has_calls):
            if _cut_field(raw):
                # "d", "da", "dat": no event, but not an empty stream either. Taken as one,
                # it was resent without streaming, whose cut answer was then "a chunk that
                # is not JSON: 'd'".
                raise TruncatedStream(
                    f"the model stream was cut in its first line (it ends "
                    f"{raw[-80:].decode('utf-8', 'replace')!r}): the "
                    "connection or a proxy ended the answer early; try again"
                )
            raise EmptyStream(f"the model server at {url} answered 200 with an empty stream")
        raise TruncatedStream(
            "the model stream ended without a finish_reason or [DONE]",
            partial_text=assembler.partial_text,
        )


def _read_chunk(
    raw: bytes,
    decoder: SSEDecoder,
    assembler: ChunkAssembler,
    skips: Skips,
    out: list[StreamEvent],
    watch: AnswerWatch,
) -> bool:
    """Append to ``out`` the events of one network chunk of the body; True at ``[DONE]``.
    Tells ``watch`` whether the chunk completed an event."""
    datas = decoder.whole_events(raw)
    if datas is None:
        sses = decoder.feed(raw)
        if sses:  # part of an event is no progress: it may never end
            watch.heard(len(raw))
        else:
            watch.quiet(len(raw))
        for sse in sses:
            if sse.data.startswith("[DONE]"):
                return True
            out.extend(_events_of(sse, assembler, skips))
        return False
    watch.heard(len(raw))
    # Whole unnamed events (nearly every chunk of a stream, one delta each or several): a
    # delta's JSON chunk goes straight to the assembler, without the SSE event value and the
    # checks of ``_events_of`` that cannot apply to it.
    for data in datas:
        if data.startswith("[DONE]"):
            return True
        try:
            chunk = loads(data)
        except ValueError:
            chunk = None
        if chunk.__class__ is dict and "choices" in chunk:
            out.extend(assembler.feed(chunk))
        else:
            from rho_adapters.model.sse_event import SSEEvent  # with the first such event

            out.extend(_events_of(SSEEvent(data), assembler, skips))
    return False


def _joined(events: list[StreamEvent]) -> list[StreamEvent]:
    """``events`` with each run of consecutive ``TextChunk``s as one: deltas that arrived
    together reach the session, its listeners and the event log as one piece of text (one
    event to build, announce and keep, not one per delta; the text is the same)."""
    if len(events) < 2:
        return events
    joined: list[StreamEvent] = []
    run: list[str] = []
    for event in events:
        if isinstance(event, TextChunk):
            run.append(event.text)
            continue
        if run:
            joined.append(TextChunk("".join(run)))
            run = []
        joined.append(event)
    if run:
        joined.append(TextChunk("".join(run)))
    return joined


async def read_whole(
    response: AnyResponse,
    assembler: ChunkAssembler,
    url: str,
    model: str,
    watch: AnswerWatch,
) -> list[StreamEvent]:
    """The events of a non-streamed response from ``url`` for ``model``, its body read
    against ``watch`` (``whole_body``)."""
    raw = await whole_body(response, watch)
    if not raw.strip():
        raise EmptyStream(
            f"the model server at {url} answered 200 with an empty body "
            f"(model {model!r}); its log says why"
        )
    data = _whole_json(raw.decode("utf-8", "replace"))
    choices = data.get("choices") if isinstance(data, Mapping) else None
    if isinstance(choices, list):
        for choice in choices:
            message = choice.get("message") if isinstance(choice, Mapping) else None
            calls = message.get("tool_calls") if isinstance(message, Mapping) else None
            for position, call in enumerate(calls if isinstance(calls, list) else ()):
                if isinstance(call, dict):
                    call.setdefault("index", position)
    events = assembler.feed(data)
    if assembler.finish_reason is None and not (assembler.partial_text or assembler.has_calls):
        raise TruncatedStream("the model response has no choices")
    return events


def parse(data: str, assembler: ChunkAssembler) -> Any:
    """``data`` as JSON, or ``ModelProtocolError`` (with the partial text) if it is not."""
    try:
        return loads(data)  # a document nested past the parser is a ValueError too
    except ValueError as exc:
        raise ModelProtocolError(
            f"the model server sent a chunk that is not JSON: {data[:200]!r}",
            partial_text=assembler.partial_text,
        ) from exc


def _cut_field(raw: bytes) -> bool:
    """Whether the body's last line, ``raw`` ending it, is an SSE field name cut short
    (``d``, ``da``, ``dat``, ``eve``): a stream cut there, before its first event. Other text
    without an event (a whole JSON answer to a request to stream) is an empty stream, resent
    without streaming."""
    line = raw.rpartition(b"\n")[2].lstrip(b"\r")
    return bool(line) and any(
        field.startswith(line) and field != line for field in (b"data:", b"event:")
    )


def _whole_json(text: str) -> Any:
    """A whole (not streamed) answer's JSON. One that ends before its document does (a
    ``{`` unclosed: the connection or a proxy ended the body) is a ``TruncatedStream``; other
    text a ``ModelProtocolError``. Both were "the model server sent a chunk that is not JSON",
    a chunk no whole answer has, and a server bug to look for where the body had been cut."""
    try:
        return loads(text)
    except ValueError as exc:
        where = getattr(exc, "pos", -1)
        unended = str(exc).startswith("Unterminated string") or where >= len(text.rstrip())
        if text.lstrip().startswith(("{", "[")) and unended:
            raise TruncatedStream(
                f"the model's answer was cut before its end ({len(text):,} characters, it ends "
                f"{text[-80:]!r}): the connection or a proxy ended it early; try again"
            ) from None
        raise ModelProtocolError(
            f"the model server answered with a body that is not JSON: {text[:200]!r}"
        ) from None


def _last(data: str, assembler: ChunkAssembler) -> Any:
    """The chunk of an event the body ended in without the blank line that ends an event:
    its JSON, or, when it does not parse, ``TruncatedStream`` saying the stream was cut there.
    It was "the model server sent a chunk that is not JSON", which sent the user looking for
    a server bug where a connection or a proxy had ended the body early (a llama.cpp
    capture cut at any byte inside its last chunk said so). After the finish chunk (a cut
    inside ``data: [DONE]``) the answer is whole: the unfinished tail is ``_SKIPPED``."""
    try:
        return loads(data)
    except ValueError:
        if assembler.finish_reason is not None:
            return _SKIPPED
        raise TruncatedStream(
            f"the model stream was cut in the middle of a chunk (it ends "
            f"{data[-80:]!r}, unfinished): the connection or a proxy ended the answer "
            "early; try again",
            partial_text=assembler.partial_text,
        ) from None


async def _drain(body: AsyncIterator[bytes]) -> None:
    """Read what follows [DONE] (the chunked-encoding terminator) so the connection goes back
    to the pool; a server that keeps the body open gets a short grace, then is dropped."""
    with contextlib.suppress(*http_errors(), TimeoutError):
        async with asyncio.timeout(DRAIN_SECONDS):
            async for _ in body:
                pass


_SKIPPED = object()


def _unparsed(data: str, assembler: ChunkAssembler) -> Any:
    """For an event that is not JSON: ``_SKIPPED`` when it can be left out (every chunk so far
    was whole: text, reasoning), so nothing is lost. Inside a tool call the event may have
    carried part of its arguments: that stream cannot be trusted, so it fails
    (``ModelProtocolError``)."""
    if assembler.has_calls:
        return parse(data, assembler)
    return _SKIPPED


def _events_of(sse: SSEEvent, assembler: ChunkAssembler, skips: Skips) -> list[StreamEvent]:
    """What one SSE event of a stream gives: the assembled events, or a trace of what was
    skipped (see the module docstring)."""
    if sse.event not in KNOWN_EVENTS:
        # an event type of another protocol or an extension: not a chunk of ours
        return skips.trace("unknown_event", f"an event of type {sse.event[:100]!r}", sse.data)
    try:
        chunk = loads(sse.data)
    except ValueError:
        chunk = _unparsed(sse.data, assembler)
    if chunk is _SKIPPED:
        return skips.trace("parse_error", "an event that is not JSON", sse.data)
    if sse.event == "error" and not (isinstance(chunk, Mapping) and chunk.get("error")):
        chunk = {"error": chunk}
    if is_unknown(chunk):
        return skips.trace("unknown_event", "an event that is not a chunk", sse.data)
    return assembler.feed(chunk)
