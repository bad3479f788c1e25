"""An MCP server over Streamable HTTP whose answers decode to far more than they weigh
(``python bomb_http_server.py PORT``), on the standard library's HTTP server.

``$BOMB`` picks how it answers ``tools/call`` (initialize and the listing are plain):

- ``gzip-gzip``: ``Content-Encoding: gzip, gzip``, a body of a few KB that is ``$BOMB_MB``
  megabytes of zeros (default 1024) gzipped twice: one network chunk decodes to all of it;
- ``data-lines``: an event stream of one event made of ``$BOMB_MB`` megabytes of short
  ``data:`` lines (``data:ab``), each of which a decoder may keep as an object of its own;
- ``many-events``: an event stream of ``$KEEPALIVES`` (600,000) comments ending in a blank
  line each, in CRLF (four line ends each), then the answer (``many ran``), as an honest long
  stream;
- ``delete-gzip``: gives an ``Mcp-Session-Id`` at ``initialize`` and answers the session's
  ``DELETE`` (at shutdown) with the ``gzip-gzip`` body.

It prints ``ready`` once it listens (after making its body).
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import zlib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

MODE = os.environ.get("BOMB", "")
MEGABYTES = int(os.environ.get("BOMB_MB", "1024"))


def gzipped(parts: list[bytes]) -> bytes:
    compressor = zlib.compressobj(9, zlib.DEFLATED, 31)
    return b"".join([compressor.compress(part) for part in parts] + [compressor.flush()])


def bomb_body() -> bytes:
    if MODE in ("gzip-gzip", "delete-gzip"):
        return gzipped([gzipped([b"\0" * (1 << 20)] * MEGABYTES)])
    if MODE == "data-lines":
        return b"data:ab\n" * (MEGABYTES << 17) + b"\n"
    return b""


BODY = bomb_body()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: object) -> None:
        del format, args

    def do_GET(self) -> None:
        self.answer(405)

    def do_DELETE(self) -> None:
        if MODE == "delete-gzip":
            headers = {"Content-Type": "application/json", "Content-Encoding": "gzip, gzip"}
            self.answer(200, headers, BODY)
        else:
            self.answer(200)

    def do_POST(self) -> None:
        message = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        if "id" not in message:
            self.answer(202)
        elif message["method"] == "tools/call" and MODE == "gzip-gzip":
            headers = {"Content-Type": "application/json", "Content-Encoding": "gzip, gzip"}
            self.answer(200, headers, BODY)
        elif message["method"] == "tools/call" and MODE == "data-lines":
            self.answer(200, {"Content-Type": "text/event-stream"}, BODY)
        elif message["method"] == "tools/call" and MODE == "many-events":
            content = [{"type": "text", "text": "many ran"}]
            answer = {"jsonrpc": "2.0", "id": message["id"], "result": {"content": content}}
            keepalives = int(os.environ.get("KEEPALIVES", "600000"))
            body = b": k\r\n\r\n" * keepalives + f"data: {json.dumps(answer)}\r\n\r\n".encode()
            self.answer(200, {"Content-Type": "text/event-stream"}, body)
        else:
            answer = {"jsonrpc": "2.0", "id": message["id"], "result": result(message)}
            headers = {"Content-Type": "application/json"}
            if MODE == "delete-gzip" and message["method"] == "initialize":
                headers["Mcp-Session-Id"] = "s1"
            self.answer(200, headers, json.dumps(answer).encode())

    def answer(self, status: int, headers: dict[str, str] | None = None, body: bytes = b"") -> None:
        self.send_response(status)
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        with contextlib.suppress(OSError):  # the client left before the bomb's end: it should
            self.wfile.write(body)


def result(message: dict[str, object]) -> dict[str, object]:
    if message["method"] == "initialize":
        return {
            "protocolVersion": "2025-06-18",
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "bomb", "version": "0"},
        }
    return {"tools": [{"name": "bomb", "inputSchema": {"type": "object"}}]}


if __name__ == "__main__":
    server = ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Handler)
    print("ready", flush=True)
    server.serve_forever()
