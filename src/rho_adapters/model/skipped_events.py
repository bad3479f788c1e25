"""The events of a Chat Completions stream that are not chunks, skipped and reported: which
SSE event types and which JSON objects carry nothing a chunk carries (``KNOWN_EVENTS``,
``is_unknown``), and how an answer's skipped events reach the session (``Skips``: a ``trace``
event each, the first ``MAX_WARNINGS``, the rest counted in one). ``openai_read`` decides
what to skip."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rho_domain.model import StreamEvent, StreamWarning, TraceName

MAX_WARNINGS = 20  # skipped events of one answer reported each; the rest are counted in one


class Skips:
    """The skipped events of one answer, as ``trace`` events: the first ``MAX_WARNINGS``
    each, then only counted, and the count reported once at the end (``summary``). Each
    warning is a trace line the session keeps: one for each skipped event turned an 18-byte
    ``event: x`` into some 200 bytes of trace, and an answer within ``model_answer_bytes``
    (64 MiB) into some 700 MB of trace file."""

    __slots__ = ("key", "more", "reported", "url")

    def __init__(self, url: str, key: str | None = None) -> None:
        self.url, self.key = url, key  # the API key, hidden from what is kept
        self.reported = 0
        self.more = 0

    def trace(self, name: TraceName, what: str, data: str) -> list[StreamEvent]:
        """``[StreamWarning]`` for one skipped event, or ``[]`` past ``MAX_WARNINGS``."""
        if self.reported >= MAX_WARNINGS:
            self.more += 1
            return []
        self.reported += 1
        from rho_adapters.model.secret_hiding import hide_secrets  # with the first skip

        # a gateway may echo the request's headers: the trace keeps no key (as errors do not)
        return [_trace(name, what, hide_secrets(data, self.key), self.url)]

    def summary(self) -> list[StreamEvent]:
        """One warning counting the events skipped without one, if any."""
        if not self.more:
            return []
        what = f"{self.more:,} more events that are not chunks (not recorded each)"
        return [_trace("unknown_event", what, "", self.url)]


# SSE event types of Chat Completions streams: none (the default), "message", and "error"
KNOWN_EVENTS = frozenset({"", "message", "error"})
# keys of a chunk this reader uses; a mapping with none of them carries nothing it knows
_CHUNK_KEYS = ("choices", "usage", "error", "x_groq", "service_tier")


def is_unknown(chunk: Any) -> bool:
    """True for a mapping with none of the keys of a chunk (it carries nothing we read)."""
    if chunk.__class__ is dict and "choices" in chunk:
        return False  # a delta's chunk, decided without the generator below (once per delta)
    return isinstance(chunk, Mapping) and not any(key in chunk for key in _CHUNK_KEYS)


def _trace(name: TraceName, what: str, data: str, url: str) -> StreamWarning:
    """A skipped event, reported (``StreamWarning``, the session's ``trace`` event)."""
    from rho_domain.model_extras import TRACE_DETAIL_LIMIT, StreamWarning

    quoted = f": {data[:200]!r}" if data else ""
    return StreamWarning(
        f"skipped {what} in the model stream from {url}{quoted}",
        name=name,
        detail=data[:TRACE_DETAIL_LIMIT],
    )
