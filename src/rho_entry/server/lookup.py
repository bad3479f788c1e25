"""Finding a session a server may show: its exact id, its working directory within the
server's roots (``Admission.visible``), or a 404 that tells nothing about it.

A session is placed by its summary (meta.json's ``working_dir``, or its row's meta in a
shared store). A summary that cannot be read (missing, not JSON, past its bound: a
planted sparse file) places it nowhere; it was a 404, 'no session', for a session that is
there. It is placed again by its stored config (config.yaml, read only then), and one in the
roots is a 409 ``unreadable_session`` saying what is wrong and what rebuilds it; one placed
elsewhere, or nowhere, stays a 404.

The listing places such sessions the same way (``Placements``), so an operator sees them
(status ``unknown``, a prompt naming the command that rebuilds the summary); before, they
were left out of it, though a GET of their id answered. Reading each one's config.yaml at
every listing (the dashboard's, every 2 s) would cost a read per broken session per poll,
so a placement is kept and read again only when the session's listed dates change (a file
store dates such a session by its directory) or ``RECHECK_SECONDS`` have passed. The timed
re-reads are bounded: one listing makes at most ``RECHECKS_PER_LISTING`` of them, the oldest
placements first, the others kept until a later listing. Placed together by one listing,
500 broken sessions were otherwise all re-read by the first listing a minute later (0.8 s of
CPU in one request, the event loop held for every other session's stream meanwhile).
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable, Sequence

from rho_domain.errors import ConfigError, SessionNotFound, StoreError
from rho_domain.ports.session_control import SessionCatalog
from rho_domain.ports.store import SessionInfo
from rho_entry.server.admission import Admission
from rho_entry.server.errors import NotFound, UnreadableSession
from rho_entry.server.views import valid_id


async def find_shown(
    sessions: SessionCatalog, admission: Admission, session_id: str
) -> SessionInfo:
    """The listing line of session ``session_id`` (exact id) if this server may show it.
    Raises ``NotFound``, or ``UnreadableSession`` for one of its roots whose summary
    cannot be read."""
    try:
        info = await sessions.info(session_id) if valid_id(session_id) else None
    except SessionNotFound:
        info = None
    if info is None or info.id != session_id:
        raise NotFound(f"no session {session_id!r}; GET /api/sessions lists them")
    if not admission.visible(info.working_dir):
        if not info.working_dir and await _placed_by_config(sessions, admission, session_id):
            raise UnreadableSession.of_summary(session_id)
        raise NotFound(f"no session {session_id!r}; GET /api/sessions lists them")
    return info


async def _placed_by_config(
    sessions: SessionCatalog, admission: Admission, session_id: str
) -> bool:
    try:
        record = await sessions.record(session_id)
    except (StoreError, ConfigError):  # nothing places it: nothing is told
        return False
    return admission.visible(record.config.working_dir)


RECHECK_SECONDS = 60.0
"""How long a placement by config.yaml is kept while the session's listed dates stay."""

RECHECKS_PER_LISTING = 16
"""At most this many placements past ``RECHECK_SECONDS`` are read again by one listing."""


class Placements:
    """Which sessions a listing shows: in the roots by their summary, or, for a summary that
    cannot be read (no ``working_dir``), by their stored config, kept for a while."""

    def __init__(self) -> None:
        # id -> (the listed dates it was placed under, when, placed in the roots)
        self._known: dict[str, tuple[tuple[float, float], float, bool]] = {}

    async def shown(
        self,
        sessions: SessionCatalog,
        admission: Admission,
        infos: Sequence[SessionInfo],
        *,
        now: float,
    ) -> list[SessionInfo]:
        """``infos`` this server may list, in their order."""
        unplaced = {i.id: i for i in infos if not i.working_dir}
        for gone in self._known.keys() - unplaced.keys():
            del self._known[gone]
        due = self._due(unplaced.values(), now=now)
        shown = []
        for info in infos:
            if info.id in unplaced:
                if await self._placed(sessions, admission, info, now=now, due=due):
                    shown.append(info)
            elif admission.visible(info.working_dir):
                shown.append(info)
        return shown

    def _due(self, unplaced: Iterable[SessionInfo], *, now: float) -> set[str]:
        """The placements past ``RECHECK_SECONDS`` this listing reads again: the oldest,
        ``RECHECKS_PER_LISTING`` at most."""
        old = [
            (known[1], info.id)
            for info in unplaced
            if (known := self._known.get(info.id)) is not None and now - known[1] >= RECHECK_SECONDS
        ]
        return {sid for _, sid in heapq.nsmallest(RECHECKS_PER_LISTING, old)}

    async def _placed(
        self,
        sessions: SessionCatalog,
        admission: Admission,
        info: SessionInfo,
        *,
        now: float,
        due: set[str],
    ) -> bool:
        dates = (info.created_at, info.updated_at)
        known = self._known.get(info.id)
        if known is not None and known[0] == dates and info.id not in due:
            return known[2]
        placed = await _placed_by_config(sessions, admission, info.id)
        self._known[info.id] = (dates, now, placed)
        return placed
