"""MCP servers from configuration: ``--mcp-config FILE``, and the tool source a session gets.

The servers come from the agent config (``mcp_servers:`` in its YAML, or the file
``--mcp-config`` names, whose servers are added to the config's) and from the profile
(``rho_domain.mcp_config.servers_to_start``: a read-only profile starts only the servers it
names). The source is built here, with the environment the ``${VAR}`` references read, and
the session directory beside the trace for the full outputs.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from rho_domain.config import AgentConfig
from rho_domain.errors import ConfigError
from rho_domain.permissions import PermissionProfile
from rho_domain.ports.store import SessionStore
from rho_entry.config.yaml_text import read_yaml_file

if TYPE_CHECKING:  # MCP's values and checks: with the first server configured
    from rho_domain.mcp_config import McpServerConfig
    from rho_domain.tools.source import ToolSource

OUTPUT_DIR = "mcp-output"  # in a session's directory: the full outputs of capped calls


def anchored(servers: object, path: str | Path) -> object:
    """``servers`` (a file's raw ``mcp_servers`` mapping) with each stdio server's ``cwd``
    made absolute against the directory of the file at ``path``: a server without one
    starts there, a relative one is read from there. Rho-agent's own directory is usually
    the workspace, which must not choose what a server runs (docs/mcp.md). Anything that is
    not a mapping of mappings is returned as it is, for the converter to name."""
    if not isinstance(servers, Mapping):
        return servers
    home = Path(path).resolve().parent
    out: dict[object, object] = {}
    for name, server in servers.items():
        if isinstance(server, Mapping) and server.get("command"):
            cwd = server.get("cwd")
            if cwd is None or (isinstance(cwd, str) and not Path(cwd).is_absolute()):
                server = {**server, "cwd": str(home / cwd) if cwd else str(home)}
        out[name] = server
    return out


def load_mcp_servers(path: str | Path) -> dict[str, McpServerConfig]:
    """The servers of an MCP config file: a YAML (or JSON) mapping with one key,
    ``mcp_servers``, laid out as in an AgentConfig. Raises ConfigError naming the file."""
    from rho_adapters.codec import config_from_dict

    data = read_yaml_file(path, where=f"--mcp-config {path}", what="it")
    if not isinstance(data, dict) or set(data) != {"mcp_servers"}:
        # the keys found said too: Claude's and Cursor's files spell it mcpServers
        found = (
            f"; found {', '.join(repr(k) for k in list(data)[:5])}"
            if isinstance(data, dict) and data
            else ""
        )
        alike = isinstance(data, dict) and any(
            str(k).replace("_", "").lower() == "mcpservers" for k in data if k != "mcp_servers"
        )
        hint = " (rename it mcp_servers)" if alike else ""
        raise ConfigError(
            f"--mcp-config {path}: expected a mapping with one key, mcp_servers "
            f"(mcp_servers: {{NAME: {{command: [...]}} or {{url: ...}}}}){found}{hint}"
        )
    data = {"mcp_servers": anchored(data["mcp_servers"], path)}
    servers = dict(config_from_dict(data, source=str(path)).mcp_servers)
    refuse_cut_denies(f"--mcp-config {path}: ", servers)
    return servers


def refuse_cut_denies(
    where: str, servers: Mapping[str, McpServerConfig], denied: Collection[str] = ()
) -> None:
    """ConfigError naming ``where`` (the file, and the profile's keys in it) and the key for
    a deny entry that is a model name cut to fit (``mcp_config.check_deny_entries``), when
    the file is read; a session starting the server refuses it too (``servers_to_start``),
    naming the key alone. Stored sessions' configs are not judged: a resume starts the
    resumer's servers."""
    if not servers and not any(e.startswith("mcp__") for e in denied):
        return  # nothing to judge: mcp_config is not imported
    from rho_domain.mcp_config import check_deny_entries
    from rho_domain.mcp_names import server_of

    for name, server in servers.items():
        check_deny_entries(name, server.tools.deny, where=f"{where}mcp_servers.{name}.tools.deny")
    for entry in denied:
        if (server_name := server_of(entry)) is not None:
            check_deny_entries(server_name, (entry,), where=f"{where}denied_tools")


def with_mcp_file(config: AgentConfig, path: str | Path) -> AgentConfig:
    """``config`` with the servers of the file at ``path`` added (same name: the file's)."""
    import attrs

    servers = {**config.mcp_servers, **load_mcp_servers(path)}
    return attrs.evolve(config, mcp_servers=servers)


def build_tool_source(
    config: AgentConfig,
    profile: PermissionProfile,
    store: SessionStore | None,
    environ: Mapping[str, str],
) -> ToolSource | None:
    """The MCP tool source of a session, or None when it starts no server."""
    if not config.mcp_servers and not profile.mcp_servers:
        return None  # nothing to start or to check: mcp_config is not imported
    from rho_domain.mcp_config import servers_to_start

    servers = servers_to_start(
        config.mcp_servers,
        profile.mcp_servers,
        only_named=profile.starts_named_mcp_servers_only,
        denied=profile.denied_tools,
    )
    if not servers:
        return None
    from rho_adapters.mcp import McpToolSource
    from rho_entry.config.stores import session_dirs

    output_dir = None
    if (dirs := session_dirs(store)) is not None:
        found = dirs

        def output_dir(session_id: str) -> Path | None:
            return found(session_id) / OUTPUT_DIR

    return McpToolSource(
        servers,
        environ=environ,
        output_limit=config.tool_output_limit,
        output_dir=output_dir,
    )
