"""Events a session's close could not store (its store refused them: a PostgreSQL store whose
logins are refused at a run's end, its ``run_end``): said, kept, and written by a later close.

The close lets the store's lock go all the same (held, it would keep the session from anyone
once the store answers). The journal keeps the events, and the session's next ``close()``
takes the lock again and writes them once the store answers, unless the trace has changed
since its last write (another process resumed the session meanwhile: written after that
process's events, they would end a run that is not theirs), which is refused, naming them.
Before, they were lost with the session object: the trace never had the run's end.
"""

from __future__ import annotations

from collections.abc import Sequence

from rho_domain import events as ev
from rho_domain.errors import StoreError
from rho_domain.plugged import contained, plugged_name
from rho_domain.ports.store import SessionStore

Written = tuple[str, float]
"""The last event a journal stored, as ``written`` names it: its kind and time."""


def written(event: ev.Event) -> Written:
    """What a later close compares with the trace's last event."""
    return event.kind, event.at


def not_stored(session_id: str, kept: Sequence[ev.Event], exc: StoreError) -> StoreError:
    """The close's failure to store ``kept``, naming the session, what was not stored and what
    to do (it said only the store's words, and the closer did not learn what was lost)."""
    kinds = ", ".join(dict.fromkeys(e.kind for e in kept))
    return StoreError(
        f"session {session_id} closed with {len(kept)} event(s) not stored ({kinds}): {exc}; "
        "everything before them is stored: once the store answers again, resume the session "
        "to go on (its last run reads as one whose process stopped), or close it again "
        "first, which stores them (unless another process wrote the session since)"
    )


async def claim_again(store: SessionStore, session_id: str, last: Written | None) -> bool:
    """Take the session's lock again for a close that stores what an earlier close could not
    (``last``: the journal's last stored event); True when taken. False, the lock let go
    again, when the trace no longer ends with ``last``: another process wrote the session
    since. Raises ``StoreError`` when the store still refuses."""

    def name() -> str:
        return f"the store {plugged_name(store)}"

    _, events = await contained(store.open(session_id), name, StoreError)
    if last is not None and events and written(events[-1]) == last:
        return True
    await contained(store.release(session_id), name, StoreError)
    return False


def written_since(session_id: str, kept: Sequence[ev.Event]) -> StoreError:
    """The refusal of a close whose session another process wrote since its last write."""
    kinds = ", ".join(dict.fromkeys(e.kind for e in kept))
    return StoreError(
        f"session {session_id} was written by another process since it closed with "
        f"{len(kept)} event(s) not stored ({kinds}): they are not written after its events, "
        "and are dropped; its trace reads as it stands"
    )
