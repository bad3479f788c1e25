"""The config directory rule, in one standard-library-only leaf module.

``$RHO_AGENT_HOME``, else ``$XDG_CONFIG_HOME/rho-agent``, else ``~/.config/rho-agent``. Every
caller (settings, databases.yaml lookup, wiring, monitor, CLI) passes its environment mapping in.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path


def config_dir(env: Mapping[str, str]) -> Path:
    """``$RHO_AGENT_HOME``, else ``$XDG_CONFIG_HOME/rho-agent``, else ``~/.config/rho-agent``."""
    if env.get("RHO_AGENT_HOME"):
        return Path(env["RHO_AGENT_HOME"]).expanduser()
    base = env.get("XDG_CONFIG_HOME") or str(Path("~/.config").expanduser())
    return Path(base) / "rho-agent"


def sessions_dir(env: Mapping[str, str]) -> Path:
    """Where the file store keeps sessions: ``<config dir>/sessions``."""
    return config_dir(env) / "sessions"
