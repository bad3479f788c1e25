"""The home directories whose credential files the secrets policy names concretely.

``machine_homes`` scans this machine's (remembered per process until /home changes);
``agent_homes`` adds the agent's own ``$HOME`` when it is another directory. Real paths, in
the order found, without repeats. ``environment_secrets``: the credential files the
environment names (``GOOGLE_APPLICATION_CREDENTIALS``, ``KUBECONFIG``...).
"""

from __future__ import annotations

import contextlib
import os
import pwd
from collections.abc import Mapping, Sequence

from rho_domain.environment_secrets import named_by_environment
from rho_domain.paths import components, is_within


def machine_homes() -> tuple[str, ...]:
    """Home directories whose credential files the policy names concretely: this user's (from
    the password database, not $HOME), root's and every directory under /home.

    Remembered per process until /home changes (its modification time, one ``stat``): a
    service opens an executor per session, and the password database and /home scan cost
    more than the rest of the executor's setup.
    """
    try:
        stamp: object = (os.getuid(), os.stat("/home").st_mtime_ns)
    except OSError:
        stamp = (os.getuid(), None)
    cached = _HOMES.get(stamp)
    if cached is not None:
        return cached
    homes = _scan_homes()
    _HOMES.clear()
    _HOMES[stamp] = homes
    return homes


_HOMES: dict[object, tuple[str, ...]] = {}  # the last scan, by its stamp


def _scan_homes(under: str = "/home") -> tuple[str, ...]:
    """This user's home, root's and every directory in ``under``, a link to one included
    (/home/alice -> /data/alice: alice's home is /data/alice, its hidden entries hers)."""
    homes: list[str] = []
    with contextlib.suppress(KeyError):
        homes.append(pwd.getpwuid(os.getuid()).pw_dir)
    homes.append("/root")
    with contextlib.suppress(OSError):
        homes.extend(e.path for e in os.scandir(under) if _is_dir(e))
    return tuple(dict.fromkeys(os.path.realpath(h) for h in homes if h))


def _is_dir(entry: os.DirEntry[str]) -> bool:
    with contextlib.suppress(OSError):
        return entry.is_dir()  # following a link
    return False


def agent_homes(env: Mapping[str, str]) -> tuple[str, ...]:
    """``machine_homes()`` plus the agent's ``$HOME`` when it is another directory (a service
    started with HOME=/srv/app keeps its credentials there)."""
    home = env.get("HOME")
    homes = machine_homes()
    if home in homes:
        # Already one of the scan's real paths (the usual $HOME): resolving it again per
        # executor would give itself, so the result is ``homes`` either way.
        return homes
    if home and home.startswith("/") and os.path.isdir(home):
        return tuple(dict.fromkeys((*homes, os.path.realpath(home))))
    return homes


def environment_secrets(env: Mapping[str, str], held: Sequence[str]) -> tuple[tuple[str, str], ...]:
    """The real paths of the credential files and directories ``env`` names
    (``rho_domain.environment_secrets``), each with the variable naming it, relative ones
    below this process's directory (where the user's programs started); a file that is a
    directory, and a directory that is or holds one of ``held`` (the roots and homes:
    ``DOCKER_CONFIG=.``), left out."""
    files, directories = named_by_environment(env)
    found = [(r, name) for f, name in files if not os.path.isdir(r := os.path.realpath(f))]
    # the roots' and homes' real paths only where a directory is named (most environments
    # name none): five ``realpath`` calls on every executor's construction otherwise
    held_parts = [components(os.path.realpath(h)) for h in held] if directories else []
    for directory, name in directories:
        real = os.path.realpath(directory)
        if real != "/" and not any(is_within(parts, components(real)) for parts in held_parts):
            found.append((real, name))
    origins: dict[str, str] = {}
    for path, name in found:
        origins.setdefault(path, f"the environment's {name}")
    return tuple(origins.items())
