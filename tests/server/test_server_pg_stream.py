"""A stream read live from the server that holds a PostgreSQL-stored session while its
approval is answered there: the answer is persisted without being announced, and the lines
after it keep the store's numbers (ids are line numbers, so Last-Event-ID resumes on any
server). The same path as the file store's (tests/server/test_server_stream.py)."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "store"))
from pg_rig import pg_server_url, schema_url
from server_support import UvicornThread, app_for, place, shown_in, sse_blocks

from rho_adapters.fakes import ScriptedModel, call, text, tools
from rho_entry.config.stores import choose_store

__all__ = ["pg_server_url"]

WRITE = call("write", {"path": "out.txt", "content": "hi\n"}, id="c1")


async def test_an_approval_answered_here_keeps_the_line_numbers(
    tmp_path: Path, pg_server_url: str
) -> None:
    where = place(tmp_path)
    chosen = choose_store(schema_url(pg_server_url), {}, origin="the test")
    model = ScriptedModel([tools(WRITE), tools(call("list", {"path": "."})), text("All done.")])
    app = app_for(where, model, store=chosen)
    with UvicornThread(app) as server:
        async with httpx.AsyncClient(base_url=server.url, headers=server.auth, timeout=30) as http:
            created = await http.post(
                "/api/sessions", json={"prompt": "write", "profile": "developer"}
            )
            sid = created.json()["id"]
            first: list[dict[str, str]] = []
            async with http.stream("GET", f"/api/sessions/{sid}/stream") as response:
                async for block in sse_blocks(response):
                    first.append(block)
                    if block.get("event") == "approval_requested":
                        break
            last_id = max(int(b["id"]) for b in first if "id" in b)

            async def live() -> list[dict[str, str]]:
                async with http.stream(
                    "GET",
                    f"/api/sessions/{sid}/stream",
                    params={"until": "idle"},
                    headers={"Last-Event-ID": str(last_id)},
                ) as response:
                    return [b async for b in sse_blocks(response)]

            answer = await http.post(
                f"/api/sessions/{sid}/approvals/c1",
                json={
                    "decision": "approve",
                    "digest": shown_in(where.work, WRITE.name, WRITE.arguments),
                },
            )
            assert answer.status_code == 202, answer.text
            second = await asyncio.wait_for(live(), 30)
    lines = await chosen.sessions.trace(sid)
    stored = {line.seq: line.data for line in lines}
    streamed = [b for b in first + second if "id" in b]
    assert [int(b["id"]) for b in streamed] == sorted(stored)  # no gap, no duplicate
    for block in streamed:  # each id is the store's line of that number, byte for byte
        body = block["data"].replace(f'{{"seq":{block["id"]},', "{", 1)
        assert body.encode() == stored[int(block["id"])]
    kinds = [b["event"] for b in streamed]
    assert "approval_resolved" in kinds
    assert "tool_end" in kinds[kinds.index("approval_resolved") :]
    assert (tmp_path / "work" / "out.txt").read_text() == "hi\n"
