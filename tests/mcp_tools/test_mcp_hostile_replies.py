"""Hostile MCP replies met in process (no server started): what a server chooses must not
choose how much memory we hold, nor how long a request waits for an answer that cannot come."""

from __future__ import annotations

import asyncio
import json
import tracemalloc
from collections.abc import AsyncIterator

import pytest
from mcp_support import ScriptedTransport

from rho_adapters.mcp.client import MAX_PAGES, McpClient
from rho_adapters.mcp.transport import Message
from rho_domain.errors import McpProtocolError
from rho_domain.tools.base import ToolOutput

HELLO: dict[str, object] = {"protocolVersion": "2025-06-18", "capabilities": {"tools": {}}}


def answered(request: Message, result: dict[str, object]) -> str:
    return json.dumps({"jsonrpc": "2.0", "id": request["id"], "result": result})


def test_page_cursors_that_never_repeat_are_not_held_whole() -> None:
    # redmcp23: the listing's loop check held every cursor a server gave, whole: 100 pages
    # of distinct 10 MB cursors grew the agent to 998 MB (max RSS; 63 MB with digests).
    # Here 100 of 200 KB: 20 MB traced at the peak before, a few cursors' worth now.
    pages = 0

    def answer(request: Message) -> str:
        nonlocal pages
        if request["method"] == "initialize":
            return answered(request, HELLO)
        pages += 1
        cursor = f"{pages}" + "c" * 200_000
        return answered(request, {"tools": [], "nextCursor": cursor})

    async def main() -> None:
        client = McpClient("h", ScriptedTransport(answer), on_list_changed=lambda: None)
        await client.start(timeout=10)
        with pytest.raises(McpProtocolError, match="tools/list runs past 100 pages"):
            await client.list_tools(timeout=10)

    tracemalloc.start()
    try:
        asyncio.run(main())
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert pages == MAX_PAGES
    assert peak < 5_000_000  # bytes: 21 MB before


REPLIES = {  # how a server replies to a request's POST without the answer in it
    "an empty JSON body": (200, "application/json", b""),
    "JSON typed, an event inside": (200, "application/json", b'data: {"id": 1}\n\n'),
    "a stream ended after a notification": (
        200,
        "text/event-stream",
        b'data: {"jsonrpc": "2.0", "method": "notifications/progress", "params": {}}\n\n',
    ),
    "a stream left for a poll (id, retry: 0)": (200, "text/event-stream", b"id: 1\nretry: 0\n\n"),
    "a stream typed, JSON inside": (200, "text/event-stream", b'{"jsonrpc": "2.0"}'),
    "202 to a request": (202, "", b""),
    "another request's answer": (
        200,
        "application/json",
        b'{"jsonrpc": "2.0", "id": 99, "result": {}}',
    ),
    # corners25: an empty batch (JSON-RPC 2.0's invalid request; MCP has no batches since
    # 2025-06-18) was taken silently: the failure did not say the server sent something
    "an empty batch": (200, "application/json", b"[]"),
}


def test_an_http_reply_without_the_answer_fails_its_request_at_once() -> None:
    # redmcp23: a POST's reply that ended without the request's answer (a stream closed
    # early, as the SDK's servers do to be polled with Last-Event-ID, which we do not
    # send; a content type that lies; 202; an answer to another id) left the request
    # waiting for its deadline: each of these variants took the whole call_timeout (60 s by
    # default; 2.0 s each with timeout=2 in a probe). Now it fails as the reply ends.
    import httpx

    from rho_adapters.mcp.http import HttpTransport
    from rho_adapters.mcp.jsonrpc import RpcPeer

    said: dict[str, str] = {}

    async def one(kind: str) -> None:
        status, content_type, body = REPLIES[kind]

        def handler(request: httpx.Request) -> httpx.Response:
            if request.method != "POST" or "id" not in json.loads(request.content):
                return httpx.Response(202)  # no stream of its own; a notification taken
            headers = {"content-type": content_type} if content_type else {}
            return httpx.Response(status, headers=headers, stream=httpx.ByteStream(body))

        client = httpx.AsyncClient(transport=httpx.MockTransport(handler))
        http = HttpTransport("h", "http://mcp.invalid/mcp", headers={}, http_client=client)
        peer = RpcPeer("h", http, on_notification=lambda method, params: None)
        await peer.start()
        try:
            with pytest.raises(McpProtocolError) as raised:
                # before, each variant reached this deadline (McpTimeout)
                await peer.request("tools/call", {}, timeout=10, setting="call_timeout")
            said[kind] = str(raised.value)
        finally:
            await peer.aclose()
            await client.aclose()

    async def main() -> None:
        for kind in REPLIES:
            await one(kind)

    asyncio.run(main())
    for kind, message in said.items():
        assert message.startswith(
            "MCP server 'h' ended its reply to tools/call without the answer"
        ), kind
    assert "could not be read meanwhile, the last: data: {" in said["JSON typed, an event inside"]
    assert said["an empty batch"].endswith(
        "it sent 1 message(s) that could not be read meanwhile, the last: []"
    )


