"""A trace line of the right kind whose numbers no reader can show: ``"at": NaN`` (Python's
json reads ``NaN``, ``Infinity`` and ``1e999`` as floats), a time past year 9999, a token
count of ``1e999``. Before, one such line in one session took down the server's listing of
every session (``ValueError: Out of range float values are not JSON compliant`` from the
answer's encoding; ``OverflowError`` from the count), that session's detail, and ``monitor
watch`` and the ATIF export with a traceback; the stream sent the line with its ``NaN``,
which a browser's ``JSON.parse`` refuses."""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

import httpx
import pytest
from server_support import (
    UvicornThread,
    app_for,
    client_for,
    finished_sessions,
    place,
    sse_blocks,
    wait_idle,
)

from rho_adapters.codec import decode_event_line
from rho_adapters.fakes import FunctionModel, text
from rho_adapters.store.trace import TRACE_BYTES
from rho_domain.errors import TraceFormatError
from rho_entry.cli.monitor_format import format_event

_USAGE = {"input_tokens": 1, "output_tokens": 1, "cached_tokens": 0, "reasoning_tokens": 0}


def _run_end(at: str, tokens: str = "1") -> bytes:
    usage = json.dumps(_USAGE).replace('"input_tokens": 1', f'"input_tokens": {tokens}')
    return (
        f'{{"v":1,"kind":"run_end","at":{at},"run_id":"r","status":"completed","text":"x",'
        f'"usage":{usage},"session_usage":{usage},"error":null,"output":null}}'
    ).encode()


_ODD_TIMES = ("NaN", "Infinity", "-Infinity", "1e999", "1e300")


async def test_a_trace_line_with_numbers_no_reader_can_show_leaves_the_listing_whole(
    tmp_path: Path,
) -> None:
    where = place(tmp_path)
    app = app_for(where, FunctionModel(lambda request: text("done")))
    async with client_for(app) as client:
        ids = await finished_sessions(client, 2)
        odd_time, odd_count = (where.sessions / sid / "trace.jsonl" for sid in ids)
        odd_time.write_bytes(odd_time.read_bytes() + _run_end("NaN") + b"\n")
        odd_count.write_bytes(odd_count.read_bytes() + _run_end("1", tokens="1e999") + b"\n")
        listed = await client.get("/api/sessions")
        assert listed.status_code == 200, listed.text
        assert sorted(row["id"] for row in listed.json()["sessions"]) == sorted(ids)
        detail = await client.get(f"/api/sessions/{ids[0]}")
        for answer in (  # the stored data, not the server: 500 'internal' before
            detail,
            await client.post(f"/api/sessions/{ids[0]}/resume", json={}),
            await client.post(f"/api/sessions/{ids[0]}/chat", json={"prompt": "again"}),
        ):
            assert answer.status_code == 409, answer.text  # the line is named, not shown
            error = answer.json()["error"]
            assert error["code"] == "unreadable_session", error
            assert "line 8: malformed 'run_end' event: its time 'at' is nan" in error["message"]
        streamed = await client.get(f"/api/sessions/{ids[0]}/stream", params={"until": "idle"})
        assert 'id: 8\nevent: unreadable\ndata: {"seq": 8, "kind": "unreadable"}' in streamed.text
        assert "NaN" not in streamed.text  # a browser's JSON.parse refuses it
        os.truncate(odd_count, TRACE_BYTES + 1)  # past its bound (sparse): not read either
        for answer in (
            await client.get(f"/api/sessions/{ids[1]}"),
            await client.post(f"/api/sessions/{ids[1]}/chat", json={"prompt": "again"}),
            # the stream's feed met the bound in its body, after the 200: the connection cut
            await client.get(f"/api/sessions/{ids[1]}/stream", params={"until": "idle"}),
        ):
            assert answer.status_code == 409, answer.text  # 500 'internal' before
            error = answer.json()["error"]
            assert error["code"] == "unreadable_session", error
            assert f"trace.jsonl: more than {TRACE_BYTES} bytes" in error["message"]


def test_each_reader_refuses_or_shows_such_a_time_without_failing() -> None:
    for at in _ODD_TIMES:
        with pytest.raises(TraceFormatError, match=r"its time 'at' is .*, not a time"):
            decode_event_line(_run_end(at))
        assert format_event(_run_end(at)).startswith("?  run ended"), at
    assert decode_event_line(_run_end("1795825291.5")).at == 1795825291.5
    from rho_entry.server.json_answer import JsonAnswer  # Starlette: not at collection

    answer = JsonAnswer({"a": [math.nan, 1.5, {"b": math.inf}], "c": -math.inf})
    assert answer.body == b'{"a":[null,1.5,{"b":null}],"c":null}'


async def test_a_trace_grown_past_its_bound_while_streamed_ends_the_stream_saying_so(
    tmp_path: Path,
) -> None:
    """On a live server: the stream's 200 was sent, then its poll met the trace past its
    bound. Before, the response was cut mid-chunk (the client: 'peer closed connection
    without sending complete message body') and uvicorn logged a traceback."""
    where = place(tmp_path)
    app = app_for(where, FunctionModel(lambda request: text("done")))
    async with client_for(app) as client:
        sid = (await client.post("/api/sessions", json={"prompt": "hi"})).json()["id"]
        await wait_idle(client, sid)
    trace = where.sessions / sid / "trace.jsonl"
    with UvicornThread(app_for(where, FunctionModel(lambda r: text("x")))) as server:
        async with (
            httpx.AsyncClient(base_url=server.url, headers=server.auth, timeout=30) as http,
            http.stream("GET", f"/api/sessions/{sid}/stream") as response,
        ):
            blocks = []
            async for block in sse_blocks(response):
                blocks.append(block)
                if block.get("event") == "run_end":
                    os.truncate(trace, TRACE_BYTES + 1)  # sparse: past the bound
    error = json.loads(blocks[-1]["data"])
    assert (blocks[-1]["event"], "id" in blocks[-1]) == ("error", False), blocks[-1]
    assert error["error_type"] == "StoredPastBound", error
    assert f"trace.jsonl: more than {TRACE_BYTES} bytes" in error["message"], error
