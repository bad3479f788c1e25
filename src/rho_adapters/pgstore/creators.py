"""Who creates a session in a shared store, so that ``latest`` is the asker's own newest.

The file store's ``latest`` is its directory's newest session, and a directory is usually one
user's on one host. A PostgreSQL store is every host's: its ``latest`` was any host's newest,
so ``--resume latest`` on host A resumed the session a user on host B had started a moment
later. Each row now names its creator (``rho_sessions.creator``, schema 4) and ``latest`` is
the newest of the asker's (``listing.resolve_id``); a row made before has none, nobody's.
"""

from __future__ import annotations

import os
import socket


def creator_name() -> str:
    """Who creates sessions here: ``user@host`` (the effective user's name, from the system's
    user database, not the environment), the owner ``latest`` resolves for."""
    import pwd

    try:
        user = pwd.getpwuid(os.geteuid()).pw_name
    except KeyError:  # a uid without a name (a container's): the number
        user = str(os.geteuid())
    return f"{user}@{socket.gethostname()}"
