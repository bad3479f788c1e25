"""ServerSettings: what ``rho-agent serve`` and ``create_app`` are allowed to do.

Read from the environment once, by ``ServerSettings.from_environ`` (the entry layer's job);
``create_app`` takes the frozen value, so a service that mounts the app passes its own.

==============================  ==================================================  =========
variable                        meaning                                             default
==============================  ==================================================  =========
RHO_AGENT_SERVER_TOKEN          bearer token every request must carry; required     generated
                                for any bind that is not loopback                   per start
RHO_AGENT_SERVER_ROOTS          directories (``:``-separated) a session's           the cwd
                                working directory must lie in
RHO_AGENT_SERVER_PROFILES       profiles a client may pick (``,``-separated)        readonly
RHO_AGENT_SERVER_MAX_RUNS       runs in progress at once; more get 429              32
RHO_AGENT_SERVER_MAX_STREAMS    event streams open at once; more get 429            100
RHO_AGENT_SERVER_CORS_ORIGINS   origins allowed by CORS (``,``-separated)           none (off)
RHO_AGENT_SERVER_ALLOW_HOSTS    names the ``Host`` header may carry besides the     none
                                loopback ones (``,``-separated; reverse proxies)
==============================  ==================================================  =========
"""

from __future__ import annotations

import ipaddress
import os
from collections.abc import Mapping
from pathlib import Path

import attrs

from rho_domain.errors import ConfigError
from rho_domain.value_methods import value_eq, value_hash, value_repr
from rho_entry.config.home import current_dir, expanded
from rho_entry.server.authority import host_name

TOKEN_VARIABLE = "RHO_AGENT_SERVER_TOKEN"  # noqa: S105 - the variable's name, not a secret
ROOTS_VARIABLE = "RHO_AGENT_SERVER_ROOTS"
PROFILES_VARIABLE = "RHO_AGENT_SERVER_PROFILES"
MAX_RUNS_VARIABLE = "RHO_AGENT_SERVER_MAX_RUNS"
MAX_STREAMS_VARIABLE = "RHO_AGENT_SERVER_MAX_STREAMS"
CORS_VARIABLE = "RHO_AGENT_SERVER_CORS_ORIGINS"
ALLOW_HOSTS_VARIABLE = "RHO_AGENT_SERVER_ALLOW_HOSTS"
APPROVAL_HOLD_VARIABLE = "RHO_AGENT_SERVER_APPROVAL_HOLD"

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8765


