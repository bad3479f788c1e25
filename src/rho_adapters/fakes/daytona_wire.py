"""FakeDaytona's decoding of request bodies (a multipart upload's fields, an execute's script)
and its description of a file (the daemon's ``FileInfo``)."""

from __future__ import annotations

import base64
import datetime as dt
import json
import os
import stat
from typing import Any

import httpx


def script(body: bytes) -> str:
    """An execute's command, with the script ``scripts.wrap`` encoded in it decoded."""
    command = str(json.loads(body or b"{}").get("command") or "")
    return command + decoded(command)


def decoded(command: str) -> str:
    """The script a ``scripts.wrap`` command carries (its base64 words after ``sh -c '...'
    sh``), or "" for another command."""
    encoded = command.partition("' sh ")[2].replace(" ", "")
    try:
        return base64.b64decode(encoded, validate=True).decode(errors="replace")
    except ValueError:
        return ""


def multipart(request: httpx.Request, body: bytes) -> list[tuple[str, bytes]]:
    """(field name, content) pairs of a multipart/form-data body, in order."""
    ctype = request.headers.get("content-type", "")
    boundary = ctype.partition("boundary=")[2].strip('"').encode()
    fields = []
    for part in body.split(b"--" + boundary)[1:]:
        if part.startswith(b"--"):
            break
        head, _, content = part.partition(b"\r\n\r\n")
        name = head.partition(b'name="')[2].partition(b'"')[0].decode()
        fields.append((name, content[:-2] if content.endswith(b"\r\n") else content))
    return fields


def _go_mode(mode: int) -> str:
    """Go's ``FileMode.String()`` for a stat mode (what the daemon puts in ``mode``)."""
    kind = "d" if stat.S_ISDIR(mode) else "L" if stat.S_ISLNK(mode) else "-"
    if not (stat.S_ISDIR(mode) or stat.S_ISLNK(mode) or stat.S_ISREG(mode)):
        kind = "p" if stat.S_ISFIFO(mode) else "D"
    bits = "".join(c if mode & (1 << (8 - i)) else "-" for i, c in enumerate("rwxrwxrwx"))
    return kind + bits


def file_info(path: str, name: str) -> dict[str, Any]:
    """The daemon's ``getFileInfo``: ``os.Stat``, so a symbolic link is described by what it
    points to (a dangling one raises: ``GET /files`` leaves it out)."""
    st = os.stat(path)
    stamp = dt.datetime.fromtimestamp(st.st_mtime, tz=dt.UTC).isoformat()
    return {
        "name": name,
        "size": st.st_size,
        "mode": _go_mode(st.st_mode),
        "permissions": f"{stat.S_IMODE(st.st_mode):04o}",
        "isDir": stat.S_ISDIR(st.st_mode),
        "owner": str(st.st_uid),
        "group": str(st.st_gid),
        "modifiedAt": stamp,
    }
