"""The check every HTTP endpoint a config names goes through before anything is sent, and
how a text that is not ours (an id a server answered, a call id the model chose) becomes one
segment of a URL's path (``path_segment``).

A model's ``base_url`` and an MCP server's ``url`` reach httpx only when the first request is
made: a port that is not a number or a bracket left open was then a raw ``httpx.InvalidURL``
traceback from inside a session (an MCP server's, at its first message), and a URL with no
host a connection error after retries; a line break (a variable read from a file) was
httpx's "Invalid non-printable ASCII character in URL" at the first call, after the session
was created, naming no setting. ``check_endpoint_url`` refuses each when the config is built,
naming its key.
"""

from __future__ import annotations

from urllib.parse import quote, urlsplit

from rho_domain.errors import ConfigError
from rho_domain.url_logins import hide_url_logins


def check_endpoint_url(text: str, key: str) -> None:
    """Raise ConfigError naming ``key`` unless ``text`` is an http(s) URL with a host and,
    if it gives one, a port from 1 to 65535, without a control character (a line break, a
    tab). The URL is shown with its password hidden."""
    shown = repr(hide_url_logins(text))  # the refusal goes to terminals and logs
    for index, char in enumerate(text):
        if char.isascii() and not char.isprintable():  # what httpx refuses, at the first call
            what = "a line break" if char in "\r\n" else f"the control character {char!r}"
            raise ConfigError(
                f"{key} {shown} has {what} at character {index + 1}: set it again without it "
                "(a variable read from a file often ends with a line break)"
            )
    try:
        parts = urlsplit(text)
    except ValueError:  # urllib's words: "Invalid IPv6 URL" (a bracket left open)
        raise ConfigError(f"{key} {shown} is not a URL (a bracket left open?)") from None
    if parts.scheme not in ("http", "https") or not parts.netloc:
        # a host[:port][/path] without its scheme, the common slip; not a mangled scheme
        bare = not any(part in text for part in ("//", ":/", " ")) and not text.startswith("/")
        guess = f" (did you mean http://{text}?)" if bare else ""
        raise ConfigError(f"{key} {shown} is not an http:// or https:// URL{guess}")
    try:
        port, host = parts.port, parts.hostname
    except ValueError:  # urllib's words: "Port out of range 0-65535", "Port could not be cast"
        raise ConfigError(f"{key} {shown}: the port must be a number from 1 to 65535") from None
    if not host:
        raise ConfigError(f"{key} {shown} names no host")
    if port == 0:
        raise ConfigError(f"{key} {shown}: the port must be a number from 1 to 65535")


def path_segment(text: str) -> str:
    """``text`` as one segment of a URL's path, whatever it holds: every ``/``, ``?``, ``#``
    and ``%`` escaped, and ``.`` or ``..`` spelled ``%2E`` (still dot segments when quoted,
    httpx resolves them: ``sandbox/../../admin`` is ``/admin``)."""
    quoted = quote(text, safe="")
    return quoted.replace(".", "%2E") if quoted in (".", "..") else quoted
