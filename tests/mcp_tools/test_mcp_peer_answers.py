"""What a server shapes off the protocol, read by the client in this process (a scripted
transport: no server process): an id that is not ours answers nothing, a call's ``content``
that is not a list of blocks is the server's protocol error, and an input schema whose
keywords hold values of the wrong kind is left out (a model API refuses it), its check, on
its own, never our crash."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping
from pathlib import Path

import pytest
from mcp_support import ScriptedTransport

from rho_adapters.fakes import LoopbackServer, ScriptedModel, call, text, text_reply, tools
from rho_adapters.mcp import McpToolSource
from rho_adapters.mcp.client import McpClient
from rho_adapters.mcp.jsonrpc import RpcPeer
from rho_adapters.mcp.transport import Message, Transport
from rho_domain.errors import McpProtocolError, McpTimeout
from rho_domain.mcp_config import McpServerConfig
from rho_domain.messages import ToolResultMessage
from rho_domain.run import RunResult, RunStatus
from rho_domain.tools.base import DANGEROUS
from rho_domain.tools.source import SourcedTools
from rho_entry import Agent, AgentConfig, Session


def test_a_response_whose_id_is_true_answers_no_request() -> None:
    # JSON's true decodes to True, which a dict finds as the key 1: our first request
    def answer(request: Message) -> str:
        return json.dumps({"jsonrpc": "2.0", "id": True, "result": {"forged": 1}})

    async def main() -> RpcPeer:
        peer = RpcPeer("h", ScriptedTransport(answer), on_notification=lambda m, p: None)
        await peer.start()
        with pytest.raises(McpTimeout, match="could not be read meanwhile"):
            await peer.request("initialize", {}, timeout=0.05, setting="startup_timeout")
        return peer

    peer = asyncio.run(main())
    assert peer.malformed == 1


class _Line(str):
    """A received stdio line that counts its copies for a quote (``strip``)."""

    __slots__ = ("stripped",)

    def strip(self, chars: str | None = None) -> str:
        self.stripped = getattr(self, "stripped", 0) + 1
        return super().strip(chars)


def test_a_batch_is_counted_item_by_item_and_quoted_once() -> None:
    """Before: each item of a batch that was not JSON-RPC quoted the whole message, whose
    line break strip copied away: a 320 KB stdio line of 160,000 such items took 2 s of CPU
    on the event loop, quadratic in its length (an 8 MB line, under the values counted
    before decoding, some 20 minutes)."""
    said: list[str] = []
    peer = RpcPeer("h", ScriptedTransport(lambda r: None), lambda m, p: said.append(m))
    items = ["1", '{"jsonrpc": "2.0", "id": 7, "result": {}}', '{"jsonrpc": "1.0"}']
    items.append('{"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}')
    line = _Line("[" + ", ".join(items * 1000) + "]\n")
    peer.receive(line)
    assert (peer.malformed, line.stripped, len(said)) == (3000, 1, 1000)
    assert peer.last_malformed.startswith('[1, {"jsonrpc": "2.0", "id": 7')


def test_a_late_answer_to_a_request_given_up_on_is_not_said_unreadable() -> None:
    """Before: the answer to a cancelled request, arriving while the next one waited, was
    counted as a message that could not be read, and the next one's timeout said "it sent 1
    message(s) that could not be read meanwhile", quoting a well-formed answer."""

    def answer(request: Message) -> str | None:
        if request["method"] == "second":  # the server answers the first only now
            return json.dumps({"jsonrpc": "2.0", "id": 1, "result": {"late": True}})
        return None

    async def main() -> RpcPeer:
        peer = RpcPeer("h", ScriptedTransport(answer), on_notification=lambda m, p: None)
        await peer.start()
        first = asyncio.ensure_future(peer.request("first", {}, timeout=60, setting="t"))
        await asyncio.sleep(0)  # sent, then given up on
        first.cancel()
        with pytest.raises(asyncio.CancelledError):
            await first
        with pytest.raises(McpTimeout) as refused:
            await peer.request("second", {}, timeout=0.05, setting="tool_timeout")
        assert "could not be read" not in str(refused.value)
        peer.receive(json.dumps({"jsonrpc": "2.0", "id": 99, "result": {}}))  # never asked
        return peer

    peer = asyncio.run(main())
    assert (peer.late, peer.malformed) == (1, 1)


