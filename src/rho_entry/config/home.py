"""The config directory rule, and the current directory, in one leaf module (the standard
library and the error tree).

``$RHO_AGENT_HOME`` (absolute, or refused), else ``$XDG_CONFIG_HOME/rho-agent`` (when
absolute, as the XDG specification has it), else ``~/.config/rho-agent``. Every
caller (settings, databases.yaml lookup, wiring, monitor, CLI) passes its environment mapping in.
Every default working directory (an unset or relative ``working_dir``, a server's roots) is
``current_dir``'s, so that a current directory that was deleted is one clear error.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from rho_domain.errors import ConfigError


def config_dir(env: Mapping[str, str]) -> Path:
    """``$RHO_AGENT_HOME``, else ``$XDG_CONFIG_HOME/rho-agent``, else ``~/.config/rho-agent``."""
    return Path(config_dir_name(env))


def config_dir_name(env: Mapping[str, str]) -> str:
    """``config_dir`` as a string, user-expanded but not normalized (``os.path.realpath``
    gives the same real path for both): a Session's wiring asks for it each time, and
    pathlib's objects cost more than the rule."""
    if home := env.get("RHO_AGENT_HOME"):
        if not home.strip():
            # taken as a path, "  " made a directory of that name in the current directory
            # (the workspace, usually) and kept every session's trace there
            raise ConfigError(
                f"RHO_AGENT_HOME={home!r} holds only spaces: unset it (the default, "
                "$XDG_CONFIG_HOME/rho-agent or ~/.config/rho-agent, is then used) or give the "
                "config directory's path"
            )
        return _absolute_home(home)
    return os.path.join(xdg_config_home(env) or os.path.expanduser("~/.config"), "rho-agent")


def _absolute_home(home: str) -> str:
    """``$RHO_AGENT_HOME`` user-expanded, refused unless absolute. A relative one was taken
    from the current directory of each lookup (every Session's wiring looks again): the
    workspace, usually, so every trace was kept in the repository under investigation, and a
    long-lived process whose directory changed kept its sessions somewhere else after it. An
    unknown ``~user`` was left as written, a directory of that name made there."""
    full = os.path.expanduser(home)
    if os.path.isabs(full):
        return full
    if full.startswith("~"):
        problem = f"{full.split(os.sep, 1)[0]} names no user's home directory on this host"
    else:
        problem = "it is relative (to whichever directory the process is in, the workspace usually)"
    raise ConfigError(
        f"RHO_AGENT_HOME={home!r}: {problem}; give the config directory's absolute path"
    )


def expanded(path: str | os.PathLike[str], *, by: str = "") -> Path:
    """``path`` with a leading ``~`` or ``~user`` expanded. Refused (``ConfigError`` naming
    the path) when ``~user`` names no user here: ``Path.expanduser`` raised a bare
    ``RuntimeError("Could not determine home directory.")`` that named neither the path nor
    the setting, and the CLI ended on an internal error. ``by`` names the setting that gave
    it, when the caller's refusals do not already."""
    return Path(expanded_text(os.fspath(path), by=by))


def expanded_text(text: str, *, by: str = "") -> str:
    """``expanded`` as a string, not normalised."""
    done = os.path.expanduser(text)
    if done.startswith("~"):
        user = done.split(os.sep, 1)[0]
        given = f" (set by {by})" if by else ""
        raise ConfigError(
            f"{text}{given}: {user} names no user's home directory on this host (HOME unset, or no "
            "such user); write the path out"
        )
    return done


def xdg_config_home(env: Mapping[str, str]) -> str | None:
    """``$XDG_CONFIG_HOME`` when it is an absolute path, else None. The XDG specification
    has a relative one ignored: it was taken relative to the current directory, usually the
    workspace, and every session's trace was kept inside the repository under investigation,
    where the agent read it back."""
    xdg = env.get("XDG_CONFIG_HOME")
    return xdg if xdg and os.path.isabs(xdg) else None


def sessions_dir(env: Mapping[str, str]) -> Path:
    """Where the file store keeps sessions: ``<config dir>/sessions``."""
    return config_dir(env) / "sessions"


_NAME_ONE = "name the workspace with --working-dir (AgentConfig.working_dir)"


def current_dir(name_one: str = _NAME_ONE) -> str:
    """The process's current directory. Raises ``ConfigError`` when it no longer exists (a
    shell still in a directory that was removed), saying to ``name_one`` instead, where
    ``os.getcwd`` raised a bare FileNotFoundError that named nothing."""
    try:
        return os.getcwd()
    except FileNotFoundError:
        raise ConfigError(
            "the current directory no longer exists (it was removed while this shell was in "
            f"it): cd to an existing directory, or {name_one}"
        ) from None


def absolute(path: str) -> str:
    """``path`` user-expanded and made absolute against ``current_dir`` (not normalised)."""
    full = expanded_text(path)
    return full if os.path.isabs(full) else os.path.join(current_dir(), full)
