"""How much of one model answer is read, and for how long: ``AnswerLimits`` and the watch
that holds a response to them (``AnswerWatch``).

A model server decides how much it sends and for how long; without a bound, a broken proxy
or a hostile endpoint held the run and its memory: a ``data:`` line without an end grew until
the idle timeout, and deltas or keep-alives that never end kept a run going forever (httpx's
read timeout is reset by every byte). One byte bound covers every size of an answer by
construction, since each is a part of the body as decoded: one SSE line, one event, the
accumulated text and reasoning, one tool call's arguments, the choices other than 0 (read
and dropped). What the bytes do not bound is counted apart: the tool calls of one answer
(each a handful of bytes, each a call the loop would run) and the time the answer takes.
"""

from __future__ import annotations

import math
import sys
import time
from typing import Any

import attrs

from rho_domain.errors import AnswerTooLong, ConfigError, ModelTimeout
from rho_domain.value_methods import value_eq, value_hash, value_repr

DEFAULT_ANSWER_BYTES = 64 * 1024 * 1024
"""Bytes of one answer's body, decoded: a long reasoning answer streamed a token a delta
(some 150 bytes of JSON each) is a few tens of MB; an answer past this is no model's."""

DEFAULT_ANSWER_SECONDS = 3600.0
"""Seconds one answer may take from its request: a slow local model writing a long answer
takes minutes, a stream of deltas or keep-alives that never ends takes forever."""

DEFAULT_ANSWER_TOOL_CALLS = 256
"""Tool calls in one answer: parallel calls come by the tens, each is a call the loop runs."""

STREAM_WAIT = (
    "the model server sent no complete event for {idle:g} s, only keep-alives or part of one "
    "(idle timeout)"
)
BODY_WAIT = "the model server sent only keep-alives for {idle:g} s, no response (idle timeout)"


def _positive_or_none(_: object, attribute: attrs.Attribute[Any], value: Any) -> None:
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, int | float) or not value > 0:
        raise ConfigError(
            f"AnswerLimits.{attribute.name} must be a number more than 0, or None (no bound); "
            f"got {value!r}"
        )


@attrs.frozen(kw_only=True)
class AnswerLimits:
    """The bounds of one model answer (one attempt of one call); None: no bound.

    ``max_bytes``: bytes of the body after its ``Content-Encoding`` is undone (config
    ``model_answer_bytes``); ``max_seconds``: from sending the request to the answer's end,
    its response head included (config ``model_answer_timeout``);
    ``max_tool_calls``: tool calls in the answer. Passing one ends the call with
    ``AnswerTooLong`` naming the endpoint, the bound and its setting.
    """

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    max_bytes: int | None = attrs.field(default=DEFAULT_ANSWER_BYTES, validator=_positive_or_none)
    max_seconds: float | None = attrs.field(
        default=DEFAULT_ANSWER_SECONDS, validator=_positive_or_none
    )
    max_tool_calls: int | None = attrs.field(
        default=DEFAULT_ANSWER_TOOL_CALLS, validator=_positive_or_none
    )


def too_many_calls(limit: int) -> AnswerTooLong:
    """The error of an answer with more than ``limit`` tool calls (the assemblers raise it;
    the model adds the endpoint's URL)."""
    return AnswerTooLong(
        f"the model's answer holds more than {limit} tool calls "
        "(AnswerLimits.max_tool_calls of the model's ModelEndpoint.limits): ended there"
    )


class AnswerWatch:
    """One response read against its idle timeout and its ``AnswerLimits``.

    Idle: httpx's read timeout (``Timeouts.idle``) is reset by any byte, so a server that
    sends SSE comments (``: ping``) or Anthropic's ``ping`` events and nothing else, or a
    ``data:`` line a byte at a time that never ends, would hold a run forever. Progress is a
    completed event (in a streamed answer every event is one small delta): a reader calls
    ``heard`` for each chunk that completed one and ``quiet`` for each that did not; ``quiet``
    raises ``ModelTimeout`` once no event has completed for ``idle`` seconds, counted from the
    request, or from the first chunk after the last completed event (so at most one chunk
    interval late).

    Limits: both calls take the chunk's size (decoded bytes) and raise ``AnswerTooLong`` once
    the answer passes ``max_bytes`` or ``max_seconds`` counted from ``started`` (when the
    request was sent, ``Attempt.started``; default: now), checked as chunks come, so at most
    one chunk, or one idle interval, past the bound. One call a chunk, as before the limits: a
    stream has one chunk per delta.
    """

    __slots__ = ("_deadline", "_left", "idle", "limits", "since", "url", "waited")

    def __init__(
        self,
        idle: float | None,
        *,
        limits: AnswerLimits | None = None,
        url: str = "",
        waited: str = STREAM_WAIT,
        started: float | None = None,
    ) -> None:
        self.idle = idle
        self.since: float | None = time.monotonic()
        self.waited = waited  # what came instead of progress, for the timeout's message
        self.limits = limits = limits if limits is not None else AnswerLimits()
        self.url = url
        # Counted down, inline in ``heard`` and ``quiet``: one subtraction, two comparisons
        # and a clock read a chunk (no bound: more bytes than any answer has).
        self._left = limits.max_bytes if limits.max_bytes is not None else sys.maxsize
        seconds = limits.max_seconds
        start = started if started is not None else self.since
        self._deadline = start + seconds if seconds is not None else math.inf

    def heard(self, size: int) -> None:
        """A chunk of ``size`` bytes completed an event of the response."""
        self.since = None
        self._left -= size
        if self._left < 0 or time.monotonic() >= self._deadline:
            self._passed()

    def quiet(self, size: int) -> None:
        """A chunk of ``size`` bytes completed no event. Raises ``ModelTimeout`` past
        ``idle`` seconds."""
        now = time.monotonic()
        if self.since is None:
            self.since = now
        elif self.idle is not None and now - self.since >= self.idle:
            raise ModelTimeout(self.waited.format(idle=self.idle))
        self._left -= size
        if self._left < 0 or now >= self._deadline:
            self._passed()

    def wait_left(self) -> float | None:
        """Seconds a reader may wait for more: the idle timeout, or what is left of the
        answer's deadline when that is less (0 once passed); None when neither bounds it."""
        left = max(self._deadline - time.monotonic(), 0.0)
        if self.idle is None:
            return left if left < math.inf else None
        return min(self.idle, left)

    def _passed(self) -> None:
        if self._left < 0:
            raise AnswerTooLong(
                f"the answer of the model server at {self.url} passed "
                f"{self.limits.max_bytes:,} bytes (model_answer_bytes, "
                "AnswerLimits.max_bytes): ended there"
            )
        raise AnswerTooLong(
            f"the answer of the model server at {self.url} took more than "
            f"{self.limits.max_seconds:g} s (model_answer_timeout, "
            "AnswerLimits.max_seconds): ended there"
        )
