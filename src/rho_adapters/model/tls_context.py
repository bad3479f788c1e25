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
printed as ``[Errno 2] No such file or directory``, naming neither).
"""

from __future__ import annotations

import contextlib
import os
import ssl
import threading

from rho_domain.errors import ConfigError

_ssl_lock = threading.Lock()
_ssl_context: ssl.SSLContext | None = None
_ssl_created = 0


def verifying_context() -> ssl.SSLContext:
    """A new verifying client context whose CA certificates are chosen as httpx chooses them
    (module docstring), from the process's ``SSL_CERT_FILE`` and ``SSL_CERT_DIR``, read now.
    Raises ConfigError when ``SSL_CERT_FILE`` names no readable file of PEM certificates."""
    cafile = os.environ.get("SSL_CERT_FILE")
    if cafile:
        try:
            return ssl.create_default_context(cafile=cafile)
        except OSError as exc:  # a missing or unreadable file; ssl.SSLError: no certificate
            raise ConfigError(
                f"SSL_CERT_FILE={cafile} cannot be loaded as CA certificates: {exc}; "
                "set it to a file of PEM certificates, or unset it for certifi's bundle"
            ) from None
    capath = os.environ.get("SSL_CERT_DIR")
    if capath:  # read lazily by OpenSSL, at each handshake, as httpx's context reads it
        return ssl.create_default_context(capath=capath)
    import certifi

    return ssl.create_default_context(cafile=certifi.where())


def shared_ssl_context() -> ssl.SSLContext:
    """The process's verifying SSL context (``verifying_context()``), made once. Raises
    ConfigError as ``verifying_context`` does (and tries again on the next call)."""
    global _ssl_context, _ssl_created
    with _ssl_lock:
        if _ssl_context is None:
            _ssl_context = verifying_context()
            _ssl_created += 1
        return _ssl_context


def build_shared_context_ahead() -> None:
    """Start making the process's shared context (``shared_ssl_context``) in a daemon thread,
    for a caller that knows an https endpoint is coming and has other start-up to do: OpenSSL
    parses the CA bundle (~150 certificates, a fifth of an https one-shot's instructions) with
    the GIL released, so the caller's imports go on beside it. The first
    ``shared_ssl_context()`` waits for it (the lock); the context, and what it trusts, are the
    ones that call would have made. A failure is not kept: that call tries again and raises
    it."""
    threading.Thread(target=_build_quietly, name="rho-agent-ssl-context", daemon=True).start()


def _build_quietly() -> None:
    with contextlib.suppress(ConfigError):  # said by the caller's own shared_ssl_context()
        shared_ssl_context()


def ssl_contexts_created() -> int:
    """How many SSL contexts ``shared_ssl_context`` has made in this process (0 or 1)."""
    return _ssl_created
