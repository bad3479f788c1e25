"""The process's verifying ``ssl.SSLContext`` for every https endpoint, built without httpx.

httpx's ``create_ssl_context()`` (what ``httpx.AsyncClient`` builds with its defaults, and
what this module built before) costs the importer ``import httpx``: ~124 M instructions,
paid by every one-shot against a cloud provider for a context httpx builds in a few lines of
``ssl``. ``verifying_context`` builds it as httpx 0.28 does for ``verify=True,
trust_env=True`` (the only settings rho-agent asks for): ``SSL_CERT_FILE`` when set and not
empty, else ``SSL_CERT_DIR`` when set and not empty, else certifi's bundle, each loaded into
``ssl.create_default_context`` (so: verified certificates and host names, TLS 1.2 at least,
no ALPN until httpcore sets ``http/1.1`` on connecting). tests/model/test_model_tls_context.py
compares the two contexts setting by setting.

Unlike httpx, a ``SSL_CERT_FILE`` that cannot be read as CA certificates is a
``ConfigError`` naming the variable and the file (httpx let ``FileNotFoundError`` through,
printed as ``[Errno 2] No such file or directory``, naming neither), and so is one that is
not a regular file or is larger than ``MOST_CA_BYTES``: OpenSSL opened a FIFO and waited for
a writer forever (holding the lock every https client of the process waits on), and loaded a
100 MB bundle for 12 s of CPU and 300 MB of memory.

The two variables come from the environment the wiring is given (``CaTrust.from_environ``,
carried in ``proxies.ProxyRoutes.trust`` beside the proxy routes), never from ``os.environ``
here: a service building sessions with ``environ=`` decides whom they trust, as it decides
their proxies. One context is made per ``CaTrust`` and kept for the process.
"""

from __future__ import annotations

import contextlib
import os
import ssl
import stat
import threading
from collections.abc import Mapping

import attrs

from rho_domain.errors import ConfigError
from rho_domain.value_methods import value_eq, value_hash, value_repr

_ssl_lock = threading.Lock()
_ssl_contexts: dict[CaTrust, ssl.SSLContext] = {}
_ssl_created = 0

MOST_CA_BYTES = 16 * 1024 * 1024
"""The largest ``SSL_CERT_FILE`` loaded: certifi's bundle is ~230 KB, a system one ~1 MB."""


@attrs.frozen
class CaTrust:
    """The CA certificates an https request trusts: ``cafile`` (``SSL_CERT_FILE``) when set,
    else ``capath`` (``SSL_CERT_DIR``) when set, else certifi's bundle (both None)."""

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    cafile: str | None = None
    capath: str | None = None

    @classmethod
    def from_environ(cls, environ: Mapping[str, str]) -> CaTrust:
        """The trust ``environ``'s ``SSL_CERT_FILE`` and ``SSL_CERT_DIR`` name (an empty
        value is unset, as httpx takes it)."""
        return cls(
            cafile=environ.get("SSL_CERT_FILE") or None,
            capath=environ.get("SSL_CERT_DIR") or None,
        )


CERTIFI = CaTrust()


def verifying_context(trust: CaTrust = CERTIFI) -> ssl.SSLContext:
    """A new verifying client context whose CA certificates are chosen as httpx chooses them
    (module docstring) from ``trust``. Raises ConfigError when its ``cafile``
    (``SSL_CERT_FILE``) names no readable file of PEM certificates."""
    if trust.cafile:
        try:
            _a_bundle(trust.cafile)
            return ssl.create_default_context(cafile=trust.cafile)
        except OSError as exc:  # a missing or unreadable file; ssl.SSLError: no certificate
            raise ConfigError(
                f"SSL_CERT_FILE={trust.cafile} cannot be loaded as CA certificates: {exc}; "
                "set it to a file of PEM certificates, or unset it for certifi's bundle"
            ) from None
    if trust.capath:  # read lazily by OpenSSL, at each handshake, as httpx's context reads it
        return ssl.create_default_context(capath=trust.capath)
    import certifi

    return ssl.create_default_context(cafile=certifi.where())


def _a_bundle(path: str) -> None:
    """Raise OSError unless ``path`` is a regular file of at most ``MOST_CA_BYTES`` (what
    OpenSSL then opens and reads whole)."""
    found = os.stat(path)
    if not stat.S_ISREG(found.st_mode):
        kind = "a directory" if stat.S_ISDIR(found.st_mode) else "not a regular file"
        kind = "a FIFO" if stat.S_ISFIFO(found.st_mode) else kind
        raise OSError(f"it is {kind}")
    if found.st_size > MOST_CA_BYTES:
        raise OSError(
            f"it holds {found.st_size:,} bytes, more than the {MOST_CA_BYTES:,} a CA bundle "
            "may have"
        )


def shared_ssl_context(trust: CaTrust = CERTIFI) -> ssl.SSLContext:
    """The process's verifying SSL context for ``trust`` (``verifying_context``), made once
    per trust. Raises ConfigError as ``verifying_context`` does (and tries again on the next
    call)."""
    global _ssl_created
    with _ssl_lock:
        context = _ssl_contexts.get(trust)
        if context is None:
            context = _ssl_contexts[trust] = verifying_context(trust)
            _ssl_created += 1
        return context


def build_shared_context_ahead(trust: CaTrust = CERTIFI) -> None:
    """Start making the process's shared context for ``trust`` (``shared_ssl_context``) in a
    daemon thread, for a caller that knows an https endpoint is coming and has other start-up
    to do: OpenSSL parses the CA bundle (~150 certificates, a fifth of an https one-shot's
    instructions) with the GIL released, so the caller's imports go on beside it. The first
    ``shared_ssl_context(trust)`` waits for it (the lock); the context, and what it trusts, are
    the ones that call would have made. A failure is not kept: that call tries again and
    raises it."""
    threading.Thread(
        target=_build_quietly, args=(trust,), name="rho-agent-ssl-context", daemon=True
    ).start()


def _build_quietly(trust: CaTrust) -> None:
    with contextlib.suppress(ConfigError):  # said by the caller's own shared_ssl_context()
        shared_ssl_context(trust)


def ssl_contexts_created() -> int:
    """How many SSL contexts ``shared_ssl_context`` has made in this process (one per trust)."""
    return _ssl_created
