"""When to retry a model call, and how long to wait.

Retried: 408, 409, 429, 498 (Groq flex), 5xx including 529, and connection failures — but only
before any output reached the caller. Not retried: other 4xx, 501 and 505,
``insufficient_quota``, and a server delay above ``max_server_delay`` (the server says "much
later": fail now, let the user decide). The wait honours ``retry-after-ms``, ``retry-after``
(seconds or HTTP date) and the ``x-ratelimit-reset-*`` headers (``1s``, ``6m0s``,
``2m59.56s``, ``11.38``), else (none, or a negative one: a date past) a jittered exponential
backoff ``min(base * 2**n, cap) * U(0.75, 1)``.
"""

from __future__ import annotations

import functools
import math
import random
import re
from collections.abc import Mapping

import attrs

from rho_domain.value_methods import value_eq, value_hash, value_repr

RETRYABLE_STATUSES = frozenset({408, 409, 429, 498})
NEVER_TRANSIENT = frozenset({501, 505})
"""5xx statuses that say the server does not implement the request (a plain web server asked to
POST: Python's ``http.server`` answers 501) or its HTTP version: retrying only delayed the
error."""
# compiled by re (and kept in its cache) with the first duration read, not at import
_DURATION = r"(\d+(?:\.\d+)?)(ms|h|m|s)"


@attrs.frozen(kw_only=True)
class RetryPolicy:
    """``max_retries`` extra attempts after the first; delays in seconds."""

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    max_retries: int = 2
    base_delay: float = 0.5
    max_delay: float = 8.0
    max_server_delay: float = 120.0

    def should_retry_status(self, status: int, body: str = "") -> bool:
        """Whether an HTTP error status is worth another attempt."""
        if "insufficient_quota" in body:
            return False  # billing, not load: waiting will not help
        if "validation error" in body:
            return False  # a request the server cannot parse (llama-cpp-python's 500, capture 17)
        if status in NEVER_TRANSIENT:
            return False  # the server cannot do this request at all, now or later
        return status in RETRYABLE_STATUSES or status >= 500

    def backoff(self, retries_taken: int, rng: random.Random) -> float:
        """The jittered exponential delay before retry number ``retries_taken + 1``."""
        delay = min(self.base_delay * 2.0**retries_taken, self.max_delay)
        return delay * rng.uniform(0.75, 1.0)

    def delay(
        self, retries_taken: int, headers: Mapping[str, str], rng: random.Random, now: float
    ) -> float | None:
        """Seconds to wait before the next attempt, or None when the server asked for longer
        than ``max_server_delay`` (do not retry). ``now`` is epoch seconds for HTTP dates."""
        hinted = server_delay(headers, now)
        if hinted is None or hinted < 0:
            # none, or a past date / negative number (a skewed clock, a broken proxy): read
            # as "now", each retry went at once into a server that was refusing (an explicit
            # 0 is the server's own "now", honoured)
            return self.backoff(retries_taken, rng)
        if hinted > self.max_server_delay:
            return None
        return hinted


def server_delay(headers: Mapping[str, str], now: float) -> float | None:
    """The delay the server asked for, from the first header that carries one."""
    lowered = {k.lower(): v for k, v in headers.items()}
    if (ms := _number(lowered.get("retry-after-ms"))) is not None:
        return ms / 1000.0
    retry_after = lowered.get("retry-after")
    if retry_after is not None:
        if (seconds := _number(retry_after)) is not None:
            return seconds
        # An HTTP date, rare: its parser (email.utils) loads with the first one.
        import email.utils

        try:
            when = email.utils.parsedate_to_datetime(retry_after)
        except (TypeError, ValueError, IndexError):
            when = None
        if when is not None:
            return when.timestamp() - now
    resets = [
        parse_duration(lowered[name])
        for name in (
            "x-ratelimit-reset-requests",
            "x-ratelimit-reset-tokens",
            "x-ratelimit-reset-tokens-minute",
            "x-ratelimit-reset",
        )
        if name in lowered
    ]
    found = [r for r in resets if r is not None]
    return max(found) if found else None


def parse_duration(text: str) -> float | None:
    """``11.38`` → 11.38; ``2m59.56s`` → 179.56; ``1s``, ``6m0s``, ``250ms``, ``1h``. A
    duration no float holds (``999...9s``, 400 digits: inf) is no duration, as ``_number``
    has it for a plain number; before, it was a wait of inf s, refused as too long."""
    if (plain := _number(text)) is not None:
        return plain
    text = text.strip()
    total, pos = 0.0, 0
    for match in re.finditer(_DURATION, text):
        if match.start() != pos:
            return None
        value, unit = float(match.group(1)), match.group(2)
        total += value * {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}[unit]
        pos = match.end()
    return total if pos and pos == len(text) and total < math.inf else None


def _number(text: str | None) -> float | None:
    if text is None:
        return None
    try:
        value = float(text.strip())
    except ValueError:
        return None
    return value if value == value and value not in (float("inf"), float("-inf")) else None


@functools.cache
def jitter_rng() -> random.Random:
    """The process's generator for backoff jitter, seeded once: a ``random.Random()`` per
    model would read ~2.5 KB from the OS for every Session."""
    return random.Random()
