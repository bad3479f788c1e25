"""A hostile MCP server over Streamable HTTP (``python hostile_http_server.py PORT``), written on
the standard library's HTTP server so that it can answer what the official SDK never would.

``$HOSTILE`` picks how it answers a POST; otherwise it serves one tool, ``plain``:

- ``session-id``: gives an ``Mcp-Session-Id`` with a byte that is not ASCII (``s\\xe9``);
- ``redirect``: answers 307 to another host (``Location: http://127.0.0.2:9/elsewhere``);
- ``html``: answers 200 with a web page (``text/html``), as a URL that is not MCP's would;
- ``open-stream``: answers a ``tools/call`` with an event stream holding the answer, then
  keeps the stream open (a comment every 0.2 s) until the client goes;
- ``forget``: gives a new session id at each ``initialize`` and answers 404 to any other;
  answers a ``tools/call`` with an event stream saying its tool list changed, then the
  answer, and forgets the session (as a server that restarted or expired it).

It prints ``ready`` once it listens.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

MODE = os.environ.get("HOSTILE", "")
SESSIONS: list[str] = []  # forget: the sessions given; the last one is live until a call


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: object) -> None:
        del format, args

    def do_GET(self) -> None:
        self.answer(405)

    def do_DELETE(self) -> None:
        self.answer(200)

    def do_POST(self) -> None:
        message = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        if MODE == "forget" and message.get("method") == "initialize":
            SESSIONS.append(f"s{len(SESSIONS) + 1}")
            answer = {"jsonrpc": "2.0", "id": message["id"], "result": result(message)}
            headers = {"Content-Type": "application/json", "Mcp-Session-Id": SESSIONS[-1]}
            self.answer(200, headers, json.dumps(answer).encode())
        elif MODE == "forget" and self.headers.get("Mcp-Session-Id") not in SESSIONS[-1:]:
            self.answer(404, {"Content-Type": "application/json"}, b'{"error": "no session"}')
        elif MODE == "forget" and message.get("method") == "tools/call":
            SESSIONS.append("forgotten")
            changed = {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}
            answer = {"jsonrpc": "2.0", "id": message["id"], "result": result(message)}
            body = f"data: {json.dumps(changed)}\n\ndata: {json.dumps(answer)}\n\n".encode()
            self.answer(200, {"Content-Type": "text/event-stream"}, body)
        elif MODE == "redirect":
            self.answer(307, {"Location": "http://127.0.0.2:9/elsewhere"})
        elif MODE == "html":
            self.answer(200, {"Content-Type": "text/html"}, b"<html><p>Welcome</p></html>")
        elif MODE == "open-stream" and message.get("method") == "tools/call":
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.end_headers()  # no length: the stream ends when the connection does
            answer = {"jsonrpc": "2.0", "id": message["id"], "result": result(message)}
            self.wfile.write(f"data: {json.dumps(answer)}\n\n".encode())
            with contextlib.suppress(OSError):
                while True:
                    self.wfile.write(b": still here\n\n")
                    self.wfile.flush()
                    time.sleep(0.2)
        elif "id" not in message:
            self.answer(202)
        else:
            headers = {"Content-Type": "application/json"}
            if MODE == "session-id":
                headers["Mcp-Session-Id"] = "s\xe9"  # sent as one latin-1 byte
            answer = {"jsonrpc": "2.0", "id": message["id"], "result": result(message)}
            self.answer(200, headers, json.dumps(answer).encode())

    def answer(self, status: int, headers: dict[str, str] | None = None, body: bytes = b"") -> None:
        self.send_response(status)
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def result(message: dict[str, object]) -> dict[str, object]:
    if message["method"] == "initialize":
        return {
            "protocolVersion": "2025-06-18",
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "hostile", "version": "0"},
        }
    if message["method"] == "tools/list":
        return {"tools": [{"name": "plain", "inputSchema": {"type": "object"}}]}
    return {"content": [{"type": "text", "text": "plain ran"}]}


if __name__ == "__main__":
    server = ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Handler)
    print("ready", flush=True)
    server.serve_forever()
