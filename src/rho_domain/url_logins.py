"""The login a URL may carry (``scheme://user:PASSWORD@host``, or a key in its query:
``?api_key=KEY``), found in any text.

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


# A query parameter holding a literal key (``?api_key=...``, ``&access_token=``, ``?key=``):
# its name's last word a secret's (``max_tokens`` is none), its value no ``${VAR}``
_QUERY_KEY = (
    r"(?i)(?P<name>[?&](?:(?:[A-Za-z0-9.]*[_-])?(?:password|passwd|pwd|secret|token|"
    r"api[_-]?key|credentials?|private_key|access_key)|key)=)(?!\$\{)[^&#\s'\"]+"
)


def hide_url_logins(text: str) -> str:
    """``text`` with each URL's password shown as ``***`` (``http://user:***@host``), and
    the value of a query parameter named as a key (``?api_key=***``)."""
    if "@" in text:
        text = re.sub(_LOGIN, r"\g<user>:***@", text)
    if "=" in text and ("?" in text or "&" in text):
        text = re.sub(_QUERY_KEY, r"\g<name>***", text)
    return text


def has_url_login(text: str) -> bool:
    """Whether ``text`` holds a URL with a password (a ``DATABASE_URL``, a proxy's login)."""
    return "@" in text and re.search(_LOGIN, text) is not None


def drop_url_logins(text: str) -> str:
    """``text`` with each URL's password removed (``http://user@host``): a kept config's
    URL still names the user, and asks for the password where one is needed."""
    return re.sub(_LOGIN, r"\g<user>@", text) if "@" in text else text