def test_a_session_id_longer_than_a_header_line_is_refused_naming_the_server() -> None:
    # corners25: an Mcp-Session-Id was bounded only by httpcore's 100 KB limit on a reply's
    # headers, and sent back whole with every later request (90 KB a tool call, for the
    # session's life; refused unsaid by a proxy with a shorter limit). Now the handshake
    # fails, naming the server, its URL and the bound; one at the bound is sent back.
    import httpx

    from rho_adapters.mcp.http import HttpTransport
    from rho_adapters.mcp.http_refusals import MAX_SESSION_ID
    from rho_adapters.mcp.jsonrpc import RpcPeer

    sent: list[int] = []

    async def one(sid: str) -> str:
        def handler(request: httpx.Request) -> httpx.Response:
            sent.append(len(request.headers.get("mcp-session-id", "")))
            if request.method != "POST" or "id" not in json.loads(request.content):
                return httpx.Response(202)
            body = answered(json.loads(request.content), HELLO).encode()
            headers = {"content-type": "application/json", "mcp-session-id": sid}
            return httpx.Response(200, headers=headers, stream=httpx.ByteStream(body))

        client = httpx.AsyncClient(transport=httpx.MockTransport(handler))
        http = HttpTransport("h", "http://mcp.invalid/mcp", headers={}, http_client=client)
        peer = RpcPeer("h", http, on_notification=lambda method, params: None)
        await peer.start()
        try:
            await peer.request("initialize", {}, timeout=10, setting="call_timeout")
            await peer.request("tools/list", {}, timeout=10, setting="call_timeout")
            return "served"
        except McpProtocolError as exc:
            return str(exc)
        finally:
            await peer.aclose()
            await client.aclose()

    async def main() -> tuple[str, str]:
        return await one("s" * MAX_SESSION_ID), await one("s" * 90_000)

    kept, refused = asyncio.run(main())
    assert kept == "served"
    assert sent[:2] == [0, MAX_SESSION_ID]
    assert refused.startswith(
        "MCP server 'h' at http://mcp.invalid/mcp gave an Mcp-Session-Id of 90,000 characters "
        "(at most 8,000, what HTTP servers take in one header, are sent back): sss"
    ), refused
    assert refused.endswith("s... (90,000 characters)")
    assert max(sent[3:], default=0) == 0  # the long one was never sent back


def test_an_input_schema_that_is_no_object_is_left_out_named() -> None:
    # redmcp23: an inputSchema that is not an object's (a string, a list, a number, a
    # "type": "string") was shown to the model as an empty object, silently, and one
    # without "type" lost its properties the same way: the model called a tool whose
    # arguments it was never shown. Now the first is left out, naming the server, the tool
    # and why; the second is shown as the object it describes.
    from rho_adapters.mcp.shown_tools import made_tools
    from rho_adapters.mcp.tool import kept_entry
    from rho_domain.mcp_config import McpServerConfig

    schemas: dict[str, object] = {
        "text": "x" * 100,
        "list": [{"type": "object"}],
        "number": 5,
        "string": {"type": "string"},
        "nullable": {"type": ["object", "null"]},
    }
    words = {"type": "object", "properties": {"q": {"type": "string"}}}
    listed = [kept_entry({"name": name, "inputSchema": s}) for name, s in schemas.items()]
    listed += [
        kept_entry({"name": "untyped", "inputSchema": {"properties": words["properties"]}}),
        kept_entry({"name": "typed", "inputSchema": words}),
        kept_entry({"name": "bare"}),  # no schema: no arguments
    ]

    async def never(*args: object, **kwargs: object) -> ToolOutput:
        raise AssertionError("not called")

    made, problems = made_tools("h", McpServerConfig(command=("x",)), listed, never)
    assert {tool.tool: tool.parameters for tool in made} == {
        "untyped": words,
        "typed": words,
        "bare": {"type": "object", "properties": {}},
    }
    assert len(problems) == len(schemas)
    for (name, _), problem in zip(schemas.items(), problems, strict=True):
        assert problem.startswith(f"MCP server 'h': tool '{name}' is left out: its input schema"), (
            problem
        )
    assert "is a JSON str, not an object schema" in problems[0]
    assert "is of type 'string', not an object schema" in problems[3]