@pytest.mark.parametrize(
    ("content", "kind"),
    [(5, "a number"), (True, "a boolean"), ("text", "a string"), ({"type": "text"}, "an object")],
)
def test_a_call_whose_content_is_not_a_list_is_the_servers_protocol_error(
    content: object, kind: str
) -> None:
    def answer(request: Message) -> str:
        if request["method"] == "initialize":
            result: Message = {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}}}
        else:
            result = {"content": content}
        return json.dumps({"jsonrpc": "2.0", "id": request["id"], "result": result})

    async def main() -> None:
        client = McpClient("h", ScriptedTransport(answer), on_list_changed=lambda: None)
        await client.start(timeout=5)
        with pytest.raises(McpProtocolError) as refused:
            await client.call_tool("plain", {}, timeout=5)
        assert str(refused.value) == (
            f"MCP server 'h' answered tools/call 'plain' with content that is {kind}, not a "
            "list of blocks"
        )

    asyncio.run(main())


# Keywords of types the keyword does not take: each made the argument check raise TypeError or
# AttributeError, which ended the run that called the tool. A model API refuses such a schema
# (JSON Schema 2020-12's kinds), so such a tool is now left out (test_mcp_schema_kinds.py);
# the check still holds on its own, for whatever schema reaches it.
ODD_SCHEMA: Message = {
    "type": "object",
    "required": 5,
    "properties": {
        "word": {"type": "string", "maxLength": "10", "enum": 5},
        "count": {"type": ["integer", 7], "minimum": "0"},
        "tags": {"type": "array", "items": 5},
        "other": 5,
    },
}


def test_a_schema_of_odd_keyword_values_is_checked_as_far_as_it_can_be() -> None:
    from rho_domain.errors import ToolArgumentsError
    from rho_domain.tools.schema import coerce_and_validate

    arguments = {"word": "w", "count": "3", "tags": ["a"], "other": 1}
    assert coerce_and_validate(arguments, ODD_SCHEMA) == {**arguments, "count": 3}
    with pytest.raises(ToolArgumentsError, match=r"arguments\.count must be integer, got 2\.5"):
        coerce_and_validate({"count": 2.5}, ODD_SCHEMA)


def test_a_servers_schema_of_odd_keyword_values_is_left_out_and_the_run_goes_on(
    tmp_path: Path,
) -> None:
    sent: list[Message] = []

    def answer(request: Message) -> str:
        if request["method"] == "initialize":
            result: Message = {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}}}
        elif request["method"] == "tools/list":
            odd = {"name": "odd", "description": "Odd.", "inputSchema": ODD_SCHEMA}
            result = {"tools": [odd]}
        else:
            sent.append(request["params"])
            result = {"content": [{"type": "text", "text": "odd ran"}]}
        return json.dumps({"jsonrpc": "2.0", "id": request["id"], "result": result})

    def connect(name: str, config: McpServerConfig, environ: Mapping[str, str]) -> Transport:
        return ScriptedTransport(answer)

    source = McpToolSource(
        {"h": McpServerConfig(command=("unused",))},
        environ={},
        output_limit=2_000,
        connect=connect,
    )
    model = ScriptedModel([tools(call("mcp__h__odd", {"word": "w"}, id="c1")), text("done")])
    config = AgentConfig(model="m", profile="eval", working_dir=str(tmp_path))

    async def main() -> RunResult:
        async with Session(Agent(config), model=model, tool_source=source) as session:
            return await session.run("go")

    result = asyncio.run(main())
    assert result.status is RunStatus.COMPLETED, result.error
    assert sent == []
    assert all(spec.name != "mcp__h__odd" for spec in model.requests[0].tools)
    refused = model.requests[1].messages[-1]
    assert isinstance(refused, ToolResultMessage)
    assert "mcp__h__odd" in refused.content


