"""A reference MCP server built with the official SDK (``mcp.server.mcpserver.MCPServer``).

Run as ``python reference_server.py stdio`` or ``python reference_server.py http PORT``. Its
tools cover what the client must handle: text, structured content, a 5 MB result, a call
that hangs, a server that dies mid-call, a tool list that changes, an error, a grandchild
process (to see the process group killed), and requests of its own in a call (``ask``).
``HANG_AT_START=1`` in its environment makes it hang before serving; ``env`` reports what
environment it was given.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

if os.environ.get("HANG_AT_START") == "1":  # before the SDK's imports, which cost a second
    time.sleep(120)  # past every test's bound: a missed startup_timeout fails, not hangs

from mcp import MCPError, types
from mcp.server.mcpserver import Context, MCPServer
from pydantic import BaseModel

server = MCPServer(
    "reference",
    instructions="Tickets live in the tracker; search before you ask.",
)


class Sum(BaseModel):
    total: int


class Consent(BaseModel):
    ok: bool


@server.tool(description="Echo the text back.")
def echo(text: str) -> str:
    return f"echo: {text}"


@server.tool(description="Add two numbers (structured output).")
def add(a: int, b: int) -> Sum:
    return Sum(total=a + b)


@server.tool(description="Return a result of about 5 MB.")
def big() -> str:
    return "".join(f"line {i:07d} " + "x" * 40 + "\n" for i in range(100_000))


@server.tool(description="Sleep for a long time.")
def slow(seconds: float = 3600) -> str:
    time.sleep(seconds)
    return "woke up"


@server.tool(description="Exit the server process in the middle of the call.")
def die() -> str:
    os._exit(3)


@server.tool(description="Fail.")
def fail() -> str:
    raise ValueError("the ticket tracker is down")


@server.tool(description="Report the environment variables this server was given.")
def env() -> str:
    return json.dumps(sorted(os.environ))


@server.tool(description="Report the HTTP headers of this call (Streamable HTTP only).")
def headers(ctx: Context) -> str:
    request = ctx.request_context.request
    seen = dict(request.headers) if request is not None else {}
    wanted = ("authorization", "x-token", "mcp-protocol-version", "mcp-session-id")
    return json.dumps({k: seen.get(k) for k in wanted})


@server.tool(description="Start a grandchild process that sleeps; return its pid.")
def spawn() -> str:
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(3600)"])
    return str(child.pid)


@server.tool(description="Ask the client: ping, roots, sampling, elicitation; say what came back.")
async def ask(ctx: Context) -> str:
    session = ctx.session
    hello = types.SamplingMessage(role="user", content=types.TextContent(type="text", text="hi"))
    asked = {
        "ping": session.send_ping,
        "roots": session.list_roots,
        "sampling": lambda: session.create_message(messages=[hello], max_tokens=5),
        "elicitation": lambda: ctx.elicit("Proceed?", Consent),
    }
    said = []
    for name, request in asked.items():
        try:
            await request()
            said.append(f"{name}: answered")
        except MCPError as exc:  # the client's refusal, as the SDK raises it
            said.append(f"{name}: {exc}")
    return "\n".join(said)


@server.tool(description="Add the tool 'late' and tell the client the list changed.")
async def grow(ctx: Context) -> str:
    def late() -> str:
        """A tool that arrived mid-session."""
        return "late tool says hi"

    server.add_tool(late, name="late", description="A tool that arrived mid-session.")
    await ctx.session.send_tool_list_changed()
    return "added late"


if __name__ == "__main__":
    if sys.argv[1] == "stdio":
        server.run()
    else:
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
