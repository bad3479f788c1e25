"""The sessions this process holds in one PostgreSQL store, as it knows them itself.

A claim (``rho_sessions.holder``) names the backend, not a session object. Two things go
by what this process knows rather than by that name:

- **The heartbeat** renews ``beat`` on the sessions held here and on no other row of this
  holder's. It beat every row naming this holder: a session whose release failed (the
  database refused logins as it closed) was kept alive by the beats of the process's other
  sessions, for as long as it held any (a server always does), and no one could take it.
- **Taking a claim back.** A claim of this holder on a session that is not held here (its
  release failed) is this process's own, and gone stale in meaning at once: the next open
  here takes it back (its events kept by a close are stored then: ``unstored``). It was
  refused, ``SessionLocked`` by its own name, until the lease ran out. A session held here
  is still refused to a second open here (two drivers in one process).
"""

from __future__ import annotations

import threading

from rho_domain.errors import SessionLocked

__all__ = ["HeldHere"]


class HeldHere:
    """The ids of the sessions a backend's holder holds in this process. Thread-safe."""

    def __init__(self) -> None:
        self._ids: set[str] = set()
        self._lock = threading.Lock()

    def take(self, session_id: str, holder: str) -> None:
        """Count ``session_id`` held here; raises ``SessionLocked`` naming ``holder`` (this
        process) when it already is. Pair with ``let_go`` (also when the claim then fails)."""
        with self._lock:
            if session_id in self._ids:
                raise SessionLocked(
                    f"session {session_id} is held by {holder} (this process); wait for its "
                    "run to finish, or cancel it"
                )
            self._ids.add(session_id)

    def let_go(self, session_id: str) -> None:
        """Count ``session_id`` no longer held here (released, or its release failed)."""
        with self._lock:
            self._ids.discard(session_id)

    def ids(self) -> list[str]:
        """The sessions held here now, for the heartbeat's UPDATE."""
        with self._lock:
            return list(self._ids)
