"""``rho-agent mcp list``: each configured MCP server, its state and its tools.

The servers are the config's (``--config FILE`` or ``$RHO_AGENT_CONFIG``) plus those of
``--mcp-config FILE``. Each is started, initialized and listed as a session would (within its
startup timeout), then stopped; a server the profile would not start in a session (a
read-only profile that does not name it) is listed too, with a note saying so. Exit 0 when
every server started, 1 when one failed or the configuration is wrong.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
from collections.abc import Sequence

from rho_domain.errors import RhoError
from rho_domain.mcp_config import McpServerConfig
from rho_entry.cli.terminal_text import visible
from rho_entry.config.home import expanded
from rho_entry.usage import UsageParser, parsed


def main(argv: Sequence[str]) -> int:
    """``rho-agent mcp list [--config FILE] [--mcp-config FILE] [--profile P]``."""
    parser = UsageParser(
        prog="rho-agent mcp",
        description="MCP servers: 'list' starts each configured server, shows its state and "
        "its tools as the model sees them (mcp__<server>__<tool>), then stops it.",
    )
    parser.add_argument("command", choices=("list",), help="what to do")
    parser.add_argument("-c", "--config", metavar="FILE", help="AgentConfig YAML file")
    parser.add_argument("--mcp-config", metavar="FILE", help="YAML file with mcp_servers:")
    parser.add_argument("--profile", help="the profile sessions run with (default: the config's)")
    ns = parsed(parser, argv)
    if isinstance(ns, int):
        return ns
    try:
        everyone, started, profile = _servers(ns.config, ns.mcp_config, ns.profile)
        lines, failed = asyncio.run(_listing(everyone, started, profile))
    except RhoError as exc:
        print(visible(f"rho-agent mcp: {exc}"), file=sys.stderr)
        return 1
    print(visible("\n".join(lines)))  # names, states and problems come from servers
    return 1 if failed else 0


def _servers(
    config_path: str | None, mcp_path: str | None, profile_name: str | None
) -> tuple[dict[str, McpServerConfig], dict[str, McpServerConfig], str]:
    """Every configured server, those a session would start, and the profile's name."""
    import attrs

    from rho_domain.config import AgentConfig
    from rho_domain.mcp_config import servers_to_start
    from rho_entry.cli.launch_files import read_by
    from rho_entry.config.config_files import load_agent_config
    from rho_entry.config.mcp_servers import with_mcp_file
    from rho_entry.config.settings import environment
    from rho_entry.wiring import profile_of

    path = config_path or environment().get("RHO_AGENT_CONFIG")
    config = AgentConfig()
    if path:
        with read_by("--config", path) if config_path else contextlib.nullcontext():
            config = load_agent_config(expanded(path))
    if mcp_path:
        with read_by("--mcp-config", mcp_path):
            config = with_mcp_file(config, expanded(mcp_path))
    if profile_name:
        config = attrs.evolve(config, profile=profile_name)
    profile = profile_of(config)
    started = servers_to_start(
        config.mcp_servers,
        profile.mcp_servers,
        only_named=profile.starts_named_mcp_servers_only,
        denied=profile.denied_tools,
    )
    return {**config.mcp_servers, **started}, started, profile.name


async def _listing(
    everyone: dict[str, McpServerConfig], started: dict[str, McpServerConfig], profile: str
) -> tuple[list[str], bool]:
    from rho_adapters.mcp import probe
    from rho_entry.config.settings import environment

    if not everyone:
        return ["no MCP servers configured (mcp_servers: in --config or --mcp-config)"], False
    lines: list[str] = []
    failed = False
    for report in await probe(everyone, environ=environment()):
        name = report.name
        if report.state != "ready":
            failed = True
            lines.append(f"{name}  {report.transport}  failed: {report.problem}")
        else:
            lines.append(f"{name}  {report.transport}  ready  {len(report.tools)} tool(s)")
            lines.extend(f"  {tool}  {policy}" for tool, policy in report.tools)
        if name not in started:
            lines.append(
                f"  (sessions under profile {profile} do not start it: the profile is "
                "read-only (or bash-only) and does not name it in its mcp_servers:)"
            )
    return lines, failed
