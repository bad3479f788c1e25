"""Which proxy a request goes through: the ``*_proxy`` variables, read as httpx reads them.

httpx honours ``HTTP_PROXY``, ``HTTPS_PROXY``, ``ALL_PROXY`` and ``NO_PROXY`` only for a client
that builds its own transport; rho-agent's clients bring theirs (``tls.PlainTransport``), so
the routes are decided here, from an environment the caller hands over (``rho_entry`` reads
``os.environ``; nothing here does), and given to ``tls.transport_for``.

The rules are httpx's (``httpx._utils.get_environment_proxies``), so a machine configured for
the OpenAI SDK or any httpx program routes rho-agent the same way:

- a variable is read in lower or upper case, the lower-case one winning
  (``urllib.request.getproxies``);
  under CGI (``REQUEST_METHOD`` set) ``HTTP_PROXY`` is ignored ("httpoxy");
- the URL's scheme picks ``http_proxy`` or ``https_proxy``, else ``all_proxy``; a proxy given
  without a scheme is ``http://`` one;
- ``NO_PROXY`` is a comma-separated list: ``*`` turns every proxy off; ``example.com`` matches
  that host and its subdomains, ``.example.com`` only subdomains; an IP address or
  ``localhost`` matches itself; ``scheme://host`` entries match that scheme and host.

One departure: a loopback URL is always reached directly (httpx and curl send it through the
proxy unless ``NO_PROXY`` lists it). Through a proxy the request would carry its secret (a
model's API key, an MCP server's ``Authorization`` header, Daytona's key, the server token)
to the proxy, in clear for ``http://``, and reach the proxy machine's loopback, not this
one's. Loopback in every spelling the resolver takes: ``localhost`` (a trailing dot,
``*.localhost``), 127.0.0.0/8 (``127.1``, ``0x7f.1``, ``2130706433``), ``::1`` and
``::ffff:127.x.y.z``.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Mapping
from urllib.parse import urlsplit

import attrs

from rho_adapters.model.tls_context import CERTIFI, CaTrust
from rho_domain.value_methods import value_eq, value_hash, value_repr

_NAMES = tuple((s, f"{s}_proxy", f"{s.upper()}_PROXY") for s in ("http", "https", "all", "no"))


def _environment_proxies(environ: Mapping[str, str]) -> dict[str, str]:
    """``urllib.request.getproxies_environment``'s reading of ``environ``, for the names
    httpx uses, in lower or upper case (looked up, not scanned: a Session reads them)."""
    found: dict[str, str] = {}
    get = environ.get
    for scheme, lower_name, upper_name in _NAMES:
        value = get(lower_name)
        if value is None:  # the lower-case name wins, even empty
            value = get(upper_name)
            if value and scheme == "http" and "REQUEST_METHOD" in environ:
                continue  # a CGI request's Proxy: header arrives as HTTP_PROXY ("httpoxy")
        if value:
            found[scheme] = value
    return found


@attrs.frozen
class ProxyRoutes:
    """The proxy URL for ``http://`` and ``https://`` requests, the one for any scheme
    (``all``), and the ``NO_PROXY`` entries. The URLs may carry a password: not in the repr.
    ``loopback_direct`` False routes loopback URLs as httpx does (only for a test whose proxy
    and servers can only be on loopback). ``trust``: the CA certificates an https request
    trusts (``SSL_CERT_FILE``, ``SSL_CERT_DIR``), read from the same environment."""

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    http: str | None = attrs.field(default=None, repr=False)
    https: str | None = attrs.field(default=None, repr=False)
    all: str | None = attrs.field(default=None, repr=False)
    no_proxy: tuple[str, ...] = ()
    loopback_direct: bool = True
    trust: CaTrust = CERTIFI

    @classmethod
    def from_environ(cls, environ: Mapping[str, str]) -> ProxyRoutes:
        """The routes ``environ``'s proxy variables describe (none when it names no proxy),
        with the CA trust its ``SSL_CERT_FILE`` and ``SSL_CERT_DIR`` name."""
        found = _environment_proxies(environ)
        trust = CaTrust.from_environ(environ)
        if not found:
            return NO_PROXIES if trust == CERTIFI else cls(trust=trust)

        def url(scheme: str) -> str | None:
            value = found.get(scheme, "").strip()
            return (value if "://" in value else f"http://{value}") if value else None

        hosts = tuple(h.strip() for h in found.get("no", "").split(",") if h.strip())
        return cls(
            http=url("http"), https=url("https"), all=url("all"), no_proxy=hosts, trust=trust
        )

    def for_url(self, url: str) -> str | None:
        """The proxy URL a request to ``url`` goes through, or None (directly, as a loopback
        URL always is: see the module's docstring)."""
        if self.http is None and self.https is None and self.all is None:
            return None
        parts = urlsplit(url)
        scheme, host = parts.scheme.lower(), (parts.hostname or "").lower()
        if self.loopback_direct and is_loopback_host(host):
            return None
        if any(_bypasses(entry.lower(), scheme, host, parts.port) for entry in self.no_proxy):
            return None
        by_scheme = {"http": self.http, "https": self.https}.get(scheme)
        return by_scheme or self.all


NO_PROXIES = ProxyRoutes()


def _bypasses(entry: str, scheme: str, host: str, port: int | None) -> bool:
    """Whether one ``NO_PROXY`` entry exempts ``scheme://host:port``."""
    if entry == "*":
        return True
    if "://" in entry:  # "http://example.com": that scheme and host exactly
        given = urlsplit(entry)
        same_port = given.port is None or given.port == port
        return given.scheme in (scheme, "all") and given.hostname == host and same_port
    if _is_ip(entry.strip("[]")) or entry == "localhost":
        return host == entry.strip("[]")
    given = urlsplit("//" + entry)
    name = given.hostname or ""
    if given.port is not None and given.port != port:
        return False
    if name.startswith("."):  # ".example.com": its subdomains only
        return host.endswith(name)
    return host == name or host.endswith("." + name)  # the host and its subdomains


def is_loopback_host(host: str) -> bool:
    """Whether ``host`` (a URL's host, brackets removed) names this machine's loopback."""
    name = host.lower().removesuffix(".")
    if name == "localhost" or name.endswith(".localhost"):
        return True
    try:
        address = ipaddress.ip_address(name)
    except ValueError:
        address = None
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped.is_loopback
    if address is not None:
        return address.is_loopback
    try:  # the legacy forms getaddrinfo still reads as an IPv4 address: 127.1, 0x7f.1
        return socket.inet_aton(name)[0] == 127
    except OSError:
        return False


def _is_ip(text: str) -> bool:
    try:
        ipaddress.ip_address(text)
    except ValueError:
        return False
    return True