def test_a_servers_words_of_line_breaks_are_split_only_as_far_as_they_are_shown() -> None:
    # redmcp23: said() split a server's whole text into lines before cutting it to the
    # 200 or 1,000 characters shown; \x1c and \v are line breaks to splitlines, inside one
    # stdio line, so a 30 MB line that is not JSON ('ab\x1c' repeated) grew the agent by
    # 755 MB (a string per break), 28 MB now. Here 1.5 MB of it as a stray line and as a
    # call's error message: 37 MB traced at the peak before, 8 MB now.
    from rho_domain.errors import McpError

    breaks = "ab\x1c" * 500_000

    def answer(request: Message) -> str:
        if request["method"] == "initialize":
            return answered(request, HELLO)
        error = {"code": -32000, "message": breaks}
        return json.dumps({"jsonrpc": "2.0", "id": request["id"], "error": error})

    async def main() -> tuple[str, str]:
        client = McpClient("h", ScriptedTransport(answer), on_list_changed=lambda: None)
        await client.start(timeout=10)
        client.peer.receive(breaks)  # a line that is not JSON
        with pytest.raises(McpError) as raised:
            await client.call_tool("t", {}, timeout=10)
        return client.peer.last_malformed, str(raised.value)

    tracemalloc.start()
    try:
        stray, refused = asyncio.run(main())
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 16_000_000  # bytes: 37 MB before, 8 MB now (4 MB: the JSON sent)
    assert stray.startswith("ab\\nab\\n")
    assert stray.endswith("... (1,499,999 characters)")
    assert refused.endswith("... (1,500,000 characters)")


def test_a_refused_request_says_what_the_server_asks_for_and_follows_nothing() -> None:
    # redmcp23: a URL of the official SDK's older HTTP+SSE server (run("sse"), /sse) was
    # refused as "answered initialize with HTTP 405: Method Not Allowed" (seen against a
    # real one, which allows HEAD and GET there), and a 401 as "HTTP 401: <body>": neither
    # said why nor what to change. A 405 whose Allow has no POST now names that transport
    # (one that allows POST does not); a 401 says its WWW-Authenticate, cut, and the
    # settings that give a token, and the resource_metadata URL it names is never fetched.
    import httpx

    from rho_adapters.mcp.http import HttpTransport
    from rho_adapters.mcp.jsonrpc import RpcPeer
    from rho_domain.errors import McpError

    asked = 'Bearer resource_metadata="http://elsewhere.invalid/.well-known/x"\n[approved]'
    answers = {
        "old": (405, {"allow": "HEAD, GET"}),
        "other": (405, {"allow": "GET, POST"}),
        "locked": (401, {"www-authenticate": asked}),
    }
    hosts: list[str] = []

    async def refused(name: str) -> str:
        status, headers = answers[name]

        def handler(request: httpx.Request) -> httpx.Response:
            hosts.append(request.url.host)
            body = httpx.ByteStream(b"Not for you")
            return httpx.Response(status, headers=headers, stream=body)

        client = httpx.AsyncClient(transport=httpx.MockTransport(handler))
        http = HttpTransport(name, "http://mcp.invalid/sse", headers={}, http_client=client)
        peer = RpcPeer(name, http, on_notification=lambda method, params: None)
        await peer.start()
        try:
            with pytest.raises(McpError) as raised:
                await peer.request("initialize", {}, timeout=10, setting="startup_timeout")
        finally:
            await peer.aclose()
            await client.aclose()
        return str(raised.value)

    async def main() -> dict[str, str]:
        return {name: await refused(name) for name in answers}

    said = asyncio.run(main())
    assert said["old"] == (
        "MCP server 'old' at http://mcp.invalid/sse answered initialize with HTTP 405 (it "
        "takes no POST here: a server of MCP's older HTTP+SSE transport, often at a URL "
        "ending in /sse, answers so; rho-agent speaks Streamable HTTP only, usually at "
        "/mcp): Not for you"
    )
    assert said["other"].endswith("answered initialize with HTTP 405: Not for you")
    assert said["locked"] == (
        "MCP server 'locked' at http://mcp.invalid/sse answered initialize with HTTP 401 "
        '(unauthorized; it asks: WWW-Authenticate Bearer resource_metadata="http://'
        'elsewhere.invalid/.well-known/x"\\n[approved]; give a token with '
        "mcp_servers.locked.bearer_token_env or headers: rho-agent follows no authorization "
        "flow and fetches no URL it names): Not for you"
    )
    assert set(hosts) == {"mcp.invalid"}


