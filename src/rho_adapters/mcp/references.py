"""``${NAME}`` references in a server's ``env`` and ``headers``, resolved at start.

A config file names secrets, it does not hold them: ``Authorization: Bearer ${TICKETS_TOKEN}``,
``bearer_token_env: TICKETS_TOKEN`` or ``url: https://host/mcp?key=${TICKETS_KEY}`` read the
variable when the server starts. An unset
variable is an error naming the server and the setting, never an empty credential sent.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from urllib.parse import quote

from rho_domain.errors import ConfigError
from rho_domain.header_names import headers_over
from rho_domain.mcp_config import REFERENCE, McpServerConfig


def resolve(
    value: str,
    environ: Mapping[str, str],
    *,
    where: str,
    written: Callable[[str], str] = lambda found: found,
) -> str:
    """``value`` with each ``${NAME}`` replaced by ``written(environ[NAME])``. Raises
    ConfigError naming ``where`` for an unset or empty variable."""

    def one(match: re.Match[str]) -> str:
        name = match.group(1)
        found = environ.get(name)
        if not found:
            raise ConfigError(f"{where} names ${{{name}}}, which is unset or empty: export it")
        return written(found)

    return REFERENCE.sub(one, value)


def resolved_url(name: str, server: McpServerConfig, environ: Mapping[str, str]) -> str:
    """The config's ``url`` for server ``name``, each ``${NAME}`` (in its path or query:
    ``McpServerConfig.check``) replaced by its value percent-encoded, so a key holding
    ``&``, ``+`` or ``#`` stays one value. The URL as written, the reference in it, is what
    messages name and a session stores: a key in a query string written out would be in
    every error naming the server and in the session's ``config.yaml``."""
    assert server.url is not None
    where = f"mcp_servers.{name}.url"
    return resolve(server.url, environ, where=where, written=lambda v: quote(v, safe=""))


def resolved_env(name: str, server: McpServerConfig, environ: Mapping[str, str]) -> dict[str, str]:
    """The config's ``env`` for server ``name``, references resolved."""
    return {
        key: resolve(value, environ, where=f"mcp_servers.{name}.env.{key}")
        for key, value in server.env.items()
    }


def resolved_headers(
    name: str, server: McpServerConfig, environ: Mapping[str, str]
) -> dict[str, str]:
    """The config's ``headers`` for server ``name``, references resolved, and the bearer
    token of ``bearer_token_env`` as ``Authorization``."""
    headers = {
        key: resolve(value, environ, where=f"mcp_servers.{name}.headers.{key}")
        for key, value in server.headers.items()
    }
    if server.bearer_token_env:
        token = environ.get(server.bearer_token_env)
        if not token:
            raise ConfigError(
                f"mcp_servers.{name}.bearer_token_env names {server.bearer_token_env!r}, which "
                "is unset or empty: export it"
            )
        # over a configured one in any case (the config check refuses both: a library
        # caller may not have run it)
        return headers_over(headers, {"Authorization": f"Bearer {token}"})
    return headers
