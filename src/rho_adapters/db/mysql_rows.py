"""The rows a MariaDB/MySQL connection reads, bounded in bytes as they arrive.

``max_allowed_packet`` bounds each value, not a row of thousands of them, and PyMySQL reads
a row whole (one protocol packet, however many 16 MB frames it spans) before any cell of it
is cut: ``bounded_connection`` is PyMySQL's ``Connection`` counting the bytes of the packet
it reads, which stops past ``MAX_ROW_BYTES``.
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


@functools.lru_cache(maxsize=2)
def bounded_connection(pymysql: Any) -> Any:
    """PyMySQL's ``Connection``, reading no packet longer than ``MAX_ROW_BYTES``: past it,
    the connection is closed (the rest of the row is never read) and an ``OperationalError``
    says what to change."""

    class BoundedConnection(pymysql.connections.Connection):  # type: ignore[misc]
        _rho_packet = 0  # bytes of the packet being read

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
