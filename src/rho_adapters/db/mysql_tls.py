"""TLS for MySQL and MariaDB connections (``options.tls``).

``verify`` (TLS required, certificate and host name checked against the system CAs or
``options.tls_ca``; the default for remote hosts), ``required`` (TLS without verification,
for self-signed servers) or ``off`` (only for a loopback host or ``options.unix_socket``,
and their default: that traffic never leaves the machine). One ``SSLContext`` per setting
is built once per process; PyMySQL would otherwise load the CA store again for every
connection (tens of milliseconds of CPU each).
"""

from __future__ import annotations

import functools
import ssl
from collections.abc import Mapping
from typing import Any

from rho_domain.config import DatabaseConfig
from rho_domain.errors import ConfigError

_TLS_MODES = ("verify", "required", "off")


def is_local(config: DatabaseConfig) -> bool:
    """A unix socket or a loopback host: the connection never leaves the machine."""
    host = (config.host or "localhost").lower()
    return (
        bool(config.options.get("unix_socket"))
        or host in ("localhost", "::1")
        or (host.startswith("127."))
    )


def tls_mode(config: DatabaseConfig, alias: str) -> str:
    """The alias's ``options.tls``, defaulted and checked (``ConfigError`` when invalid)."""
    mode = config.options.get("tls")
    where = f"databases.{alias}.options.tls"
    if mode is None:
        return "off" if is_local(config) else "verify"
    if mode not in _TLS_MODES:
        raise ConfigError(f"{where}: expected one of {', '.join(_TLS_MODES)}, got {mode!r}")
    if mode == "off" and not is_local(config):
        raise ConfigError(
            f"{where}: off is only allowed for a loopback host or a unix socket; use "
            "required (unverified TLS) for a server without a trusted certificate"
        )
    return str(mode)


@functools.lru_cache(maxsize=8)
def tls_context(mode: str, ca_file: str | None) -> ssl.SSLContext:
    """One context per (mode, CA file) for the whole process."""
    ctx = ssl.create_default_context(cafile=ca_file)
    if mode == "required":
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
    return ctx


def tls_kwargs(config: DatabaseConfig, alias: str) -> Mapping[str, Any]:
    """PyMySQL's ``connect`` arguments for the alias's TLS mode (``ConfigError`` if bad)."""
    mode = tls_mode(config, alias)
    if mode == "off":
        return {"ssl_disabled": True}
    ca = config.options.get("tls_ca")
    return {"ssl": tls_context(mode, str(ca) if ca else None)}