def test_what_json_or_utf_8_cannot_carry_is_not_taken_into_a_model_request(
    tmp_path: Path,
) -> None:
    # Python's json reads NaN and Infinity, which are not JSON, 1e400 as infinity, and the
    # escape "\ud800" as a lone surrogate, which UTF-8 cannot encode: in a tool's schema, its
    # description or title, or the server's instructions, each went into every model request,
    # which could not be encoded: every run of the session ended in error (ValueError: Out
    # of range float values...; UnicodeEncodeError: ... surrogates not allowed)
    schemas = {
        "nan": '{"default": NaN}',
        "minus": '{"default": -Infinity}',
        "huge": '{"default": 1e400}',
        "lone": '{"description": "\\udc80"}',
        "key": '{"\\ud800": {}}',
    }
    listed = [
        f'{{"name": "{name}", "inputSchema": {{"type": "object", "properties": '
        f'{{"a": {schema}}}}}}}'
        for name, schema in schemas.items()
    ]
    listed += [
        '{"name": "described", "description": "d \\ud800"}',
        '{"name": "titled", "title": "t \\udfff"}',
    ]

    def answer(request: Message) -> str:
        if request["method"] == "initialize":
            result = (
                '{"protocolVersion": "2025-11-25", "capabilities": {"tools": {}}, '
                '"instructions": "i \\ud800"}'
            )
        else:
            result = f'{{"tools": [{", ".join(listed)}]}}'
        return f'{{"jsonrpc": "2.0", "id": {request["id"]}, "result": {result}}}'

    def connect(name: str, config: McpServerConfig, environ: Mapping[str, str]) -> Transport:
        return ScriptedTransport(answer)

    source = McpToolSource(
        {"h": McpServerConfig(command=("unused",))}, environ={}, output_limit=2_000, connect=connect
    )

    async def main(server: LoopbackServer) -> tuple[RunResult, tuple[str, ...]]:
        config = AgentConfig(
            model="m", base_url=server.base_url, profile="eval", working_dir=str(tmp_path)
        )
        async with Session(Agent(config), tool_source=source) as session:
            return await session.run("go"), (await source.current()).problems

    with LoopbackServer([text_reply("done")]) as server:
        result, problems = asyncio.run(main(server))
    assert result.status is RunStatus.COMPLETED, result.error
    (request,) = server.requests
    shown = {t["function"]["name"]: t["function"] for t in request["tools"]}
    assert {name for name in shown if name.startswith("mcp__")} == {
        "mcp__h__described",
        "mcp__h__titled",
    }
    assert shown["mcp__h__described"]["description"].startswith("d \\ud800\n")
    assert shown["mcp__h__titled"]["description"].startswith("t \\udfff\n")
    assert "rule above.\n> i \\ud800" in request["messages"][0]["content"]
    number = "a number JSON cannot carry (NaN, Infinity, or past 1.8e308)"
    lone = "text that is not Unicode (a lone surrogate, such as \\ud800)"
    assert sorted(p for p in problems if "is left out" in p) == sorted(
        f"MCP server 'h': tool {name!r} is left out: its input schema holds "
        f"{lone if name in ('lone', 'key') else number}; every model request would carry it, "
        "and none could be sent"
        for name in schemas
    )


def test_a_model_name_stands_for_one_tool_and_vouches_only_for_it() -> None:
    # A name a model API refuses is made one it takes (get.item -> mcp__h__get_item): a tool
    # listed after get_item, in a changed list, took its name and with it every approval
    # given to the name ("always" among them); and read_only_tools' model-form name vouched
    # for whichever tool became it (peek.it under a readonly profile, without asking)
    listings = [["get_item", "peek.it"], ["get.item", "peek.it"]]
    transports: list[ScriptedTransport] = []

    def answer(request: Message) -> str:
        if request["method"] == "initialize":
            result: Message = {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}}}
        else:
            result = {"tools": [{"name": name} for name in listings[0]]}
        return json.dumps({"jsonrpc": "2.0", "id": request["id"], "result": result})

    def connect(name: str, config: McpServerConfig, environ: Mapping[str, str]) -> Transport:
        transports.append(ScriptedTransport(answer))
        return transports[-1]

    config = McpServerConfig(command=("unused",), read_only_tools=("mcp__h__peek_it",))
    source = McpToolSource({"h": config}, environ={}, output_limit=2_000, connect=connect)

    async def main() -> tuple[SourcedTools, SourcedTools]:
        first = await source.current()
        listings.pop(0)
        transports[0].deliver('{"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}')
        return first, await source.current()

    first, second = asyncio.run(main())
    shown = {tool.name: tool for tool in first.handlers}
    assert sorted(shown) == ["mcp__h__get_item", "mcp__h__peek_it"]
    assert shown["mcp__h__peek_it"].policy_for({}) is DANGEROUS
    assert [tool.name for tool in second.handlers] == ["mcp__h__peek_it"]
    assert second.problems == (
        "MCP server 'h': tool 'get.item' would become 'mcp__h__get_item', which is its tool "
        "'get_item' in this session (approvals given to the name were given to that tool); "
        "'get.item' is left out",
    )


