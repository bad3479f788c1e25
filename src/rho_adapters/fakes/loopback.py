"""LoopbackServer: the wire fake over a real socket on 127.0.0.1, for out-of-process clients.

It serves the same scripted ``Reply`` values as ``WireTransport`` (see ``rho_adapters.fakes.wire``)
as HTTP/1.1 with keep-alive: SSE bodies in chunked encoding, JSON completions and error answers
with a Content-Length. It runs its own event loop in a daemon thread, so sync tests, async tests
and subprocesses (``--base-url server.base_url``) can all use it::

    with LoopbackServer([tool_reply(call("list", {"path": "."})), text_reply("Done.")]) as srv:
        run_cli("--base-url", srv.base_url, ...)
    assert srv.requests[1]["messages"][-1]["role"] == "tool"

Faults behave as on a real server: ``drop`` closes the socket mid-body, ``stall`` stops
sending (the client's read timeout fires), ``cut`` ends the body cleanly.
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Iterable, Sequence
from types import TracebackType
from typing import TYPE_CHECKING, Any

from rho_adapters.fakes.wire import Exchange, Reply, Rule, WireScriptExhausted, answer
from rho_adapters.fakes.wire_render import (
    Drop,
    Stall,
    render_error,
    render_json,
    render_stream,
)

if TYPE_CHECKING:
    import ssl

_REASONS = {
    200: "OK",
    400: "Bad Request",
    401: "Unauthorized",
    404: "Not Found",
    429: "Too Many Requests",
    500: "Internal Server Error",
    503: "Service Unavailable",
}


class LoopbackServer:
    """Serves a script of replies on ``base_url`` (``http://127.0.0.1:<port>/v1``).

    ``repeat=True`` cycles the script (benchmarks). ``requests`` holds every parsed request
    body; ``connections`` counts accepted TCP connections (to observe connection reuse).
    ``rules`` answer by the request first, as in ``WireTransport``; anything else that is
    not a POST to ``.../chat/completions`` gets a 404 (recorded in ``other_requests``).
    ``ssl_context`` (a server context with its certificate loaded) serves https instead:
    ``base_url`` is then ``https://127.0.0.1:<port>/v1``, and ``alpn`` records the protocol
    each TLS connection's client chose (None when it offered none).
    """

    def __init__(
        self,
        replies: Iterable[Reply],
        *,
        repeat: bool = False,
        rules: Sequence[Rule] = (),
        ssl_context: ssl.SSLContext | None = None,
    ) -> None:
        self.replies = list(replies)
        self.rules = list(rules)
        self.repeat = repeat
        self.requests: list[dict[str, Any]] = []
        self.other_requests: list[str] = []
        self.connections = 0
        self.ssl_context = ssl_context
        self.alpn: list[str | None] = []
        self.port = 0
        self._next = 0
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._ready = threading.Event()
        self._stop: asyncio.Event | None = None

    @property
    def base_url(self) -> str:
        """The server's ``http(s)://127.0.0.1:PORT/v1``, for a model's ``base_url``."""
        scheme = "http" if self.ssl_context is None else "https"
        return f"{scheme}://127.0.0.1:{self.port}/v1"

    def start(self) -> LoopbackServer:
        """Start serving in a background thread; returns once the port is bound."""
        self._thread = threading.Thread(target=self._run, name="rho-loopback", daemon=True)
        self._thread.start()
        if not self._ready.wait(10):
            raise RuntimeError("the loopback server did not start")
        return self

    def stop(self) -> None:
        """Stop serving and join the thread (stalled streams are abandoned)."""
        if self._loop is not None and self._stop is not None:
            self._loop.call_soon_threadsafe(self._stop.set)
        if self._thread is not None:
            self._thread.join(10)

    def __enter__(self) -> LoopbackServer:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    def _run(self) -> None:
        asyncio.run(self._serve())

    async def _serve(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._stop = asyncio.Event()
        server = await asyncio.start_server(self._connection, "127.0.0.1", 0, ssl=self.ssl_context)
        self.port = server.sockets[0].getsockname()[1]
        self._ready.set()
        async with server:
            await self._stop.wait()
            server.close()
            for task in asyncio.all_tasks() - {asyncio.current_task()}:
                task.cancel()

    def _next_reply(self) -> Reply:
        with self._lock:
            if self._next >= len(self.replies):
                if not self.repeat or not self.replies:
                    raise WireScriptExhausted(f"no reply scripted for request {self._next + 1}")
                self._next = 0
            reply = self.replies[self._next]
            self._next += 1
            return reply

    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        tls = writer.get_extra_info("ssl_object")
        if tls is not None:
            self.alpn.append(tls.selected_alpn_protocol())
        try:
            while await self._exchange(reader, writer):
                pass
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.CancelledError):
            pass  # client went away, or the server is stopping (a stalled stream is cancelled)
        finally:
            writer.close()  # no wait_closed: it would be cancelled again while stopping

    async def _exchange(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bool:
        """Serve one request; False when the connection must close."""
        head = await reader.readuntil(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        headers = {}
        for line in lines[1:]:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        raw = await reader.readexactly(int(headers.get("content-length") or 0))
        method, _, rest = lines[0].partition(" ")
        path = rest.partition(" ")[0].partition("?")[0]
        body = json.loads(raw or b"{}")
        exchange = Exchange(method=method, path=path, body=body)
        reply = answer(self.rules, exchange)
        if not exchange.is_chat:
            self.other_requests.append(f"{method} {path}")
            reply = reply or Reply(status=404, error_body={"detail": "Not Found"})
        else:
            self.requests.append(body)
        if reply is None:
            try:
                reply = self._next_reply()
            except WireScriptExhausted as exc:
                reply = Reply(status=500, error=str(exc))
        extra = "".join(f"{k}: {v}\r\n" for k, v in reply.headers.items())
        if reply.status >= 400 or (reply.raw is None and not body.get("stream")):
            content = render_error(reply) if reply.status >= 400 else render_json(reply)
            writer.write(
                f"HTTP/1.1 {reply.status} {_REASONS.get(reply.status, 'Status')}\r\n"
                f"content-type: application/json\r\ncontent-length: {len(content)}\r\n"
                f"{extra}\r\n".encode()
                + content
            )
            await writer.drain()
            return True
        writer.write(
            f"HTTP/1.1 {reply.status} OK\r\ncontent-type: text/event-stream\r\n"
            f"transfer-encoding: chunked\r\ncache-control: no-cache\r\n{extra}\r\n".encode()
        )
        for piece in render_stream(reply):
            if isinstance(piece, Drop):
                await writer.drain()
                return False  # close mid-body: the client sees an incomplete chunked read
            if isinstance(piece, Stall):
                await writer.drain()
                await asyncio.sleep(piece.seconds if piece.seconds is not None else 3600.0)
                continue
            writer.write(b"%x\r\n%s\r\n" % (len(piece), piece))
        writer.write(b"0\r\n\r\n")
        await writer.drain()
        return True


def main(argv: list[str] | None = None) -> None:
    """``python -m rho_adapters.fakes.loopback SCRIPT.json``: serve a JSON list of replies
    (``{"text": ..., "tool_calls": [{"id", "name", "arguments"}], "status", "error"}``) and
    print the base URL, until interrupted."""
    import sys

    from rho_domain.messages import ToolCall

    args = sys.argv[1:] if argv is None else argv
    with open(args[0], encoding="utf-8") as f:
        script = json.load(f)
    replies = []
    for item in script:
        calls = tuple(
            ToolCall(c.get("id") or f"call_{i}", c["name"], c.get("arguments", "{}"))
            for i, c in enumerate(item.pop("tool_calls", ()))
        )
        replies.append(Reply(tool_calls=calls, **item))
    server = LoopbackServer(replies, repeat="--repeat" in args).start()
    sys.stdout.write(server.base_url + "\n")
    sys.stdout.flush()
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        server.stop()


if __name__ == "__main__":
    main()
