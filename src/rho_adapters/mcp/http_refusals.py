"""What an MCP server's HTTP answer of 300 or more says, as the error the request fails with.

An error status shows the head of its body (cut, on one line: ``said``); a 404 to a request
that carried our session is ``McpSessionExpired`` (the source opens a new one); a 405 that
allows no POST names MCP's older HTTP+SSE transport, which is how the official SDK's ``sse``
servers answer the POST of Streamable HTTP; a 401 says what it asks for
(``WWW-Authenticate``, cut) and which settings give a token: no authorization flow is
followed, so a ``resource_metadata`` URL it names (another host's, maybe) is never fetched;
a redirect is never followed (our headers, a token among them, would go along) and says
where it led. An ``Mcp-Session-Id`` we would not send back is refused too (``session_id``).
"""

from __future__ import annotations

import httpx

from rho_adapters.mcp.server_text import said
from rho_domain.errors import McpError, McpProtocolError, McpSessionExpired
from rho_domain.url_logins import hide_url_logins

# what HTTP servers take in one header line (nginx's 8 KB buffer, Apache's 8,190 bytes)
MAX_SESSION_ID = 8_000


def session_id(sid: str, *, server: str, url: str) -> str:
    """``sid``, the ``Mcp-Session-Id`` ``server`` at ``url`` gave, when it is visible ASCII
    (0x21-0x7E, as the specification requires) of at most ``MAX_SESSION_ID`` characters,
    else ``McpProtocolError``. It is sent back in a header on every request: httpx cannot
    encode one that is not ASCII (its UnicodeEncodeError ended the run), and a longer one was
    bounded only by httpcore's 100 KB limit on a reply's headers (90 KB sent back with every
    request and tool call for the session's life, or refused by a proxy, unsaid)."""
    if len(sid) > MAX_SESSION_ID:
        raise McpProtocolError(
            f"MCP server {server!r} at {url} gave an Mcp-Session-Id of {len(sid):,} characters "
            f"(at most {MAX_SESSION_ID:,}, what HTTP servers take in one header, are sent "
            f"back): {said(sid, 200)}",
            server=server,
        )
    if all("!" <= ch <= "~" for ch in sid):
        return sid
    raise McpProtocolError(
        f"MCP server {server!r} at {url} gave an Mcp-Session-Id that is not visible ASCII: "
        f"{said(ascii(sid))}",
        server=server,
    )


def refusal(
    response: httpx.Response, *, server: str, url: str, what: str, head: bytes, session: bool
) -> McpError:
    """The error for ``response`` (status 300 or more) to ``what`` (a method, or what the
    request was) of ``server`` at ``url`` (as shown: its login hidden); ``head``: the first
    bytes of its body; ``session``: whether the request carried our ``Mcp-Session-Id``."""
    status = response.status_code
    if status >= 400:
        body = said(head.decode("utf-8", "replace")[:300])
        expired = status == 404 and session
        hint = " (it forgot our session)" if expired else _no_post(response)
        hint = hint or _unauthorized(response, server)
        error = McpSessionExpired if expired else McpError
        return error(
            f"MCP server {server!r} at {url} answered {what} with HTTP {status}{hint}: {body}",
            server=server,
        )
    where = hide_url_logins(response.headers.get("location", ""))
    return McpError(
        f"MCP server {server!r} at {url} answered {what} with HTTP {status}, a redirect to "
        f"{said(repr(where))}, which is not followed (our headers, a token among them, would "
        f"go along): give mcp_servers.{server}.url as where it leads, if you trust it",
        server=server,
    )


def _no_post(response: httpx.Response) -> str:
    """Why a 405 that allows no POST may be: the server speaks MCP's older HTTP+SSE
    transport (2024-11-05: a GET stream at ``/sse``, which the official SDK still serves),
    not Streamable HTTP; "" for any other answer."""
    allowed = response.headers.get("allow", "").upper()
    if response.status_code != 405 or "POST" in allowed:
        return ""
    return (
        " (it takes no POST here: a server of MCP's older HTTP+SSE transport, often at a URL "
        "ending in /sse, answers so; rho-agent speaks Streamable HTTP only, usually at /mcp)"
    )


def _unauthorized(response: httpx.Response, server: str) -> str:
    """What a 401 asks for and how to give it; "" for any other answer. Its
    ``WWW-Authenticate`` is the server's words (said, cut): shown, never acted on."""
    if response.status_code != 401:
        return ""
    asked = response.headers.get("www-authenticate", "")
    shown = f"; it asks: WWW-Authenticate {said(asked, 200)}" if asked else ""
    return (
        f" (unauthorized{shown}; give a token with mcp_servers.{server}.bearer_token_env or "
        "headers: rho-agent follows no authorization flow and fetches no URL it names)"
    )
