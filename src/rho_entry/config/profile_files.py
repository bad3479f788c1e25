"""Permission profile YAML: our field names and the public implementation's nested forms
(``shell: {mode: ...}``, ``approval: {mode, required_tools}``), ``base:`` a built-in profile,
strictly validated (``yaml_mappings``); and the one lookup of a profile by name or path
(``resolve_profile``)."""

from __future__ import annotations

from collections.abc import Mapping
from enum import Enum
from pathlib import Path
from typing import Any

from rho_domain.errors import ConfigError
from rho_domain.permissions import (
    BUILTIN_PROFILES,
    ApprovalMode,
    DatabaseMode,
    FileWriteMode,
    PermissionProfile,
    ShellMode,
    builtin_profile,
)
from rho_entry.config.home import expanded
from rho_entry.config.mcp_servers import refuse_cut_denies

# The public implementation's nested profile forms, flattened to our field names.
_NESTED = {"shell": "mode", "file_write": "mode", "database": "mode"}
_MODES: dict[str, type[Enum]] = {
    "shell": ShellMode,
    "file_write": FileWriteMode,
    "database": DatabaseMode,
    "approval": ApprovalMode,
}
_APPROVAL_KEYS = {
    "mode": "approval",
    "required_tools": "approval_required_tools",
    "dangerous_patterns": "dangerous_patterns",
}


def load_profile_file(path: str | Path) -> PermissionProfile:
    """Read a custom permission profile YAML. Accepts our field names and the public
    implementation's nested forms (``shell: {mode: ...}``, ``approval: {mode, required_tools}``);
    ``base: developer`` starts from a built-in profile."""
    # YAML and cattrs with the first profile file: a built-in profile is resolved without them
    from rho_entry.config.yaml_mappings import anchor_servers, read_yaml_mapping

    data = read_yaml_mapping(path, "a permission profile")
    anchor_servers(data, path)
    return profile_from_dict(data, source=str(path), default_name=Path(path).stem)


def profile_from_dict(
    data: Mapping[str, Any], *, source: str, default_name: str = "custom"
) -> PermissionProfile:
    """Validate a profile mapping (see ``load_profile_file``)."""
    from rho_entry.config.yaml_mappings import converter, structure

    flat: dict[str, Any] = {}
    base: PermissionProfile | None = None
    for key, value in data.items():
        if key == "base":
            if not isinstance(value, str) or value not in BUILTIN_PROFILES:
                raise ConfigError(
                    f"{source}: profile.base: expected a built-in profile name "
                    f"({', '.join(sorted(BUILTIN_PROFILES))})"
                )
            base = builtin_profile(value)
        elif key == "profile":
            flat["name"] = value
        elif key in _NESTED and isinstance(value, Mapping):
            flat.update(_unnest(value, key, source))
        elif key == "approval" and isinstance(value, Mapping):
            for sub, sub_value in value.items():
                if sub not in _APPROVAL_KEYS:
                    raise ConfigError(
                        f"{source}: profile.approval.{sub}: unknown key; expected one of "
                        f"{', '.join(_APPROVAL_KEYS)}"
                    )
                flat[_APPROVAL_KEYS[sub]] = sub_value
        else:
            flat[key] = value
    if flat.get("file_write") is False:  # YAML 1.1 reads a bare `off` as false
        flat["file_write"] = FileWriteMode.OFF.value
    for key, mode in _MODES.items():
        if isinstance(flat.get(key), str):
            flat[key] = _mode_value(flat[key], mode)
    if base is not None:
        merged = converter().unstructure(base)
        merged["name"] = default_name  # the file's own name, not the base's
        if isinstance(flat.get("limits"), Mapping):  # a limit not named keeps the base's
            flat["limits"] = {**merged["limits"], **flat["limits"]}
        merged.update(flat)
        flat = merged
    flat.setdefault("name", default_name)
    profile: PermissionProfile = structure(flat, PermissionProfile, source)
    _refuse_misspelt_tools(profile, source)
    refuse_cut_denies(f"{source}: profile.", profile.mcp_servers, profile.denied_tools)
    if profile.approval is ApprovalMode.GRANULAR and not profile.approval_required_tools:
        raise ConfigError(
            f"{source}: profile.approval.required_tools: granular approval needs the tools to "
            "ask about (or use mode: dangerous, which asks before every call its tool declares "
            "dangerous)"
        )
    return profile


