"""The login a URL may carry (``scheme://user:PASSWORD@host``), found in any text.

A base URL, an MCP server's URL, a dsn or a proxy may hold a password; a driver or HTTP
library may quote one in its error. Every place that shows or keeps such text (a stored config,
an error the model and the trace read, the run header) hides it with these two functions. The
login is matched in the text, not parsed: ``urlsplit`` raises on a port that is not a number or
an unclosed bracket, and an error quotes what could not be parsed. Only the authority counts
(``https://host/a:b@c`` is a path); the login ends at the authority's last ``@``, as a URL
parser reads it, so a password holding an ``@`` is hidden whole. The pattern is compiled
(and cached by ``re``) with the first text holding an ``@``, not at import.
"""

from __future__ import annotations

import re

_LOGIN = r"(?P<user>[A-Za-z][A-Za-z0-9+.-]*://[^/?#@\s:]*):[^/?#\s]*@"


def hide_url_logins(text: str) -> str:
    """``text`` with each URL's password shown as ``***`` (``http://user:***@host``)."""
    return re.sub(_LOGIN, r"\g<user>:***@", text) if "@" in text else text


def has_url_login(text: str) -> bool:
    """Whether ``text`` holds a URL with a password (a ``DATABASE_URL``, a proxy's login)."""
    return "@" in text and re.search(_LOGIN, text) is not None


def drop_url_logins(text: str) -> str:
    """``text`` with each URL's password removed (``http://user@host``): a kept config's
    URL still names the user, and asks for the password where one is needed."""
    return re.sub(_LOGIN, r"\g<user>@", text) if "@" in text else text
