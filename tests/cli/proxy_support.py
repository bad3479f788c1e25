"""A recording HTTP proxy on loopback, for tests that show where a model call would go
(which host a request line names) without sending it anywhere."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def recording_proxy() -> Iterator[tuple[str, list[str]]]:
    """An HTTP proxy on loopback that records each request line and closes the connection;
    its URL and the lines seen."""
    seen: list[str] = []
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(0.2)
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                continue
            with conn:
                conn.settimeout(5)
                data = b""
                while b"\r\n" not in data and (chunk := conn.recv(4096)):
                    data += chunk
                seen.append(data.split(b"\r\n", 1)[0].decode("latin-1"))

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}", seen
    finally:
        stop.set()
        thread.join()
        listener.close()
