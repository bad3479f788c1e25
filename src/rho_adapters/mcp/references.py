"""``${NAME}`` references in a server's ``env`` and ``headers``, resolved at start.

A config file names secrets, it does not hold them: ``Authorization: Bearer ${TICKETS_TOKEN}``
or ``bearer_token_env: TICKETS_TOKEN`` read the variable when the server starts. An unset
variable is an error naming the server and the setting, never an empty credential sent.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from rho_domain.errors import ConfigError
from rho_domain.mcp_config import McpServerConfig

_REFERENCE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


def resolve(value: str, environ: Mapping[str, str], *, where: str) -> str:
    """``value`` with each ``${NAME}`` replaced by ``environ[NAME]``. Raises ConfigError
    naming ``where`` for an unset or empty variable."""

    def one(match: re.Match[str]) -> str:
        name = match.group(1)
        found = environ.get(name)
        if not found:
            raise ConfigError(f"{where} names ${{{name}}}, which is unset or empty: export it")
        return found

    return _REFERENCE.sub(one, value)


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
        headers["Authorization"] = f"Bearer {token}"
    return headers
