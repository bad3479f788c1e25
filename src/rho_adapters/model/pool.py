"""ClientPool: the process's model HTTP clients, which outlive the sessions that use them.

One client per endpoint (base URL + headers, which carry the credentials) and
event loop. Models lease a client and give it back when they close; a client nobody leases is
kept for ``idle_seconds`` (the next session of a service reuses its warm keep-alive
connections) and then closed. Each client carries an ``InFlightGate`` bounding its requests in
flight, and ``max_connections`` equal to that bound, so httpcore never queues.

Event loops: httpx connections belong to the loop that opened them, so the loop is part of the
key and a client is never handed to another loop. When a loop shuts its async generators down
(``asyncio.run`` and most test runners do this before closing), a guard generator registered on
that loop closes its clients there; clients of a loop closed without that step are dropped the
next time a client is created. ``aclose()`` closes the running loop's clients at once; an
``atexit`` hook closes what is left on loops that can still run.

TLS: one ``ssl.SSLContext`` per process, created on the first https endpoint (httpx would load
the CA bundle for every client, about 80 ms of CPU, even for an http:// endpoint).

Connections: each client's transport (``tls.PlainTransport``) pools them in a
``LeanConnectionPool``, which does not ask every pooled socket at each request.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import logging
import threading
import time
import weakref
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from rho_adapters.model.gate import InFlightGate
from rho_adapters.model.loop_clients import Lease, LoopClients, Pooled, PoolKey, new_client
from rho_adapters.model.tls_context import CERTIFI, CaTrust

if TYPE_CHECKING:  # built when asked (pool_stats.py)
    import httpx

    from rho_adapters.model.core_client import AnyClient
    from rho_adapters.model.pool_stats import EndpointStats

__all__ = [
    "DEFAULT_IDLE_SECONDS",
    "DEFAULT_KEEPALIVE_SECONDS",
    "DEFAULT_MAX_IN_FLIGHT",
    "REMEMBER_SECONDS",
    "SHARED_POOL",
    "ClientPool",
    "Lease",
]

log = logging.getLogger("rho_adapters.model")

DEFAULT_MAX_IN_FLIGHT = 100
"""Requests in flight per endpoint and loop (see docs/benchmarks.md for how it was chosen)."""
DEFAULT_IDLE_SECONDS = 60.0
"""How long a client nobody leases stays open."""
DEFAULT_KEEPALIVE_SECONDS = 30.0
"""How long an idle connection is kept (a server that closes earlier is noticed on reuse)."""
REMEMBER_SECONDS = 600.0
"""How long ``remembered`` answers (what a server said it is) are kept."""

T = TypeVar("T")


class ClientPool:
    """Leases pooled clients per (base URL, headers, running loop). See the module docstring.

    ``max_in_flight`` bounds requests in flight per client; ``idle_seconds`` is how long an
    unleased client stays open; ``keepalive_seconds`` how long an idle connection is kept.
    ``transport`` (tests, a custom proxy or a recording) is what every client of this pool
    sends through instead of the network (it is never closed here: it is the caller's).
    """

    def __init__(
        self,
        *,
        max_in_flight: int = DEFAULT_MAX_IN_FLIGHT,
        idle_seconds: float = DEFAULT_IDLE_SECONDS,
        keepalive_seconds: float = DEFAULT_KEEPALIVE_SECONDS,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self.transport = transport
        self.max_in_flight = max_in_flight
        self.idle_seconds = idle_seconds
        self.keepalive_seconds = keepalive_seconds
        self.clients_created = 0
        # Loops may run in several threads: the loop table is changed under a lock (each
        # loop's own clients are only touched from that loop).
        self._lock = threading.Lock()
        self._loops: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, LoopClients] = (
            weakref.WeakKeyDictionary()
        )
        self._exit_hook = False
        self._answers: dict[str, tuple[float, Any]] = {}

    def configure(
        self, *, max_in_flight: int | None = None, idle_seconds: float | None = None
    ) -> None:
        """Change the in-flight bound (also of clients already open) or the idle time."""
        if max_in_flight is not None:
            if max_in_flight < 1:
                raise ValueError(f"max_in_flight must be at least 1, got {max_in_flight}")
            self.max_in_flight = max_in_flight
            for clients in self._all():
                for pooled in clients.clients.values():
                    pooled.gate.set_limit(max_in_flight)
        if idle_seconds is not None:
            self.idle_seconds = idle_seconds

    def acquire(
        self,
        base_url: str,
        headers: Mapping[str, str],
        *,
        proxy: str | None = None,
        trust: CaTrust = CERTIFI,
    ) -> Lease:
        """A lease on the client for this endpoint on the running loop (made if needed),
        sending through ``proxy`` when one is given (``proxies.ProxyRoutes.for_url``), its
        https trusting ``trust`` (``ProxyRoutes.trust``)."""
        loop = asyncio.get_running_loop()
        clients = self._loop_clients()
        key: PoolKey = (base_url, tuple(sorted(headers.items())), proxy, trust)
        pooled = clients.clients.get(key)
        if pooled is None:
            pooled = clients.clients[key] = Pooled(
                self._new_client(base_url, headers, proxy, trust), InFlightGate(self.max_in_flight)
            )
        if pooled.idle is not None:
            pooled.idle.cancel()
            pooled.idle = None
        pooled.leases += 1
        return Lease(client=pooled.client, gate=pooled.gate, loop=loop, key=key)

    def holds(self, lease: Lease) -> bool:
        """Whether ``lease``'s client is still this pool's (not closed by ``aclose``)."""
        clients = self._loops.get(lease.loop)
        pooled = clients.clients.get(lease.key) if clients is not None else None
        return pooled is not None and pooled.client is lease.client

    def release(self, lease: Lease) -> None:
        """Give a lease back. The last one starts the idle timer (on the lease's loop); a
        lease of a loop that is gone is just dropped."""
        clients = self._loops.get(lease.loop)
        pooled = clients.clients.get(lease.key) if clients is not None else None
        if clients is None or pooled is None or pooled.client is not lease.client:
            return
        pooled.leases -= 1
        if pooled.leases > 0 or lease.loop.is_closed():
            return
        if _running_loop() is lease.loop:
            self._start_idle_timer(clients, lease.key, pooled)
        else:
            lease.loop.call_soon_threadsafe(self._start_idle_timer, clients, lease.key, pooled)

    async def remembered(
        self,
        name: str,
        ask: Callable[[], Awaitable[T]],
        *,
        keep: Callable[[T], bool] = lambda answer: True,
    ) -> T:
        """``ask()``'s answer, asked once per ``name`` for the pool's users (a server's facts,
        probed once per process rather than once per session) and kept ``REMEMBER_SECONDS``
        when ``keep(answer)``. Callers arriving while the first asks wait for it; an exception
        or an answer not kept (an unreachable server) is asked again by the next caller."""
        clients = self._loop_clients()
        lock = clients.asking.setdefault(name, asyncio.Lock())
        async with lock:
            known = self._answers.get(name)
            if known is not None and time.monotonic() - known[0] < REMEMBER_SECONDS:
                return cast(T, known[1])
            answer = await ask()
            if keep(answer):
                self._answers[name] = (time.monotonic(), answer)
            return answer

    def forget(self) -> None:
        """Drop every remembered answer: the next ``remembered`` asks again (a server
        restarted at the same address, perhaps with another model or window)."""
        self._answers.clear()

    def leases(self, base_url: str) -> int:
        """How many live leases hold clients of ``base_url`` (tests and diagnostics)."""
        return sum(s.leases for s in self.stats() if s.base_url == base_url)

    def stats(self) -> tuple[EndpointStats, ...]:
        """Every open client's leases and in-flight counters, wait times included."""
        from rho_adapters.model.pool_stats import EndpointStats

        return tuple(
            EndpointStats(base_url=key[0], leases=pooled.leases, gate=pooled.gate.stats())
            for clients in self._all()
            for key, pooled in clients.clients.items()
        )

    async def aclose(self) -> None:
        """Close the running loop's clients now and drop those of closed loops. Leases
        still held get a fresh client on their next use."""
        loop = asyncio.get_running_loop()
        with self._lock:
            clients = self._loops.pop(loop, None)
        self._forget_closed_loops()
        if clients is not None:
            await clients.close_all()

    def _loop_clients(self) -> LoopClients:
        loop = asyncio.get_running_loop()
        clients = self._loops.get(loop)
        if clients is None:
            self._forget_closed_loops()
            with self._lock:
                clients = self._loops[loop] = LoopClients()
        return clients

    def _all(self) -> list[LoopClients]:
        with self._lock:
            return list(self._loops.values())

    def _start_idle_timer(self, clients: LoopClients, key: PoolKey, pooled: Pooled) -> None:
        if pooled.leases > 0 or clients.clients.get(key) is not pooled:
            return
        loop = asyncio.get_running_loop()
        pooled.idle = loop.call_later(self.idle_seconds, self._evict, clients, key, pooled)

    def _evict(self, clients: LoopClients, key: PoolKey, pooled: Pooled) -> None:
        if pooled.leases > 0 or clients.clients.get(key) is not pooled:
            return
        del clients.clients[key]
        task = asyncio.get_running_loop().create_task(pooled.client.aclose())
        clients.closing.add(task)
        task.add_done_callback(clients.closing.discard)

    def _forget_closed_loops(self) -> None:
        with self._lock:
            for loop in [loop for loop in list(self._loops) if loop.is_closed()]:
                self._loops.pop(loop, None)

    def _new_client(
        self, base_url: str, headers: Mapping[str, str], proxy: str | None, trust: CaTrust
    ) -> AnyClient:
        if not self._exit_hook:
            atexit.register(self._close_at_exit)
            self._exit_hook = True
        self.clients_created += 1
        return new_client(
            base_url,
            headers,
            proxy=proxy,
            trust=trust,
            max_in_flight=self.max_in_flight,
            keepalive_seconds=self.keepalive_seconds,
            transport=self.transport,
        )

    def _close_at_exit(self) -> None:
        with self._lock:
            held = list(self._loops.items())
        for loop, clients in held:
            if loop.is_closed() or loop.is_running():
                continue
            with contextlib.suppress(Exception):
                loop.run_until_complete(clients.close_all())
        with self._lock:
            self._loops.clear()


def _running_loop() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


SHARED_POOL = ClientPool()
"""The process's pool, used by every model that is not given another."""