def test_a_servers_request_is_answered_small_or_not_at_all() -> None:
    # redmcp21: an answer echoed the request's id and method whole and waited to be sent;
    # ten requests with 20 MB ids from a server that then read nothing grew the agent by
    # 2.4 GB (the same bytes in params: 170 MB). An id JSON-RPC does not give (too long, an
    # object, a float, true) is skipped as malformed; the method an answer names is cut.
    sent: list[Message] = []

    class Recording(ScriptedTransport):
        async def send(self, message: Message) -> None:
            sent.append(message)

    requests: list[Message] = [
        {"id": "i" * 257, "method": "ping"},
        {"id": {"a": ["i" * 1000]}, "method": "ping"},
        {"id": 1.5, "method": "ping"},
        {"id": True, "method": "ping"},
        {"id": "s" * 256, "method": "ping"},
        {"id": 7, "method": "sampling/createMessage" + "m" * 100_000},
    ]

    async def main() -> RpcPeer:
        peer = RpcPeer("h", Recording(lambda _: None), on_notification=lambda m, p: None)
        await peer.start()
        for request in requests:
            peer.receive(json.dumps({"jsonrpc": "2.0", **request}))
        await asyncio.sleep(0)  # the answers' tasks run
        await peer.aclose()
        return peer

    peer = asyncio.run(main())
    assert peer.malformed == 4
    assert [answer["id"] for answer in sent] == ["s" * 256, 7]
    refused = sent[1]["error"]["message"]
    assert refused.startswith("sampling/createMessage")
    assert "(100,022 characters)" in refused
    assert max(len(json.dumps(answer)) for answer in sent) < 400


def test_is_error_is_read_as_the_sdks_client_reads_it() -> None:
    # probemcp23b: isError was read as `is True` alone, so a server answering "isError":
    # "true" (or 1) had its failed call shown to the model as a success, and the run went on
    # as if the write had been made. The official SDK's client reads those as true (pydantic's
    # lax bool), "false" and 0 as false, and refuses anything else; so does ours now.
    flags: dict[str, object] = {"true": "true", "1": 1, "false": "false", "0": 0, "no": "NO"}
    flags |= {"maybe": "maybe", "object": {}, "2": 2, "absent": None}

    def answer(request: Message) -> str:
        if request["method"] == "initialize":
            result: Message = {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}}}
        else:
            flag = flags[request["params"]["name"]]
            result = {"content": [{"type": "text", "text": "x"}]}
            result |= {} if flag is None else {"isError": flag}
        return json.dumps({"jsonrpc": "2.0", "id": request["id"], "result": result})

    read: dict[str, object] = {}

    async def main() -> None:
        client = McpClient("h", ScriptedTransport(answer), on_list_changed=lambda: None)
        await client.start(timeout=5)
        for name in flags:
            try:
                read[name] = (await client.call_tool(name, {}, timeout=5)).get("isError")
            except McpProtocolError as exc:
                read[name] = str(exc)

    asyncio.run(main())
    assert {name: read[name] for name in ("true", "1", "false", "0", "no", "absent")} == {
        "true": True, "1": True, "false": False, "0": False, "no": False, "absent": False,
    }  # fmt: skip
    assert read["maybe"] == (
        "MCP server 'h' answered tools/call 'maybe' with isError 'maybe', not true or false"
    )
    assert str(read["object"]).endswith("with isError {}, not true or false")
    assert str(read["2"]).endswith("with isError 2, not true or false")
