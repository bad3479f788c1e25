"""The rows a MariaDB/MySQL connection reads, bounded in bytes as they arrive.

``max_allowed_packet`` bounds each value, not a row of thousands of them, and PyMySQL reads
a row whole (one protocol packet, however many 16 MB frames it spans) before any cell of it
is cut: ``bounded_connection`` is PyMySQL's ``Connection`` counting the bytes of the packet
it reads, which stops past ``MAX_ROW_BYTES``. Its handshake waits ``connect_timeout`` at
most for each read, as the connection itself does: PyMySQL waits for the server's greeting
without a limit.
"""

from __future__ import annotations

import functools
from typing import Any

from rho_adapters.db.results import MAX_RESULT_BYTES, RECEIVED_FACTOR

# The longest protocol packet (a row, however many 16 MB frames it spans) the client reads:
# "SELECT x, x, ... FROM (SELECT REPEAT('x', 10000000) AS x) t" sent a 120 MB row with 12
# columns, whole into the agent before any cell was cut, and a statement may have 4,096.
MAX_ROW_BYTES = MAX_RESULT_BYTES * RECEIVED_FACTOR
_CR_NET_PACKET_TOO_LARGE = 2020  # the client library's own code for "packet too large"
_CR_CONN_HOST_ERROR = 2003  # the client library's "can't connect to MySQL server"


@functools.lru_cache(maxsize=2)
def bounded_connection(pymysql: Any) -> Any:
    """PyMySQL's ``Connection``, reading no packet longer than ``MAX_ROW_BYTES``: past it,
    the connection is closed (the rest of the row is never read) and an ``OperationalError``
    says what to change."""

    class BoundedConnection(pymysql.connections.Connection):  # type: ignore[misc]
        _rho_packet = 0  # bytes of the packet being read
        _read_timeout: float | None  # PyMySQL's, set by its __init__ (untyped)
        connect_timeout: float | None

        def connect(self, sock: Any = None) -> None:
            # A port where something else listens that waits for the client to speak
            # (PostgreSQL, an HTTP server) held the greeting's read until the statement
            # timeout, which then blamed the statement: the handshake's reads get the
            # connect_timeout, and its end says what to check.
            read_timeout, self._read_timeout = self._read_timeout, self.connect_timeout
            try:
                super().connect(sock)
            except pymysql.err.OperationalError as exc:
                if not isinstance(exc.__context__, TimeoutError):
                    raise
                raise pymysql.err.OperationalError(
                    _CR_CONN_HOST_ERROR,
                    f"{self.host}:{self.port} accepted the connection but sent no MySQL/MariaDB "
                    f"greeting within {self.connect_timeout:g} s (options.connect_timeout): "
                    "something else may listen there",
                ) from exc
            finally:
                self._read_timeout = read_timeout  # the next read sets it on the socket

        def _read_packet(self, *args: Any, **kwargs: Any) -> Any:
            self._rho_packet = 0
            return super()._read_packet(*args, **kwargs)

        def _read_bytes(self, num_bytes: int) -> Any:
            self._rho_packet += num_bytes
            if self._rho_packet > MAX_ROW_BYTES:
                self._force_close()
                raise pymysql.err.OperationalError(
                    _CR_NET_PACKET_TOO_LARGE,
                    f"a row of the result is longer than {MAX_ROW_BYTES >> 20} MiB, the most "
                    "one call reads; select fewer or shorter columns (LEFT(x, 1000))",
                )
            return super()._read_bytes(num_bytes)

    return BoundedConnection
