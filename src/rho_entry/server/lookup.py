"""Finding a session a server may show: its exact id, its working directory within the
server's roots (``Admission.visible``), or a 404 that tells nothing about it.

A session is placed by its summary (meta.json's ``working_dir``, or its row's meta in a
shared store). A summary that cannot be read (missing, not JSON, past its bound: a
planted sparse file) places it nowhere; it was a 404, 'no session', for a session that is
there. It is placed again by its stored config (config.yaml, read only then), and one in the
roots is a 409 ``unreadable_session`` saying what is wrong and what rebuilds it; one placed
elsewhere, or nowhere, stays a 404.
"""

from __future__ import annotations

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
