"""FakeDaytona's decoding of request bodies: a multipart upload's fields, an execute's script."""

from __future__ import annotations

import base64
import json

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
