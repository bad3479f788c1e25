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

import re

from rho_domain.errors import ConfigError
from rho_domain.url_logins import hide_url_logins


def check_endpoint_url(text: str, key: str) -> None:
    """Raise ConfigError naming ``key`` unless ``text`` is an http(s) URL with a host and,
    if it gives one, a port from 1 to 65535, without a control character (a line break, a
    tab). The URL is shown with its password hidden."""
    cut = _cut_login(text)
    # the refusal goes to terminals and logs: a cut login is hidden up to its last '@'
    shown = repr(
        re.sub(_LOGIN_TO_LAST_AT, r"\1:***@", text, count=1) if cut else hide_url_logins(text)
    )
    if cut:
        raise ConfigError(
            f"{key} {shown}: its password holds a '/', '?' or '#', where a URL's login ends "
            "(the host would be read as the user's name, the password as a port, a path or a "
            "fragment): percent-encode them in the password (%2F, %3F, %23)"
        )
    from urllib.parse import urlsplit  # with ipaddress: not for a config that names no URL

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


# A login whose password holds a raw '/', '?' or '#': a URL parser ends the authority there.
# The user's name has none of them; the password runs to an '@' before any later '/'.
_CUT_LOGIN = r"[A-Za-z][A-Za-z0-9+.-]*://[^/?#@\s:]*:[^/?#@\s]*[/?#][^/@\s]*@"
_LOGIN_TO_LAST_AT = r"^([A-Za-z][A-Za-z0-9+.-]*://[^/?#@\s:]*):\S*@"


def _cut_login(text: str) -> bool:
    """Whether ``text``'s login was cut by a raw '/', '?' or '#' in its password: the parsed
    authority holds no '@' although the text reads as ``scheme://user:pass...@``. Before,
    ``http://user:pa#ss@host/v1`` was refused for its port ("pa"), the password shown in the
    clear, and ``http://user:123#ss@host/v1`` accepted: requests went to the host "user"."""
    if "@" not in text or re.match(_CUT_LOGIN, text) is None:
        return False
    from urllib.parse import urlsplit

    try:
        return "@" not in urlsplit(text).netloc
    except ValueError:  # an open bracket: refused as such after
        return False


def path_segment(text: str) -> str:
    """``text`` as one segment of a URL's path, whatever it holds: every ``/``, ``?``, ``#``
    and ``%`` escaped, and ``.`` or ``..`` spelled ``%2E`` (still dot segments when quoted,
    httpx resolves them: ``sandbox/../../admin`` is ``/admin``)."""
    from urllib.parse import quote

    quoted = quote(text, safe="")
    return quoted.replace(".", "%2E") if quoted in (".", "..") else quoted
