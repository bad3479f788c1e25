"""A toolbox listing's entries as the port's ``FileInfo``.

``GET /files`` answers Go's ``FileInfo``: ``mode`` is ``FileMode.String()`` (``drwxr-xr-x``,
``Lrwxrwxrwx``, ``-rw-r--r--``), ``permissions`` an octal string when the daemon sends one,
``modifiedAt`` an ISO timestamp (older daemons: only ``modTime``, Go's ``Time.String()``). A
missing size, mode or time (or a time that does not parse) becomes 0.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from rho_domain.ports.executor import FileInfo, FileKind


def file_info(entry: Mapping[str, Any], shown: str) -> FileInfo:
    """A toolbox ``FileInfo`` (Go ``FileMode.String()`` in ``mode``) as the port's FileInfo."""
    name = str(entry["name"])
    mode_text = str(entry.get("mode") or "")
    kind = {"d": FileKind.DIRECTORY, "L": FileKind.SYMLINK, "-": FileKind.FILE}.get(
        mode_text[:1], FileKind.DIRECTORY if entry.get("isDir") else FileKind.OTHER
    )
    perms = str(entry.get("permissions") or "")
    mode = int(perms, 8) if perms.isdigit() else _perm_bits(mode_text[-9:])
    return FileInfo(
        path=name if shown == "." else f"{shown}/{name}",
        name=name,
        kind=kind,
        size=int(entry.get("size") or 0),
        mtime=_timestamp(entry.get("modifiedAt") or _go_time(entry.get("modTime"))),
        mode=mode & 0o7777,
    )


def _perm_bits(rwx: str) -> int:
    if len(rwx) != 9:
        return 0
    return sum(1 << (8 - i) for i, c in enumerate(rwx) if c != "-")


def _go_time(value: Any) -> str:
    """Daemons before June 2026 send only ``modTime``, Go's ``Time.String()``
    (``2026-05-01 12:34:56.123456789 +0000 UTC``), or RFC 3339 for a few weeks: as ISO."""
    date, _, rest = str(value or "").partition(" ")
    clock, _, offset = rest.partition(" ")
    return f"{date}T{clock}{offset.partition(' ')[0]}" if clock else date


def _timestamp(value: Any) -> float:
    if not value:
        return 0.0
    try:
        return datetime.fromisoformat(str(value).replace("Z", "+00:00")).timestamp()
    except ValueError:
        return 0.0
