"""Host and Origin values, parsed strictly: what the request guard compares.

A ``Host`` header or an origin is taken apart into a host and a port, and anything that is
not plainly a DNS name, a dotted IPv4 address or a bracketed IPv6 address is no authority
at all (None): ``localhost.`` (a trailing dot), ``127.1``, ``0x7f.0.0.1``, ``2130706433`` as
an address, an empty label, a user part, a path or spaces. Names are compared in lower case
and addresses by value (``[0:0:0:0:0:0:0:1]`` is ``::1``), so a spelling either denotes a name
the server listed or is refused; nothing is resolved.
"""

from __future__ import annotations

import functools
import ipaddress
import re

import attrs

from rho_domain.value_methods import value_eq, value_hash, value_repr

# Hosts every server answers to: it listens on loopback (or everywhere, loopback included).
LOOPBACK_HOSTS = frozenset({"localhost", "127.0.0.1", "::1"})
DEFAULT_PORTS = {"http": 80, "https": 443}

_LABEL = r"[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?"
_NAME = re.compile(rf"{_LABEL}(?:\.{_LABEL})*")
_PORT = re.compile(r"[0-9]{1,5}")
_ORIGIN = re.compile(r"(https?)://([^/?#@\s]+)")


@attrs.frozen
class Authority:
    """A host and an optional port, as a ``Host`` header or an origin carries them.

    Attributes:
        host: A lower-case DNS name, or an IP address in its compressed form (IPv6 without
            brackets).
        port: The explicit port, or None when the text had none.
    """

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    host: str
    port: int | None

    @classmethod
    def parse(cls, text: str) -> Authority | None:
        """``host``, ``host:port``, ``[v6]`` or ``[v6]:port``; None for anything else."""
        return _parse(text)

    def effective_port(self, scheme: str) -> int | None:
        """The port, or the scheme's default when none is written."""
        return self.port if self.port is not None else DEFAULT_PORTS.get(scheme)


# Every request is checked, and clients repeat the same few Host and Origin values: parsing
# (ipaddress above all) is done once per distinct text; the bound keeps odd values from piling up.
@functools.lru_cache(maxsize=1024)
def _parse(text: str) -> Authority | None:
    if text.startswith("["):
        inside, bracket, rest = text[1:].partition("]")
        host = _address(inside, version=6) if bracket else None
    else:
        name, colon, port_text = text.partition(":")
        host = host_name(name)
        rest = colon + port_text
    if host is None:
        return None
    if not rest:
        return Authority(host, None)
    port_text = rest.removeprefix(":")
    if rest[0] != ":" or not _PORT.fullmatch(port_text) or not 0 < int(port_text) < 65536:
        return None
    return Authority(host, int(port_text))


@functools.lru_cache(maxsize=1024)
def host_name(text: str) -> str | None:
    """A host as written in a Host header or an ``--allow-host`` value, normalised: a name in
    lower case, a dotted IPv4 address, or an IPv6 address (brackets optional); else None."""
    if text.startswith("[") and text.endswith("]"):
        return _address(text[1:-1], version=6)
    if ":" in text:
        return _address(text, version=6)
    if not text.isascii():
        return None  # no Unicode case folding: "K" (Kelvin sign) must not become "k"
    lowered = text.lower()
    if re.fullmatch(r"[0-9.]+", lowered):
        return _address(lowered, version=4)  # digits and dots are an address or nothing
    return lowered if _NAME.fullmatch(lowered) else None


@functools.lru_cache(maxsize=1024)
def parse_origin(text: str) -> tuple[str, Authority] | None:
    """``scheme://authority`` of an ``Origin`` header (http or https, nothing after the
    authority); None for ``null``, other schemes, paths and anything malformed."""
    match = _ORIGIN.fullmatch(text.strip())
    if match is None:
        return None
    authority = Authority.parse(match.group(2))
    return None if authority is None else (match.group(1), authority)


def _address(text: str, *, version: int) -> str | None:
    try:
        address = ipaddress.ip_address(text)
    except ValueError:
        return None
    if address.version != version:
        return None
    return str(address)