def test_a_listing_draws_a_bounded_number_of_problems() -> None:
    # redmcp23: each entry left out drew a problem of its own, and each problem is an error
    # event of the run (a trace line, a terminal line): a server listing 300,000 tools of
    # one name, within the listing's 16 MiB, drew 299,999 error events at the run's start
    # (measured through a Session). Now at most 20 are said, each once, and one counts the
    # rest.
    from rho_adapters.mcp.shown_tools import MAX_PROBLEMS, made_tools
    from rho_adapters.mcp.tool import kept_entry
    from rho_domain.mcp_config import McpServerConfig

    async def never(*args: object, **kwargs: object) -> ToolOutput:
        raise AssertionError("not called")

    same = [kept_entry({"name": "a", "inputSchema": {"type": "object"}})] * 1_000
    odd = [kept_entry({"name": f"s{i}", "inputSchema": "x"}) for i in range(30)]
    made, problems = made_tools("h", McpServerConfig(command=("x",)), same + odd, never)
    assert [tool.tool for tool in made] == ["a"]
    assert len(problems) == MAX_PROBLEMS + 1
    assert len(set(problems)) == len(problems)
    assert (
        problems[0] == "MCP server 'h': tools 'a' and 'a' both become 'mcp__h__a'; 'a' is left out"
    )
    assert problems[-1] == (
        "MCP server 'h': 1,009 more of its tools are left out, for reasons of the kinds above "
        "(at most 20 are said one by one)"
    )


def test_the_notification_stream_is_opened_again_when_it_ends() -> None:
    # probemcp23b: the GET stream of the server's own notifications was opened once. One a
    # server or a proxy closed (an idle timeout), or that passed the 256 MiB an answer may
    # take over a long session, was never opened again: list_changed stopped without a word
    # and the model was shown the old tools. Here the first stream ends after its
    # notification and the second passes max_body after it; each is opened again.
    import httpx

    from rho_adapters.mcp.http import HttpTransport
    from rho_adapters.mcp.jsonrpc import RpcPeer

    changed = b'data: {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}\n\n'
    gets = 0

    def handler(request: httpx.Request) -> httpx.Response:
        nonlocal gets
        if request.method != "GET":
            return httpx.Response(202)
        gets += 1
        body = changed + (b": " + b"x" * 2_000 + b"\n\n" if gets % 2 == 0 else b"")
        headers = {"content-type": "text/event-stream"}
        return httpx.Response(200, headers=headers, stream=httpx.ByteStream(body))

    async def main() -> int:
        heard = asyncio.Event()
        count = 0

        def notified(method: str, params: Message) -> None:
            nonlocal count
            count += method == "notifications/tools/list_changed"
            if count == 3:
                heard.set()

        client = httpx.AsyncClient(transport=httpx.MockTransport(handler))
        http = HttpTransport(
            "h",
            "http://mcp.invalid/mcp",
            headers={},
            http_client=client,
            max_body=1_000,
            relisten=(0.0, 0.0),
        )
        peer = RpcPeer("h", http, on_notification=notified)
        await peer.start()
        try:
            await peer.notify("notifications/initialized")  # the stream is opened after it
            async with asyncio.timeout(10):  # a bound on a hang: before, a second never came
                await heard.wait()
        finally:
            await peer.aclose()
            await client.aclose()
        return count

    assert asyncio.run(main()) >= 3
    assert gets >= 3


