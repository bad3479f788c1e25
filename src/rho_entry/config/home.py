"""The config directory rule, in one standard-library-only leaf module.

``$RHO_AGENT_HOME``, else ``$XDG_CONFIG_HOME/rho-agent``, else ``~/.config/rho-agent``. Every
caller (settings, databases.yaml lookup, wiring, monitor, CLI) passes its environment mapping in.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path


def config_dir(env: Mapping[str, str]) -> Path:
    """``$RHO_AGENT_HOME``, else ``$XDG_CONFIG_HOME/rho-agent``, else ``~/.config/rho-agent``."""
    return Path(config_dir_name(env))


def config_dir_name(env: Mapping[str, str]) -> str:
    """``config_dir`` as a string, user-expanded but not normalized (``os.path.realpath``
    gives the same real path for both): a Session's wiring asks for it each time, and
    pathlib's objects cost more than the rule."""
    if env.get("RHO_AGENT_HOME"):
        return os.path.expanduser(env["RHO_AGENT_HOME"])
    base = env.get("XDG_CONFIG_HOME") or os.path.expanduser("~/.config")
    return os.path.join(base, "rho-agent")


def sessions_dir(env: Mapping[str, str]) -> Path:
    """Where the file store keeps sessions: ``<config dir>/sessions``."""
    return config_dir(env) / "sessions"
