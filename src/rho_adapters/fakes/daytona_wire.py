"""FakeDaytona's decoding of request bodies (a multipart upload's fields, an execute's script),
its error envelope, and the toolbox's file endpoints on this machine's filesystem (the
daemon's ``FileInfo``)."""

from __future__ import annotations

import base64
import contextlib
import datetime as dt
import json
import os
import stat
from typing import Any

import httpx

from rho_adapters.daytona.confine import GO_SPACE


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


def error(status: int, message: str, path: str = "") -> httpx.Response:
    """An error answer in the daemon's and the API's JSON envelope."""
    body = {"statusCode": status, "message": message, "code": "Error", "path": path}
    return httpx.Response(status, json=body)


def files_answer(request: httpx.Request, path: str, body: bytes) -> httpx.Response:
    """The daemon's answer to a file request (``GET /files``, ``/files/info``,
    ``/files/download``, ``POST /files/bulk-upload``) on this machine's filesystem."""
    target = request.url.params.get("path", "")
    try:
        if request.method == "GET" and path == "/files":
            entries = []
            for name in os.listdir(target):
                with contextlib.suppress(OSError):
                    entries.append(file_info(os.path.join(target, name), name))
            return httpx.Response(200, json=entries)
        if request.method == "GET" and path == "/files/info":
            return httpx.Response(200, json=file_info(target, os.path.basename(target)))
        if request.method == "GET" and path == "/files/download":
            if os.path.isdir(target):
                return error(400, "path is a directory", path)
            with open(target, "rb") as handle:
                return httpx.Response(200, content=handle.read())
        if request.method == "POST" and path == "/files/bulk-upload":
            return _upload(multipart(request, body), path)
    except FileNotFoundError:
        return error(404, f"file not found: {target}", path)
    except NotADirectoryError:
        return error(400, f"not a directory: {target}", path)
    except PermissionError:
        return error(403, f"permission denied: {target}", path)
    return error(404, f"Cannot {request.method} {path}", path)


def _upload(fields: list[tuple[str, bytes]], path: str) -> httpx.Response:
    pending: str | None = None
    for name, content in fields:
        if name.endswith(".path"):
            pending = content.decode().strip(GO_SPACE)  # the daemon's strings.TrimSpace
        elif name.endswith(".file"):
            if pending is None:  # the daemon streams: the path must come first
                return error(400, "file without path metadata", path)
            os.makedirs(os.path.dirname(pending), exist_ok=True)
            with open(pending, "wb") as handle:
                handle.write(content)
            pending = None
    return httpx.Response(200)
