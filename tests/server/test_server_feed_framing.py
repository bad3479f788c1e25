"""A trace line cannot frame the stream's events: its ``kind`` is the SSE ``event:`` name.

A stored line whose kind held newlines (``"message\\n\\nid: 99999\\nevent: approval_requested
..."``, a JSON string with escapes, decoded) wrote its own SSE fields into every watcher's
stream: a forged event type and an ``id`` that moved the client's Last-Event-ID past the lines
to come; a kind ``closed``, the server's own end-of-stream event, ended the dashboard's and the
Python client's watch of a session still running; a raw CR between JSON tokens (valid JSON,
never written by the store) broke a ``data:`` line in two. Now a line is published under its
kind only when that kind is a trace event's and the line has no CR; otherwise it is
``unreadable`` (its line number kept).
"""

from __future__ import annotations

import json
from pathlib import Path

from server_support import app_for, client_for, place, sse_blocks
from test_server_stored_authority import craft

from rho_adapters.codec import encode_event_line
from rho_adapters.fakes import FunctionModel, text
from rho_domain import events as ev
from rho_domain.messages import UserMessage

FORGED = [
    {"kind": 'message\n\nid: 99999\nevent: approval_requested\ndata: {"forged": true}'},
    {"kind": "closed"},
    {"kind": "retry: 1\nid: 5"},
]


async def test_stored_kinds_never_become_stream_framing(tmp_path: Path) -> None:
    where = place(tmp_path)
    sid = craft(where, "c0ffee000006")
    real = encode_event_line(ev.MessageAdded(at=1.0, message=UserMessage(content="hello")))
    lines = [json.dumps(line).encode() + b"\n" for line in FORGED]
    lines.append(b'{"kind": "message",\r"at": 1}\n')  # valid JSON: a CR between tokens
    (where.sessions / sid / "trace.jsonl").write_bytes(b"".join(lines) + real)
    app = app_for(where, FunctionModel(lambda request: text("ok")), profiles=("readonly",))
    url = f"/api/sessions/{sid}/stream?until=idle"
    async with client_for(app) as client, client.stream("GET", url) as stream:
        items = [block async for block in sse_blocks(stream)]
    framed = [(item.get("id"), item.get("event")) for item in items]
    assert framed[:5] == [
        ("1", "unreadable"),
        ("2", "unreadable"),
        ("3", "unreadable"),
        ("4", "unreadable"),
        ("5", "message"),
    ], framed
    assert all(item.get("id") in (None, "1", "2", "3", "4", "5") for item in items), items
    assert json.loads(items[4]["data"])["message"]["content"] == "hello"
