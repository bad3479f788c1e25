"""Config files: AgentConfig YAML, strictly validated (``yaml_mappings``), and written back.

Custom permission profile YAML is read by ``profile_files`` (``load_profile_file``,
``profile_from_dict``, ``resolve_profile``, also importable from here). Every problem is a
``ConfigError`` that names the file, the key path (``config.budget.max_turns``) and what was
expected.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs

from rho_domain.config import AgentConfig
from rho_domain.errors import ConfigError
from rho_entry.config.hook_refs import POINTS as HOOK_POINTS
from rho_entry.config.mcp_servers import refuse_cut_denies
from rho_entry.config.profile_files import load_profile_file as load_profile_file
from rho_entry.config.profile_files import profile_from_dict
from rho_entry.config.profile_files import resolve_profile as resolve_profile
from rho_entry.config.yaml_mappings import anchor_servers, converter, read_yaml_mapping

__all__ = [
    "load_agent_config",
    "load_profile_file",
    "profile_from_dict",
    "resolve_profile",
    "save_agent_config",
]


def load_agent_config(path: str | Path) -> AgentConfig:
    """Read an AgentConfig YAML file. Unknown keys and wrong types are ConfigErrors."""
    from rho_adapters.codec import config_from_dict

    data = read_yaml_mapping(path, "an agent config")
    anchor_servers(data, path)
    hooks = data.get("hooks")
    if isinstance(hooks, Mapping):  # one reference may be written without its list
        # a point's only: ``timeout: "5"`` wrapped too was refused as "expected float, got
        # list", hiding the quoted number the converter explains
        data["hooks"] = {
            k: [v] if isinstance(v, str) and k in HOOK_POINTS else v for k, v in hooks.items()
        }
    if isinstance(data.get("profile"), Mapping):
        # accept the same profile forms as a profile file (nested modes, ``base:``)
        profile = profile_from_dict(data["profile"], source=f"{path}: config.profile")
        data["profile"] = converter().unstructure(profile)
    config = config_from_dict(data, source=str(path))
    refuse_cut_denies(f"{path}: ", config.mcp_servers)
    if not config.databases:
        return config
    from rho_adapters.db.config import checked  # databases.yaml's rules, naming this file

    databases = {
        alias: checked(db, where=f"{path}: databases.{alias}")
        for alias, db in config.databases.items()
    }
    return attrs.evolve(config, databases=databases)


def save_agent_config(config: AgentConfig, path: str | Path) -> None:
    """Write ``config`` as YAML (creating parent directories); load_agent_config reads it back.
    The file is replaced whole (``rho_adapters.unnamed.write_whole``): a write that fails
    midway leaves the old file as it was, its mode kept.

    Settings left at their defaults are omitted, so the file shows what was chosen. A
    PermissionProfile object is written inline as a mapping.
    """
    import yaml

    from rho_adapters.codec import config_to_dict
    from rho_adapters.unnamed import write_whole

    default = config_to_dict(AgentConfig())
    data = {k: _plain(v) for k, v in config_to_dict(config).items() if default.get(k) != v}
    target = Path(path)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        write_whole(target, yaml.safe_dump(data, sort_keys=False).encode())
    except OSError as exc:
        raise ConfigError(f"{path}: cannot write the agent config: {exc.strerror}") from exc


def _plain(value: Any) -> Any:
    """YAML-safe data: tuples become lists; None values in mappings are dropped (an absent
    key reads back as its default)."""
    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items() if v is not None}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value
