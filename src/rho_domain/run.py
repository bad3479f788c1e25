"""One run's vocabulary: its statuses, its ids, its result (its tally: ``loop/tally.py``)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import attrs

from rho_domain.lazy_names import lazy_names
from rho_domain.messages import Usage
from rho_domain.run_status import RunStatus as RunStatus  # re-exported: its old home
from rho_domain.value_methods import value_eq, value_hash, value_repr

if TYPE_CHECKING:  # every kind of event is joined into Event when first asked for (events.py)
    from rho_domain.events import Event
    from rho_domain.pending import PendingApproval as PendingApproval

# built by a run that ends waiting for approval, not by every run's result
__getattr__ = lazy_names(__name__, {"PendingApproval": "rho_domain.pending"})


ID_LENGTH = 12
"""How long the ids ``new_id`` makes are: a spelling this long names a session by its whole id."""


def new_id() -> str:
    """A short random id for a session or a run: ``ID_LENGTH`` lowercase hex digits. The
    same draw as ``uuid.uuid4().hex[:12]`` (its first six bytes are ``os.urandom``'s, the
    version bits come later), without importing ``uuid`` (~2 M instructions a one-shot)."""
    return os.urandom(ID_LENGTH // 2).hex()


def takes_exact(ref: str) -> bool:
    """Whether a person's spelling of a session (``--resume REF``, ``monitor``, ``export``)
    names the session whose whole id it is even when other ids begin with it: only when it is
    as long as the ids ``new_id`` makes. A shorter one is a prefix like any other, matching
    the session it is the whole id of too (ambiguous beside another): a session with a short
    id (a peer's row ``3f2a`` in a shared store, a directory anyone writing the store made)
    captured ``--resume 3f2a`` from the session 3f2a2b... it was typed for. Every store
    resolves by this rule."""
    return len(ref) >= ID_LENGTH


def whole_id_of(ref: str) -> str | None:
    """The id a spelling ``=ID`` names whole, else None (an id, a prefix, ``latest``, a path).
    It is how a person names a session whose id is shorter than ``ID_LENGTH`` and begins
    another's (``nightly`` beside ``nightly-2``), which the bare spelling cannot, being a prefix
    (``takes_exact``). No id holds ``=`` (``is_plain_id``), so the mark names no session's id."""
    return ref[1:] if ref.startswith("=") else None


def spelled_whole(session_id: str) -> str:
    """How to type the session ``session_id`` so that every store takes it whole: the id
    itself at ``ID_LENGTH`` and beyond, else ``=ID`` (a short id bare is a prefix, which another
    session's id may begin with). For the hints that print a command, and for a resolved id
    handed back to a store."""
    return session_id if takes_exact(session_id) else f"={session_id}"


def ambiguous(ref: str, matches: Sequence[str]) -> str:
    """What every store says of a prefix several sessions' ids begin with: the first ten ids
    and what to type, ``=ID`` when one of them is the whole spelling (before, "type more
    characters" was all it said, which no spelling of that session obeys)."""
    shown = ", ".join(matches[:10]) + (", ..." if len(matches) > 10 else "")
    whole = f", or ={ref} for the session {ref} itself" if ref in matches else ""
    return f"{ref!r} is ambiguous: it matches {shown}; type more characters{whole}"


def is_plain_id(session_id: str) -> bool:
    """True for an id as ``new_id`` makes them (and servers and evals): ASCII letters, digits,
    ``-`` and ``_`` only, and not ``latest``. An id read from data (a trace, a queue) must be
    one: a store resolves a prefix, ``latest`` or a path to another session."""
    return (
        bool(session_id)
        and session_id != "latest"
        and all(c.isascii() and (c.isalnum() or c in "-_") for c in session_id)
    )


@attrs.frozen(kw_only=True)
class RunResult:
    """The outcome of one ``Session.run``.

    ``text`` is the final answer (the text of the last model turn). ``usage`` counts this run
    only; ``session_usage`` the whole session. ``error`` is set when status is ERROR (and may
    explain BUDGET_EXCEEDED). ``pending`` lists the call waiting for approval. ``events`` is
    every event of the run when asked for (``rho_entry.Session.run(..., record_events=True)``),
    else empty: keeping them costs memory a long run may not want to spend. ``output`` is
    the final answer parsed as JSON when the agent has an ``output_schema`` (and it matched),
    else None.
    """

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    session_id: str
    run_id: str
    status: RunStatus
    text: str
    usage: Usage
    session_usage: Usage
    error: str | None = None
    error_type: str | None = None
    pending: tuple[PendingApproval, ...] = ()
    events: tuple[Event, ...] = ()
    output: Any = None

    @property
    def ok(self) -> bool:
        """True when the run completed."""
        return self.status is RunStatus.COMPLETED
