"""A ``CallToolResult`` as the model reads it, capped, the whole kept in a file.

Text blocks are joined; an image or audio block becomes a one-line note of its type and size
(the model reads text); an embedded resource gives its text, else its URI; a resource link its
URI, the server's words in these notes on one line and cut; a block of a type MCP does not
define is labelled so and shown as the JSON sent, and blocks that are not objects are
counted in one note that shows the first. ``structuredContent`` is shown as JSON when
the server sent no content blocks (a server that sends both repeats the structure as text, by
the specification's advice; nothing here acts on the structure, so one that disagrees with the
text changes nothing the model reads). A result over
its cap keeps its start and end, and the whole text is written to a file whose path the
result gives, so nothing is lost and the context window is not blown; that file is written
inside the session directory without following a link, as every session file is.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from rho_adapters.mcp.server_text import said
from rho_adapters.store.confined import directory_fd, open_file
from rho_domain.errors import StoreError
from rho_domain.tools.truncation import truncate_middle

_FILE_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]")
_MARKER_ROOM = 200  # characters truncate_middle's marker may take


def result_text(result: Mapping[str, Any]) -> str:
    """The text of a ``CallToolResult``: its blocks, else its structured content; blocks
    that are not objects (``"content": ["done"]``) are said in one note after them, the
    first as sent, never dropped unsaid (the model read an empty result) nor one note
    each (``[0,0,...]``: two bytes sent would be a line of ours)."""
    content = result.get("content") or ()
    parts = [_block_text(block) for block in content if isinstance(block, dict)]
    structured = result.get("structuredContent")
    if not parts and structured is not None:
        parts.append(json.dumps(structured, indent=2, ensure_ascii=False))
    strays = [block for block in content if not isinstance(block, dict)]
    if strays:
        first = _word(json.dumps(strays[0], ensure_ascii=False))
        parts.append(
            f"[{len(strays):,} content block(s) that are not objects, which this client does "
            f"not read; the first, as sent: {first}]"
        )
    return "\n".join(parts)


def capped(text: str, limit: int, save: Path | None, unsaved: str = "") -> tuple[str, str | None]:
    """``text`` cut to ``limit`` characters (its middle dropped) with a note naming the file
    the whole was written to (``save``), and that file's path, or, without ``save``, why it
    was not saved (``unsaved``); unchanged when it fits."""
    if len(text) <= limit:
        return text, None
    note = f"\n[output cut to {limit} of {len(text)} characters"
    path = None
    if save is not None:
        refused = _save(save, text)
        if refused:
            note += f"; the full output could not be saved: {refused}"
        else:
            path = str(save)
            note += f"; the full output is saved in {path}"
    elif unsaved:
        note += f"; the full output is not saved: {unsaved}"
    note += "]"
    # room for truncate_middle's own marker too, so the whole stays within ``limit`` and the
    # registry's truncation (at the same limit, by default) leaves it alone; a limit too
    # small for the marker keeps the start only (the note is always there)
    room = limit - len(note)
    if room > 2 * _MARKER_ROOM:
        kept = truncate_middle(text, room - _MARKER_ROOM)
    else:
        kept = text[: max(room, 0)]
    return kept + note, path


def output_file(directory: Path, server: str, tool: str, call_id: str) -> Path:
    """Where a call's full output goes: ``<dir>/<server>__<tool>__<call id>.txt``."""
    name = "__".join(_FILE_UNSAFE.sub("_", part)[:60] for part in (server, tool, call_id))
    return directory / f"{name}.txt"


def _save(path: Path, text: str) -> str:
    """Write ``text`` to ``path`` (``<session>/mcp-output/<name>``) as the store writes a
    session file: its directory made and opened, and the file opened, without following a
    link (``store.confined``); a session directory is data whoever can write it controls.
    Returns why it could not be written ("" when it was)."""
    try:
        with directory_fd(path.parent.parent) as session, contextlib.suppress(FileExistsError):
            os.mkdir(path.parent.name, 0o700, dir_fd=session)
        with open_file(path, "wb", levels=2) as handle:
            handle.write(text.encode("utf-8", errors="replace"))
    except (OSError, StoreError) as exc:
        return str(exc)
    return ""


def _block_text(block: Mapping[str, Any]) -> str:
    """One content block as the model reads it: a text as sent; otherwise a note of ours in
    brackets, in which the server's words (a type, a MIME type, a URI, a name) are said on
    its one line, cut (``_word``): a name holding a line break and ``[...]`` would read as a
    note of the harness's own. A block of a type MCP does not define (or a malformed one) is
    labelled so and shown as the JSON the server sent, data to read, never followed."""
    kind = block.get("type")
    if kind == "text":
        return str(block.get("text", ""))
    if kind in ("image", "audio"):
        size = len(str(block.get("data", ""))) * 3 // 4
        return f"[{kind} {_word(block.get('mimeType', ''))}, about {size} bytes]"
    resource = block.get("resource")
    if kind == "resource" and isinstance(resource, dict):
        if isinstance(resource.get("text"), str):
            return str(resource["text"])
        uri, mime = _word(resource.get("uri", "")), _word(resource.get("mimeType", ""))
        return f"[resource {uri} {mime}]".replace(" ]", "]")
    if kind == "resource_link":
        uri, name = _word(block.get("uri", "")), _word(block.get("name", ""))
        return f"[resource link {uri} {name}]".replace(" ]", "]")
    sent = json.dumps(block, ensure_ascii=False)
    return f"[a content block of type {_word(kind)!r} this client does not read, as sent: {sent}]"


def _word(value: object) -> str:
    """A server's word inside a note of ours: on one line, at most 200 characters."""
    return said(value, 200)
