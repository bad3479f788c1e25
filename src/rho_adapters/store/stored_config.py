"""A config as a session keeps it (config.yaml, the PostgreSQL store's record): without
secrets and without ``store``.

Keys named like secrets are dropped (``auth_token`` yes, ``max_tokens`` no; ``*_env`` keys
name environment variables and are kept), a URL's password, its query's literal secrets
(``?api_key=...``) and a dsn's are removed, and ``headers`` lose a literal credential;
each drop is logged on ``rho_adapters.store``.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping
from typing import Any

from rho_domain.url_logins import drop_url_logins

log = logging.getLogger("rho_adapters.store")

# A key is secret when its last word is one of these (``auth_token`` yes, ``max_tokens`` no;
# ``password_env`` names a variable and ends in ``env``, so it is kept). String tests, not a
# regular expression: compiling one cost every session's first config snapshot ~0.2 ms.
_SECRET_WORDS = frozenset(
    {"password", "passwd", "pwd", "secret", "token", "apikey", "api_key", "credential",
     "credentials", "private_key", "access_key"}
)  # fmt: skip
_SECRET_ENDINGS = tuple(sorted("_" + word for word in _SECRET_WORDS))


def _secret_key(lowered: str) -> bool:
    """True when the (lowercased) key's last word is a secret's."""
    # One trailing newline is ignored, as the ``$`` of the expression this replaces did.
    key = lowered.removesuffix("\n")
    return key in _SECRET_WORDS or key.endswith(_SECRET_ENDINGS)


def stored_config(config: dict[str, Any]) -> dict[str, Any]:
    """A config mapping as a session keeps it: without secrets, and without ``store`` (where
    the sessions are kept is no part of one, and its URL may hold a password)."""
    kept: dict[str, Any] = without_secrets({k: v for k, v in config.items() if k != "store"})
    return kept


def without_secrets(data: Any) -> Any:
    """A copy of a config mapping without secret values: keys named like secrets are dropped
    (``*_env`` keys name environment variables and are kept), the password of a URL (a
    ``dsn``, ``base_url``, an MCP ``url``: any ``*url`` key), its query's literal secrets
    (``_without_query_secrets``) and a keyword dsn's ``password=`` are removed, and
    ``headers`` lose a literal credential (``Authorization: Bearer sk-...``;
    one naming its token by ``${VAR}`` holds none and is kept)."""
    if isinstance(data, Mapping):
        kept: dict[str, Any] = {}
        for key, value in data.items():
            lowered = str(key).lower()
            if _secret_key(lowered):
                log.warning("not saving %r in the session's config.yaml: it looks secret", key)
                continue
            if lowered == "headers" and isinstance(value, Mapping):
                kept[key] = _headers(value)
            elif lowered == "dsn" or lowered.endswith("url"):
                kept[key] = _strip_login(value, keywords=lowered == "dsn")
            else:
                kept[key] = without_secrets(value)
        return kept
    if isinstance(data, list):
        return [without_secrets(v) for v in data]
    return data


# A keyword dsn's password (libpq's password=..., ODBC's PWD=...), quoted or bare; compiled
# (and cached by re) with the first dsn holding an "=", not at import.
_KEYWORD_LOGIN = r"(?i)(?:^|\s+)(?:password|pwd)\s*=\s*(?:'(?:[^'\\]|\\.)*'|[^\s;]+)"
# Oracle's user/password@connect-string (python-oracledb reads the password from it).
_SLASH_LOGIN = r"^(\s*[^/@\s:=]+)/[^@\s]*@"
_CREDENTIAL_HEADERS = frozenset(
    {"authorization", "proxy-authorization", "cookie", "x-api-key", "api-key", "x-auth-token"}
)


def _strip_login(value: Any, *, keywords: bool) -> Any:
    if not isinstance(value, str):
        return value
    value = drop_url_logins(value)  # matched, not parsed: a dsn need not parse
    if "://" in value:
        return _without_query_secrets(value)
    if not keywords:
        return value
    if "=" in value:
        value = re.sub(_KEYWORD_LOGIN, "", value).strip()
    return re.sub(_SLASH_LOGIN, r"\1@", value) if "@" in value else value


def _without_query_secrets(url: str) -> str:
    """``url`` without the query parameters that hold a literal secret: named like a secret
    key (``password``, ``api_key``, ``access_token``, ``apiKey``) or ``key`` (an API key's
    usual name in a query), with a value that names no ``${VAR}``: a dsn's
    ``?password=PW``, an MCP gateway's ``?api_key=...`` (write ``?api_key=${MCP_KEY}``)."""
    head, asked, rest = url.partition("?")
    if not asked:
        return url
    query, hashed, fragment = rest.partition("#")
    kept = [param for param in query.split("&") if not _secret_param(param)]
    if len(kept) < len(query.split("&")):
        log.warning("not saving a secret query parameter of a URL in the session's config.yaml")
    kept_query = "&".join(part for part in kept if part)
    return head + (f"?{kept_query}" if kept_query else "") + hashed + fragment


def _secret_param(param: str) -> bool:
    name, given, value = param.partition("=")
    lowered = name.lower().replace("-", "_")
    return bool(given) and "${" not in value and (lowered == "key" or _secret_key(lowered))


def _headers(headers: Mapping[Any, Any]) -> dict[Any, Any]:
    kept: dict[Any, Any] = {}
    for name, value in headers.items():
        lowered = str(name).lower()
        named = lowered in _CREDENTIAL_HEADERS or _secret_key(lowered.replace("-", "_"))
        if named and not (isinstance(value, str) and "${" in value):
            log.warning("not saving the header %r in the session's config.yaml: secret", name)
            continue
        kept[name] = value
    return kept
