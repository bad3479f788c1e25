"""What a session's directory may hold that nobody meant to keep, removed: the temp files a
writer killed mid-write left (``remove_left_temps``), and the files of a creation that failed
part-way (``remove_created``). Both are called by the lock's holder only, never follow a link,
and never fail: what they could not remove stays, and the caller's own error is the one said."""

from __future__ import annotations

import contextlib
import os

from rho_adapters.store.confined import directory_fd
from rho_adapters.store.layout import SessionPaths
from rho_adapters.store.reserve import LEFT_NAME

__all__ = ["remove_created", "remove_left_temps"]


def remove_left_temps(paths: SessionPaths) -> None:
    """Remove the temp files of ``write_atomic`` that a process killed while writing left in
    the session's directory (``.meta.json.PID.HEX.tmp``: a version before unnamed files, or a
    filesystem without ``O_TMPFILE``), and an empty named reserve (``reserve.LEFT_NAME``).
    Only the lock's holder writes them: call it holding the lock, when any is left over.
    Never follows a link; a failure is no error."""
    with contextlib.suppress(OSError), directory_fd(paths.dir) as fd:
        for name in os.listdir(fd):
            left = name.startswith((".meta.json.", ".trace.jsonl.", LEFT_NAME))
            if left and name.endswith(".tmp"):
                with contextlib.suppress(OSError):
                    os.unlink(name, dir_fd=fd)


def remove_created(paths: SessionPaths) -> None:
    """Remove the directory of a session whose creation failed part-way (a full disk, a file
    size limit: config.yaml cut short, no meta.json) with what the creation wrote, so that no
    half session is listed for good under an id nobody was given. Call it holding the lock,
    which goes with the directory; a failure is no error (the creation's is raised)."""
    for path in (paths.meta, paths.trace, paths.config, paths.lock):
        with contextlib.suppress(OSError):
            path.unlink()
    with contextlib.suppress(OSError):
        paths.dir.rmdir()
