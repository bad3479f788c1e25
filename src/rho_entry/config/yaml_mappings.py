"""The shared reading of rho-agent's YAML files (agent configs, permission profiles): a YAML
mapping read with the safe loader, its stdio MCP servers anchored to the file's directory,
and structured by one strict cattrs converter (``forbid_extra_keys``, no silent ``str(5)`` or
``bool("no")`` coercions) into a frozen value; every problem a ``ConfigError`` naming the
file, the key path and what was expected. yaml and cattrs are imported inside the functions,
so that ``rho-agent --help`` stays fast."""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rho_domain.errors import ConfigError

if TYPE_CHECKING:
    import cattrs


def read_yaml_mapping(path: str | Path, what: str) -> dict[str, Any]:
    """The YAML mapping in the file at ``path`` (empty for an empty file); ``what`` the file
    is, for the ``ConfigError`` of anything else."""
    from rho_entry.config.yaml_text import read_yaml_file

    data = read_yaml_file(path, where=str(path), what=what)
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: {what} must be a YAML mapping, got {type(data).__name__}")
    return data


def structure(data: Mapping[str, Any], cls: type[Any], source: str | Path) -> Any:
    """``data`` as a ``cls`` by the strict converter; every problem one ``ConfigError``
    naming ``source`` and each key path."""
    import cattrs

    try:
        return converter().structure(dict(data), cls)
    except ConfigError as exc:
        raise ConfigError(f"{source}: {exc}") from exc
    except cattrs.BaseValidationError as exc:
        problems = "; ".join(
            cattrs.transform_error(exc, path="profile", format_exception=_describe)
        )
        raise ConfigError(f"{source}: {problems}") from exc


def anchor_servers(data: dict[str, Any], path: str | Path) -> None:
    """Give the stdio servers ``data`` declares the file's directory as their ``cwd``
    (``mcp_servers.anchored``), in the config and in an inline profile."""
    from rho_entry.config.mcp_servers import anchored

    if "mcp_servers" in data:
        data["mcp_servers"] = anchored(data["mcp_servers"], path)
    profile = data.get("profile")
    if isinstance(profile, dict) and "mcp_servers" in profile:
        profile["mcp_servers"] = anchored(profile["mcp_servers"], path)


def _describe(exc: BaseException, type_: Any) -> str:
    from rho_adapters.codec import what_would_be_right

    right = what_would_be_right(exc, type_)
    if right is not None:
        return right
    if isinstance(exc, KeyError):
        return "required key missing"
    name = getattr(type_, "__name__", None) or str(type_).replace("typing.", "")
    detail = f" ({exc})" if isinstance(exc, ValueError | TypeError) and str(exc) else ""
    return f"expected {name}{detail}"


@cache
def converter() -> cattrs.Converter:
    """The strict converter (unknown keys refused), built once on first use."""
    from rho_adapters.codec import make_converter

    return make_converter(forbid_extra_keys=True)
