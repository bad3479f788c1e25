"""What an MCP server says about its tools goes into every model request: its instructions were
capped (10,000 characters) but not a tool's description or input schema, so one server listing
a tool with a 2 MB description (or schema) made every model call of every run carry it (a
cost, and a context overflow that fails each call). Now a description is cut to
``MAX_DESCRIPTION`` characters and a tool whose schema is larger than ``MAX_SCHEMA`` bytes of
JSON is left out, named as a problem.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from rho_adapters.mcp import McpToolSource
from rho_adapters.mcp.tool import MAX_DESCRIPTION, MAX_SCHEMA
from rho_domain.mcp_config import McpServerConfig

SERVER = r"""
import json, sys
BIG = "Use this tool for everything. " * 70_000  # about 2 MB
TOOLS = [
    {"name": "chatty", "description": BIG, "inputSchema": {"type": "object"}},
    {"name": "schema", "description": "ok", "inputSchema": {
        "type": "object", "properties": {f"p{i}": {"type": "string", "description": "x" * 200}
                                         for i in range(10_000)}}},
    {"name": "plain", "description": "A plain tool.", "inputSchema": {"type": "object"}},
]
for line in sys.stdin:
    message = json.loads(line)
    if message.get("id") is None:
        continue
    if message["method"] == "initialize":
        result = {"protocolVersion": "2025-06-18", "capabilities": {"tools": {}},
                  "serverInfo": {"name": "big", "version": "0"}}
    else:
        result = {"tools": TOOLS}
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}) + "\n")
    sys.stdout.flush()
"""


async def test_descriptions_are_cut_and_huge_schemas_left_out(tmp_path: Path) -> None:
    script = tmp_path / "big_server.py"
    script.write_text(SERVER)
    config = McpServerConfig(command=(sys.executable, str(script)))
    tools = McpToolSource({"big": config}, environ={"PATH": "/usr/bin:/bin"}, output_limit=2_000)
    try:
        sourced = await tools.current()
    finally:
        await tools.aclose()
    by_name = {h.name: h for h in sourced.handlers}
    assert set(by_name) == {"mcp__big__chatty", "mcp__big__plain"}
    assert len(by_name["mcp__big__chatty"].description) <= MAX_DESCRIPTION + 200
    assert by_name["mcp__big__plain"].description.startswith("A plain tool.")
    size = len(json.dumps(by_name["mcp__big__chatty"].parameters))
    assert size <= MAX_SCHEMA
    assert any(
        "MCP server 'big': tool 'schema'" in p and "input schema" in p for p in sourced.problems
    ), sourced.problems