# The names other agents and the profile's own keys give the built-in tools: `denied_tools:
# [shell]` (the key is `shell:`, the tool `bash`) denied nothing and left the shell running.
_SHELL = "the shell tool is 'bash' (shell: restricted narrows it; deny 'bash' to remove it)"
_OTHER_NAMES = {
    **dict.fromkeys(
        ("shell", "sh", "terminal", "run_command", "execute_command", "run_shell_command"),
        _SHELL,
    ),
    "read_file": "did you mean 'read'?",
    "write_file": "did you mean 'write'?",
    "edit_file": "did you mean 'edit'?",
    **dict.fromkeys(("list_dir", "list_directory", "list_files"), "did you mean 'list'?"),
    **dict.fromkeys(
        ("sql", "database", "db"),
        "the database tools are named after their engine: sqlite, postgres, mysql, oracle, vertica",
    ),
}


def _refuse_misspelt_tools(profile: PermissionProfile, source: str) -> None:
    """``ConfigError`` for a tool name one slip away from a built-in tool's (``bsh``,
    ``Bash``, ``raed``): it named no tool, so ``denied_tools: [bsh]`` denied nothing and
    ``approval_required_tools: [raed]`` asked nothing, without a word. Other names may be
    an embedder's own tools or an MCP server's (``mcp__SERVER__TOOL``) and are kept."""
    import difflib

    from rho_domain.tools.factory import BUILT_IN_TOOL_NAMES as KNOWN

    for field in ("denied_tools", "approval_required_tools"):
        for name in sorted(getattr(profile, field)):
            if name in KNOWN or name.startswith("mcp__"):
                continue
            meant = _OTHER_NAMES.get(name.lower().replace("-", "_"))
            if meant is not None:
                raise ConfigError(
                    f"{source}: profile.{field}: no tool is named {name!r}: {meant}; a name "
                    "that is no tool's applies to nothing"
                )
            near = difflib.get_close_matches(name, KNOWN, n=3, cutoff=0.7)
            near = [k for k in near if abs(len(k) - len(name)) <= 1]
            same = [k for k in KNOWN if k == name.lower().replace("-", "_")]
            if same or near:
                raise ConfigError(
                    f"{source}: profile.{field}: no tool is named {name!r} (did you mean "
                    f"{(same or near)[0]!r}?); a name that is no tool's applies to nothing"
                )


def resolve_profile(spec: str | PermissionProfile, *, config_dir: Path | None) -> PermissionProfile:
    """A profile from a built-in name, a YAML path, or ``<config dir>/profiles/NAME.yaml``.

    The one lookup of a permission profile (facade, settings, REPL). Built-in names win over
    same-named files (they cannot be shadowed by accident).
    """
    if isinstance(spec, PermissionProfile):
        return spec
    if spec in BUILTIN_PROFILES:
        return builtin_profile(spec)
    candidate = expanded(spec)
    if candidate.suffix in {".yaml", ".yml"} or candidate.is_file():
        if not candidate.is_file():
            raise ConfigError(f"profile file {spec!r} does not exist")
        return load_profile_file(candidate)
    if config_dir is not None:
        for suffix in (".yaml", ".yml"):
            named = config_dir / "profiles" / f"{spec}{suffix}"
            if named.is_file():
                return load_profile_file(named)
    raise ConfigError(_unknown_profile(spec, config_dir))


def _unknown_profile(spec: str, config_dir: Path | None) -> str:
    """What to say of a profile name that is no built-in's nor a saved file's: the close
    name meant (``readonyl``, ``Ops`` for a saved ``ops.yaml``), then every choice."""
    import difflib

    saved = sorted(p.stem for p in (config_dir / "profiles").glob("*.y*ml")) if config_dir else []
    names = {name.lower(): name for name in [*sorted(BUILTIN_PROFILES), *saved]}
    near = difflib.get_close_matches(spec.lower(), names, n=1, cutoff=0.7)
    meant = f" (did you mean {names[near[0]]!r}?)" if near else ""
    where = f" or {config_dir / 'profiles' / (spec + '.yaml')}" if config_dir else ""
    return (
        f"unknown profile {spec!r}{meant}: use one of {', '.join(names.values())}, "
        f"a path to a profile YAML file{where}"
    )


def _unnest(value: Mapping[str, Any], key: str, source: str) -> dict[str, Any]:
    extra = sorted(set(value) - {"mode"})
    if extra:
        raise ConfigError(f"{source}: profile.{key}.{extra[0]}: unknown key; expected only 'mode'")
    return {key: value.get("mode")}


def _mode_value(value: str, mode: type[Enum]) -> str:
    """A mode as written in YAML, in any case, with ``_`` or ``-`` (``create_only``, the
    design documents' spelling, is ``create-only``); unknown values are left for the error."""
    spelled = value.strip().lower().replace("_", "-")
    known = {str(m.value) for m in mode}
    return spelled if spelled in known else value
