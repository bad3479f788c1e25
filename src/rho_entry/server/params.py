"""A request's number parameters read one way: a listing's ``limit``, a stream's start.

Each is ASCII digits or a refusal (``Invalid``, 422) that names the parameter and what it
takes; the handlers in ``routes`` get a number.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rho_entry.server.errors import Invalid

if TYPE_CHECKING:
    from starlette.requests import Request


LISTING_MAX = 1_000
"""The most sessions one listing shows. Each listed session's trace is tallied at each poll
(the dashboard's every two seconds) from the store's mark (``TraceMarks``, which keeps
10,000): with no maximum, ``?limit=20000`` listed past the marks kept and re-read traces
whole at every poll. The dashboard asks for 500."""


def listing_limit(request: Request) -> int:
    """``GET /api/sessions?limit=N``: how many sessions to list (100 when not given; 1 to
    ``LISTING_MAX``)."""
    raw = request.query_params.get("limit", "100")
    if not _whole(raw) or not 1 <= int(raw) <= LISTING_MAX:
        raise Invalid(
            f"limit must be a whole number from 1 to {LISTING_MAX:,}, not {raw[:40]!r}",
            field="limit",
        )
    return int(raw)


def stream_start(request: Request) -> int:
    """Where a stream starts: Last-Event-ID (a reconnect), else ``?after=N|end``, else 0."""
    header = request.headers.get("last-event-id")
    raw, field = (header, "Last-Event-ID") if header is not None else (None, "after")
    if raw is None:
        raw = request.query_params.get("after", "0")
        if raw == "end":
            return -1
    if not _whole(raw.strip()):
        shown = raw[:40]
        raise Invalid(
            f"{field} must be a trace line number (0 or more), not {shown!r}", field=field
        )
    return int(raw)


def _whole(raw: str) -> bool:
    """ASCII digits, at most 18 of them: ``str.isdigit`` is also true for ``²`` (which
    ``int`` refuses) and for more digits than ``int`` converts (4,300)."""
    return raw.isascii() and raw.isdigit() and len(raw) <= 18