def test_httpxs_stream_error_is_mcp_error_and_the_stream_is_opened_again() -> None:
    # corners24: httpx's StreamError (StreamClosed: a stream closed under its reader) is a
    # RuntimeError, not an HTTPError. Before, it left a POST's send bare (no McpError naming
    # the server) and ended the notification stream's listener for the session's rest, so
    # list_changed stopped without a word. Now the send is McpError, the stream reopened.
    import httpx

    from rho_adapters.mcp.http import HttpTransport
    from rho_adapters.mcp.jsonrpc import RpcPeer
    from rho_domain.errors import McpError

    changed = b'data: {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}\n\n'
    gets = 0

    class Closed(httpx.AsyncByteStream):
        async def __aiter__(self) -> AsyncIterator[bytes]:
            raise httpx.StreamClosed
            yield b""  # an async generator

    def handler(request: httpx.Request) -> httpx.Response:
        nonlocal gets
        headers = {"content-type": "text/event-stream"}
        if request.method == "POST":
            is_request = b'"id"' in request.content
            return httpx.Response(200 if is_request else 202, headers=headers, stream=Closed())
        gets += 1
        stream = Closed() if gets == 1 else httpx.ByteStream(changed)
        return httpx.Response(200, headers=headers, stream=stream)

    async def main() -> str:
        heard = asyncio.Event()
        client = httpx.AsyncClient(transport=httpx.MockTransport(handler))
        http = HttpTransport(
            "h", "http://mcp.invalid/mcp", headers={}, http_client=client, relisten=(0.0, 0.0)
        )
        peer = RpcPeer("h", http, on_notification=lambda method, params: heard.set())
        await peer.start()
        try:
            await peer.notify("notifications/initialized")  # the stream is opened after it
            async with asyncio.timeout(10):  # a bound on a hang: before, no second opening
                await heard.wait()
            with pytest.raises(McpError) as refused:
                await peer.request("tools/list", {}, timeout=10, setting="t")
        finally:
            await peer.aclose()
            await client.aclose()
        return str(refused.value)

    said = asyncio.run(main())
    assert said.startswith("MCP server 'h' at http://mcp.invalid/mcp: StreamClosed: "), said
    assert gets >= 2


def test_a_notification_stream_answered_with_json_is_not_asked_again() -> None:
    # probemcp23b: a GET answered 200 with a JSON body (no event stream: the server has
    # none) delivered it and, opened again when it ended, would be asked once a second for
    # the session's life. An answer other than a 200 event stream is none, as a 405 is.
    import httpx

    from rho_adapters.mcp.http import HttpTransport
    from rho_adapters.mcp.jsonrpc import RpcPeer

    gets = 0

    def handler(request: httpx.Request) -> httpx.Response:
        nonlocal gets
        if request.method != "GET":
            return httpx.Response(202)
        gets += 1
        body = b'{"jsonrpc": "2.0", "method": "notifications/progress"}'
        headers = {"content-type": "application/json"}
        return httpx.Response(200, headers=headers, stream=httpx.ByteStream(body))

    async def main() -> None:
        client = httpx.AsyncClient(transport=httpx.MockTransport(handler))
        http = HttpTransport(
            "h", "http://mcp.invalid/mcp", headers={}, http_client=client, relisten=(0.0, 0.0)
        )
        peer = RpcPeer("h", http, on_notification=lambda method, params: None)
        await peer.start()
        try:
            await peer.notify("notifications/initialized")
            for _ in range(200):  # turns of the loop, enough for many openings (none timed)
                await asyncio.sleep(0)
        finally:
            await peer.aclose()
            await client.aclose()

    asyncio.run(main())
    assert gets == 1, gets


def test_a_send_on_a_closed_http_client_is_mcp_error() -> None:
    # probemcp23b: HttpTransport checked only that it had a client: one closed (given closed,
    # or being closed by aclose while a background answer or cancel started) let httpx's
    # RuntimeError ("Cannot send a request, as the client has been closed.") escape the
    # transport's McpError contract; in a background send it was "Task exception was never
    # retrieved". Now each is McpError, which a background send drops.
    import httpx

    from rho_adapters.mcp.http import HttpTransport
    from rho_adapters.mcp.jsonrpc import RpcPeer
    from rho_domain.errors import McpError

    said: list[str] = []

    async def main() -> None:
        accepted = httpx.Response(202, headers={"mcp-session-id": "s1"})
        client = httpx.AsyncClient(transport=httpx.MockTransport(lambda r: accepted))
        http = HttpTransport("h", "http://mcp.invalid/mcp", headers={}, http_client=client)
        peer = RpcPeer("h", http, on_notification=lambda method, params: None)
        await peer.start()
        await peer.notify("notifications/progress", {})  # a session: aclose would DELETE it
        await client.aclose()
        with pytest.raises(McpError) as raised:
            await peer.notify("notifications/cancelled", {"requestId": 1})
        said.append(str(raised.value))
        with pytest.raises(McpError) as raised:
            await peer.request("tools/list", None, timeout=5, setting="call_timeout")
        said.append(str(raised.value))
        await peer.aclose()  # its DELETE on the closed client raised httpx's RuntimeError

    asyncio.run(main())
    assert said == ["MCP server 'h': not connected"] * 2