@attrs.frozen(kw_only=True)
class ServerSettings:
    """The server's limits and permissions.

    Attributes:
        sessions_root: The file store's directory (``<config dir>/sessions``): the same one
            the CLI uses, so HTTP sessions are ordinary sessions.
        token: The bearer token every request must carry; None: ``create_app`` generates
            one (``app.state.token``), there is no way to serve without one.
        roots: Absolute, resolved directories; a session's working directory must be one of
            them or inside one.
        profiles: Profile names a client may ask for; the first is the default.
        max_runs: Runs in progress at once across all sessions; one more gets 429.
        max_streams: Event streams open at once across all sessions (each polls the store);
            one more gets 429 before anything is sent.
        retry_after: Seconds a 429 answer tells the client to wait.
        max_body_bytes: Largest request body accepted (413 beyond).
        body_seconds: Seconds a request body may take to arrive, from its first byte
            asked for (408 beyond): a body sent slowly, or stopped short of its declared
            length, held its handler and up to ``max_body_bytes`` of memory for good.
        keepalive_seconds: An idle event stream sends a comment this often.
        poll_seconds: How often a stream looks for new trace lines written by another process.
        cors_origins: Origins allowed by CORS; empty means CORS is off. A state-changing
            request from one of them passes the origin check too.
        allowed_hosts: Names (or addresses) the ``Host`` header may carry besides
            ``127.0.0.1``, ``localhost`` and ``::1``, with any port: the bound address and
            the names of reverse proxies. Any other Host is refused (DNS rebinding).
        event_buffer: Events a slow stream client may fall behind before it is disconnected
            (it reconnects with Last-Event-ID and loses nothing).
        answer_grace: Seconds an approval waits for the run that asked to stop (it ends a
            moment after announcing the request) before answering 409.
        shutdown_grace: Seconds a closed session, or the server stopping, gives runs to end
            after being cancelled.
        approval_hold: Seconds a session waiting for approval stays open here (an answer
            continues it at once); then it is released, the CLI can resume it, and an answer
            reopens it from the trace.
    """

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    sessions_root: Path
    token: str | None = None
    roots: tuple[Path, ...] = ()
    profiles: tuple[str, ...] = ("readonly",)
    max_runs: int = 32
    max_streams: int = 100
    retry_after: int = 1
    max_body_bytes: int = 256 * 1024
    body_seconds: float = 30.0
    keepalive_seconds: float = 15.0
    poll_seconds: float = 0.25
    cors_origins: tuple[str, ...] = ()
    allowed_hosts: tuple[str, ...] = ()
    event_buffer: int = 10_000
    answer_grace: float = 5.0
    shutdown_grace: float = 10.0
    approval_hold: float = 300.0

    def __attrs_post_init__(self) -> None:
        if not self.profiles:
            raise ConfigError(f"{PROFILES_VARIABLE}: name at least one profile")
        if self.max_runs < 1:
            raise ConfigError(f"{MAX_RUNS_VARIABLE}: must be at least 1, not {self.max_runs}")
        if self.max_streams < 1:
            raise ConfigError(f"{MAX_STREAMS_VARIABLE}: must be at least 1, not {self.max_streams}")
        for name in self.allowed_hosts:
            if host_name(name) is None:
                raise ConfigError(
                    f"{ALLOW_HOSTS_VARIABLE} / --allow-host: {name!r} is not a host name or "
                    "address (give the name alone, without scheme, port or trailing dot)"
                )

    @classmethod
    def from_environ(
        cls, env: Mapping[str, str], *, sessions_root: Path, roots: tuple[str, ...] = ()
    ) -> ServerSettings:
        """Settings from the ``RHO_AGENT_SERVER_*`` variables; a bad value is a ConfigError
        naming the variable. ``roots`` (``serve --root``), when given, replace the
        variable's; the current directory is the default root only when neither names one
        (read then: a removed one refused ``serve --root /abs`` too)."""
        origin = "--root" if roots else ROOTS_VARIABLE
        if not roots:
            roots = tuple(p for p in env.get(ROOTS_VARIABLE, "").split(os.pathsep) if p)
        if not roots:
            roots = (current_dir(f"name the roots in {ROOTS_VARIABLE} or with --root"),)
        profiles = tuple(p.strip() for p in env.get(PROFILES_VARIABLE, "").split(",") if p.strip())
        runs = _whole(env, MAX_RUNS_VARIABLE, 32)
        streams = _whole(env, MAX_STREAMS_VARIABLE, 100)
        origins = tuple(o.strip() for o in env.get(CORS_VARIABLE, "").split(",") if o.strip())
        hosts = tuple(h.strip() for h in env.get(ALLOW_HOSTS_VARIABLE, "").split(",") if h.strip())
        hold_raw = env.get(APPROVAL_HOLD_VARIABLE, "")
        try:
            hold = float(hold_raw) if hold_raw else 300.0
        except ValueError:
            raise ConfigError(
                f"{APPROVAL_HOLD_VARIABLE}={hold_raw!r}: expected seconds (a number)"
            ) from None
        if not hold >= 0:
            raise ConfigError(f"{APPROVAL_HOLD_VARIABLE}={hold_raw!r}: expected 0 or more")
        return cls(
            sessions_root=sessions_root,
            token=env.get(TOKEN_VARIABLE) or None,
            roots=check_roots(roots, origin),
            profiles=profiles or ("readonly",),
            max_runs=runs,
            max_streams=streams,
            cors_origins=origins,
            allowed_hosts=hosts,
            approval_hold=hold,
        )


def _whole(env: Mapping[str, str], variable: str, default: int) -> int:
    raw = env.get(variable, "")
    try:
        return int(raw) if raw else default
    except ValueError:
        raise ConfigError(f"{variable}={raw!r}: expected an integer") from None


def check_roots(roots: tuple[str | Path, ...], origin: str) -> tuple[Path, ...]:
    """Roots made absolute and resolved (symlinks followed); each must be a directory. A
    relative root with the current directory removed is a ConfigError naming ``origin``."""
    resolved = []
    for root in roots:
        path = expanded(root)
        if not path.is_absolute():
            path = Path(current_dir(f"give {origin} absolute paths")) / path
        path = path.resolve()
        if not path.is_dir():
            # quoted: a root of spaces (RHO_AGENT_SERVER_ROOTS=' ') was said as ":   is not"
            raise ConfigError(f"{origin}: {str(root)!r} is not a directory ({path})")
        resolved.append(path)
    return tuple(resolved)


def is_loopback(host: str) -> bool:
    """True for ``localhost`` and addresses in 127.0.0.0/8 or ``::1``."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def check_bind(host: str, settings: ServerSettings) -> None:
    """Refuse to listen beyond loopback without a token (anyone who can reach the port could
    run commands as this user)."""
    if not is_loopback(host) and settings.token is None:
        raise ConfigError(
            f"--host {host} is reachable from other machines: set {TOKEN_VARIABLE} to a long "
            "random secret (clients send it as 'Authorization: Bearer <token>'), or bind to "
            "127.0.0.1"
        )
