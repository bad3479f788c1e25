"""Where a running server's token is kept for its user: ``<config dir>/server/<host>-<port>.token``.

``rho-agent serve`` generates a token per start (unless ``RHO_AGENT_SERVER_TOKEN`` gives one)
and writes it here, one file per address it listens on, so that ``rho-agent --server URL``
and ``AgentClient(URL)`` of the same user find it by URL without anyone typing it. The
directory is 0700 and the file 0600, written whole into an unnamed file then renamed over the
old one (``rho_adapters.unnamed``; atomic: a reader sees the old token or the new, never half
of one, and a server killed while writing leaves no copy under another name); the server
removes it when it stops. Standard library only (``unnamed`` is too, imported to write).
"""

from __future__ import annotations

import contextlib
import os
import secrets
import stat
from collections.abc import Mapping
from pathlib import Path
from urllib.parse import urlsplit

from rho_domain.errors import ConfigError
from rho_entry.config.home import config_dir
from rho_entry.server.authority import DEFAULT_PORTS, LOOPBACK_HOSTS, host_name
from rho_entry.server.settings import TOKEN_VARIABLE

# A client of a loopback URL may reach a server that listens on another loopback name or on
# every address; its file is named after what the server bound.
_LOOPBACK_BINDS = ("127.0.0.1", "localhost", "::1", "0.0.0.0", "::")  # noqa: S104
_MAX_TOKEN_BYTES = 4096


def token_path(home: Path, host: str, port: int) -> Path:
    """The file of the server bound to ``host:port`` (IPv6 addresses in brackets)."""
    name = f"[{host}]" if ":" in host else host
    return home / "server" / f"{name}-{port}.token"


def write_token(home: Path, host: str, port: int, token: str) -> Path:
    """Write ``token`` for ``host:port``, readable by this user only; returns the path.
    Raises ``ConfigError`` naming the path when it cannot (a symlinked or foreign
    directory included)."""
    path = token_path(home, host, port)
    folder = path.parent
    temporary = folder / f".{path.name}.{secrets.token_hex(8)}"
    try:
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        info = folder.lstat()
        if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.geteuid():
            raise ConfigError(f"{folder} must be a directory of this user, not a link")
        os.chmod(folder, 0o700, follow_symlinks=False)
        _write(folder, temporary.name, path.name, f"{token}\n".encode())
    except OSError as exc:
        with contextlib.suppress(OSError):
            temporary.unlink()
        raise ConfigError(f"cannot write the server's token file {path}: {exc}") from exc
    return path


def _write(folder: Path, temporary: str, name: str, data: bytes) -> None:
    """``data`` as the file ``name`` in ``folder``, 0600 whatever the umask, replaced whole
    (``rho_adapters.unnamed.replace_whole``: a server killed while writing left the token in
    a temp file for good)."""
    from rho_adapters import unnamed

    def fill(descriptor: int) -> None:
        os.fchmod(descriptor, 0o600)  # whatever the umask
        unnamed.write_all(descriptor, data)
        os.fsync(descriptor)

    where = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    try:
        unnamed.replace_whole(where, name, temporary, 0o600, fill)
    finally:
        os.close(where)


def remove_token(path: Path, token: str) -> None:
    """Remove ``path`` if it still holds ``token`` (a newer server's file is left alone)."""
    if _read(path) == token:
        with contextlib.suppress(OSError):
            path.unlink()


def find_token(url: str, env: Mapping[str, str]) -> str | None:
    """The token to send to the server at ``url``: ``RHO_AGENT_SERVER_TOKEN``, else the
    file a server of this user's config directory wrote for that address, else None."""
    if env.get(TOKEN_VARIABLE):
        return env[TOKEN_VARIABLE]
    parts = urlsplit(url)
    try:
        port = parts.port or DEFAULT_PORTS.get(parts.scheme)
    except ValueError:
        return None
    host = host_name(parts.hostname or "")
    if host is None or port is None:
        return None
    hosts = [host, *_LOOPBACK_BINDS] if host in LOOPBACK_HOSTS else [host]
    home = config_dir(env)
    for candidate in dict.fromkeys(hosts):
        token = _read(token_path(home, candidate, port))
        if token:
            return token
    return None


def _read(path: Path) -> str | None:
    """The token in ``path``, or None when there is no such regular file of this user (a
    link is not followed). Opened without blocking: a FIFO under the file's name blocked
    the open for good, and with it ``rho-agent --server URL``, ``AgentClient(URL)`` and a
    server's exit (``remove_token``)."""
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        info = os.fstat(descriptor)
        if not stat.S_ISREG(info.st_mode) or info.st_uid != os.geteuid():
            return None  # another user's file is no token this user's server wrote
        return os.read(descriptor, _MAX_TOKEN_BYTES).decode("utf-8", "replace").strip() or None
    finally:
        os.close(descriptor)
