"""What ``rho-agent serve`` checks before it listens, so that a configuration no request could
fix ends the command with exit code 1 and a line naming the flag or variable to change, rather
than with a server that fails every request (or uvicorn's own exit code 3).
"""

from __future__ import annotations

import errno
import socket
from collections.abc import Mapping

from rho_domain.config import AgentConfig
from rho_domain.errors import ConfigError
from rho_entry.server.settings import PROFILES_VARIABLE, ServerSettings


def check_profiles(settings: ServerSettings, env: Mapping[str, str], *, flag: bool) -> None:
    """Every allowed profile must exist now: otherwise each client asking for it would get a
    422 that blames the request for the server's configuration. ``flag``: they came from
    ``--allow-profile`` (else ``RHO_AGENT_SERVER_PROFILES`` or the default)."""
    from rho_entry.config.config_files import resolve_profile
    from rho_entry.config.home import config_dir

    origin = "--allow-profile" if flag else PROFILES_VARIABLE
    for name in settings.profiles:
        try:
            resolve_profile(name, config_dir=config_dir(env))
        except ConfigError as exc:
            raise ConfigError(f"{origin} {name!r}: {exc}") from None


def check_endpoint(config: AgentConfig, env: Mapping[str, str]) -> None:
    """No base URL and no key: every run would fail calling the hosted API; say so now."""
    from rho_entry.config.settings import api_key_variable, missing_endpoint

    missing = missing_endpoint(config, env)
    if missing is not None:
        raise ConfigError(
            f"{missing}: export {api_key_variable(config, env)}=<key>, or "
            "OPENAI_BASE_URL=http://localhost:11434/v1 (any OpenAI-compatible server), or "
            "RHO_AGENT_MODEL=demo for the offline demo model"
        )


def listen(host: str, port: int) -> socket.socket:
    """The listening socket, bound before uvicorn starts (which is then given it), so that a
    busy port is a configuration error naming ``--port``."""
    try:
        family, kind, proto, _, address = socket.getaddrinfo(
            host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
        )[0]
        sock = socket.socket(family, kind, proto)
    except OSError as exc:
        raise ConfigError(f"--host {host}: {exc.strerror or exc}") from None
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
    except OSError as exc:
        sock.close()
        why = exc.strerror or str(exc)
        hint = " (another program listens there)" if exc.errno == errno.EADDRINUSE else ""
        raise ConfigError(
            f"cannot listen on {host}:{port}: {why}{hint}; choose another --port "
            "(--port 0 takes any free one)"
        ) from None
    return sock
