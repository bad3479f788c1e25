"""What only the file store does: the directory layout, meta.json, secrets, torn lines,
format versions, the lock message, liveness and resume by replay."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import warnings
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import yaml

from rho_adapters.codec import encode_event_line, event_to_dict
from rho_adapters.pgstore import listing as pg_listing
from rho_adapters.store import (
    FileSessionStore,
    TornTraceWarning,
    list_sessions,
    load_recording,
    parse_trace,
    state_from_jsonl,
)
from rho_adapters.store.layout import host_name, resolve
from rho_domain import events as ev
from rho_domain.config import AgentConfig, Budget, DatabaseConfig
from rho_domain.errors import ConfigError, SessionLocked, SessionNotFound, TraceFormatError
from rho_domain.messages import AssistantMessage, ToolCall, ToolResultMessage, Usage, UserMessage
from rho_domain.not_run import INTERRUPTED_RESULT
from rho_domain.ports.store import EMPTY_ID, SessionRecord
from rho_domain.run import RunStatus


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[FileSessionStore]:
    made = FileSessionStore(tmp_path / "sessions", heartbeat=0.05)
    yield made
    for info in await made.list(limit=1000):
        await made.release(info.id)


def record(session_id: str = "s1", config: AgentConfig | None = None) -> SessionRecord:
    return SessionRecord(id=session_id, created_at=time.time(), config=config or AgentConfig())


CALL = ToolCall("c1", "bash", '{"command": "ls"}')
MID_TOOL: list[ev.Event] = [
    ev.RunStarted(at=1.0, run_id="r1", prompt="look"),
    ev.MessageAdded(at=1.0, message=UserMessage("look")),
    ev.UsageRecorded(at=1.1, usage=Usage(input_tokens=9, output_tokens=4), prompt_tokens=9),
    ev.MessageAdded(at=1.2, message=AssistantMessage(text="checking", tool_calls=(CALL,))),
    ev.ToolStarted(at=1.3, call=CALL),
]


async def test_directory_layout_and_meta_while_open(store: FileSessionStore) -> None:
    await store.create(record("s1", AgentConfig(model="m", working_dir="/srv")))
    await store.append("s1", MID_TOOL[:3])
    session_dir = store.root / "s1"
    assert {p.name for p in session_dir.iterdir()} >= {"config.yaml", "meta.json", "trace.jsonl"}
    meta = json.loads((session_dir / "meta.json").read_bytes())
    assert meta["pid"] == os.getpid()
    assert meta["host"] == host_name()
    assert meta["status"] == "running"
    assert meta["first_prompt"] == "look"
    assert meta["working_dir"] == "/srv"
    first_beat = meta["heartbeat"]
    for _ in range(500):  # the heartbeat thread beats every 0.05 s: wait for one (5 s at most)
        if json.loads((session_dir / "meta.json").read_bytes())["heartbeat"] > first_beat:
            break
        time.sleep(0.01)
    assert json.loads((session_dir / "meta.json").read_bytes())["heartbeat"] > first_beat
    await store.release("s1")
    closed = json.loads((session_dir / "meta.json").read_bytes())
    assert closed["pid"] is None
    assert closed["usage"]["input_tokens"] == 9


async def test_config_snapshot_never_holds_a_password(store: FileSessionStore) -> None:
    database = DatabaseConfig(
        engine="postgres",
        dsn="postgresql://app:hunter2@db.internal:5432/prod",
        password_env="PGPASSWORD",
        options={"password": "hunter2", "sslmode": "require", "auth_token": "hunter2"},
    )
    config = AgentConfig(databases={"prod": database}, budget=Budget(max_total_tokens=500))
    await store.create(record("s1", config))
    await store.release("s1")
    saved = (store.root / "s1" / "config.yaml").read_text()
    assert "hunter2" not in saved
    reopened, _ = await store.open("s1")
    prod = reopened.config.databases["prod"]
    assert prod.dsn == "postgresql://app@db.internal:5432/prod"
    assert prod.password_env == "PGPASSWORD"
    assert dict(prod.options) == {"sslmode": "require"}
    assert reopened.config.budget.max_total_tokens == 500  # "tokens" is not a secret


async def test_config_snapshot_holds_no_login_in_a_url_header_or_keyword_dsn(
    store: FileSessionStore,
) -> None:
    """Secrets in values, not keys: a base URL's or MCP URL's password, a keyword dsn's
    ``password=``, an MCP server's literal ``Authorization`` header were written to
    config.yaml (which the server's GET /api/sessions/ID answers and a PostgreSQL store's row
    holds); a header that names its token by ``${VAR}`` holds none and is kept for resume."""
    from rho_domain.config import McpServerConfig

    config = AgentConfig(
        base_url="https://proxyuser:pw-base-81c2@llm.internal/v1",
        databases={
            "kw": DatabaseConfig(
                engine="postgres", dsn="host=db dbname=app password='pw kw 4e0d' sslmode=require"
            ),
            "odd": DatabaseConfig(engine="mysql", dsn="mysql://app:pw-port-19ab@db:notaport/app"),
            "query": DatabaseConfig(
                engine="postgres",
                dsn="postgresql://db/app?user=app&password=pw-q-d41e&sslmode=require",
            ),
            "ora": DatabaseConfig(engine="oracle", dsn="scott/pw-ora-2b7c@db:1521/xe"),
        },
        mcp_servers={
            # redmcp25: a key in a URL's query (an MCP gateway's ?api_key=) was stored
            "gate": McpServerConfig(
                url="https://gw.internal/mcp?team=ops&api_key=pw-query-7e1f&apiKey=pw-camel-2c4d"
                "&key=pw-bare-9a0b&token=${GW_TOKEN}#top"
            ),
            "docs": McpServerConfig(
                url="https://bot:pw-mcp-55d1@mcp.internal/mcp",
                headers={
                    "Authorization": "Bearer pw-hdr-0c7a",
                    "X-Api-Key": "pw-key-a3b9",
                    "Proxy-Authorization": "Basic ${PROXY_BASIC}",
                    "X-Team": "blue",
                },
            ),
        },
    )
    await store.create(record("s1", config))
    await store.release("s1")
    saved = (store.root / "s1" / "config.yaml").read_text()
    for secret in ("pw-base-81c2", "pw kw 4e0d", "pw-port-19ab", "pw-mcp-55d1", "pw-hdr-0c7a",
                   "pw-key-a3b9", "pw-q-d41e", "pw-ora-2b7c", "pw-query-7e1f", "pw-camel-2c4d",
                   "pw-bare-9a0b"):  # fmt: skip
        assert secret not in saved
    reopened, _ = await store.open("s1")
    assert reopened.config.base_url == "https://proxyuser@llm.internal/v1"
    assert reopened.config.databases["kw"].dsn == "host=db dbname=app sslmode=require"
    assert reopened.config.databases["query"].dsn == "postgresql://db/app?user=app&sslmode=require"
    assert reopened.config.databases["ora"].dsn == "scott@db:1521/xe"
    gate = reopened.config.mcp_servers["gate"].url
    assert gate == "https://gw.internal/mcp?team=ops&token=${GW_TOKEN}#top"
    docs = reopened.config.mcp_servers["docs"]
    assert docs.url == "https://bot@mcp.internal/mcp"
    assert dict(docs.headers) == {"Proxy-Authorization": "Basic ${PROXY_BASIC}", "X-Team": "blue"}


async def test_profile_object_survives_the_snapshot(store: FileSessionStore) -> None:
    from rho_domain.permissions import developer_profile

    config = AgentConfig(profile=developer_profile())
    await store.create(record("s1", config))
    await store.release("s1")
    assert yaml.safe_load((store.root / "s1" / "config.yaml").read_text())["profile"]["name"] == (
        "developer"
    )
    reopened, _ = await store.open("s1")
    assert reopened.config == config


async def test_each_session_keeps_its_own_config_when_many_share_one(
    store: FileSessionStore,
) -> None:
    # config.yaml's text is reused while the configs are the same (a service's sessions of
    # one agent): a config that differs, even where == would not tell, gets its own.
    shared = AgentConfig(model="m", vars={"n": "1"})
    await store.create(record("a", shared))
    await store.create(record("b", shared))
    await store.create(record("c", AgentConfig(model="m", vars={"n": "2"})))
    await store.create(record("d", AgentConfig(model="m", response_format={"strict": True})))
    await store.create(record("e", AgentConfig(model="m", response_format={"strict": 1})))
    await store.create(record("f", shared))
    text = {s: (store.root / s / "config.yaml").read_text() for s in "abcdef"}
    assert text["a"] == text["b"] == text["f"]
    assert yaml.safe_load(text["c"])["vars"] == {"n": "2"}
    assert "strict: true" in text["d"]
    assert "strict: 1" in text["e"]  # 1 == True, but not the same setting
    assert yaml.safe_load(text["f"])["vars"] == {"n": "1"}


async def test_torn_last_line_is_skipped_moved_aside_and_appends_continue(
    store: FileSessionStore,
) -> None:
    await store.create(record())
    await store.append("s1", MID_TOOL[:2])
    await store.release("s1")
    trace = store.root / "s1" / "trace.jsonl"
    with trace.open("ab") as handle:
        handle.write(encode_event_line(MID_TOOL[2])[:25])
    with pytest.warns(TornTraceWarning, match="torn last line"):
        _, events = await store.open("s1")
    assert list(events) == MID_TOOL[:2]
    await store.append("s1", MID_TOOL[2:])
    await store.release("s1")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the file is clean again
        _, events = await store.open("s1")
    assert list(events) == MID_TOOL
    assert (store.root / "s1" / "trace.torn").exists()


def test_a_complete_last_line_without_newline_is_kept() -> None:
    data = b"".join(encode_event_line(e) for e in MID_TOOL).rstrip(b"\n")
    read = parse_trace(data)
    assert list(read.events) == MID_TOOL
    assert read.torn == b""


def test_a_future_format_version_is_an_error_not_a_skip() -> None:
    future = json.dumps(event_to_dict(MID_TOOL[0]) | {"v": 99}).encode() + b"\n"
    with pytest.raises(TraceFormatError, match="newer"):
        parse_trace(encode_event_line(MID_TOOL[1]) + future)


async def test_a_future_version_last_line_without_newline_is_an_error_not_torn(
    store: FileSessionStore,
) -> None:
    # The torn-tail path decodes the last line on its own; a newer version there must still
    # raise, not be skipped as torn and moved aside (that would resume the wrong history).
    future = json.dumps(event_to_dict(MID_TOOL[2]) | {"v": 99}).encode()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no TornTraceWarning either
        with pytest.raises(TraceFormatError, match="newer"):
            parse_trace(encode_event_line(MID_TOOL[1]) + future)
    await store.create(record())
    await store.append("s1", MID_TOOL[:2])
    await store.release("s1")
    trace = store.root / "s1" / "trace.jsonl"
    with trace.open("ab") as handle:
        handle.write(future)
    before = trace.read_bytes()
    with pytest.raises(TraceFormatError, match="newer"):
        await store.open("s1")
    assert trace.read_bytes() == before
    assert not (store.root / "s1" / "trace.torn").exists()


def test_a_line_of_another_version_names_the_file_the_line_and_what_to_do() -> None:
    """Before, a trace a newer rho-agent wrote was refused with "unknown event kind
    'checkpoint' in trace" (or "trace format version 2 is newer...") and no more: not which
    session's file, nor which line, nor that an upgrade reads it."""
    good = encode_event_line(MID_TOOL[0]) + b"\n" + encode_event_line(MID_TOOL[1])
    kinds = {
        b'{"v":1,"kind":"checkpoint","at":1.0}\n': "unknown event kind 'checkpoint'",
        b'{"v":2,"kind":"message","at":1.0}\n': "trace format version 2 is newer",
        b'{"kind":"message","at":1.0}\n': "trace line has no format version 'v'",
        # a field missing was named by its bare name: "malformed 'usage' event: 'at'"
        b'{"v":1,"kind":"usage","usage":{}}\n': "malformed 'usage' event: its field 'at' is",
    }
    for line, said in kinds.items():
        with pytest.raises(TraceFormatError) as refused:
            parse_trace(good + line, source="/s/abc/trace.jsonl")
        assert str(refused.value).startswith(f"/s/abc/trace.jsonl: line 4: {said}")
        assert "upgrade rho-agent to read this session" in str(refused.value)
        assert str(refused.value).endswith("the file was left as it is")


async def test_future_version_fails_open_and_releases_the_lock(store: FileSessionStore) -> None:
    await store.create(record())
    await store.release("s1")
    with (store.root / "s1" / "trace.jsonl").open("ab") as handle:
        handle.write(json.dumps(event_to_dict(MID_TOOL[0]) | {"v": 2}).encode() + b"\n")
    with pytest.raises(TraceFormatError):
        await store.open("s1")
    (store.root / "s1" / "trace.jsonl").write_bytes(b"")
    await store.open("s1")  # the failed open did not keep the lock


async def test_lock_held_by_another_process_names_its_pid(tmp_path: Path) -> None:
    root = tmp_path / "sessions"
    script = (
        "import asyncio, sys, time\n"
        "from rho_adapters.store import FileSessionStore\n"
        "from rho_domain.config import AgentConfig\n"
        "from rho_domain.ports.store import EMPTY_ID, SessionRecord\n"
        "async def main():\n"
        f"    s = FileSessionStore({str(root)!r})\n"
        "    await s.create(SessionRecord(id='held', created_at=1.0, config=AgentConfig()))\n"
        "    print('ready', flush=True)\n"
        "    sys.stdin.readline()\n"
        "asyncio.run(main())\n"
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", script], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == "ready"
        with pytest.raises(SessionLocked, match=f"pid {proc.pid} on"):
            await FileSessionStore(root).open("held")
        [info] = list_sessions(root)
        assert info.liveness == "idle"
    finally:
        proc.communicate("\n", timeout=30)
    other = FileSessionStore(root)
    await other.open("held")  # released when its process ended
    await other.release("held")


async def test_open_accepts_a_directory_path(store: FileSessionStore) -> None:
    await store.create(record("path1"))
    await store.release("path1")
    got, _ = await store.open(str(store.root / "path1"))
    assert got.id == "path1"
    with pytest.raises(SessionNotFound):
        await store.open(str(store.root / "missing"))


async def test_a_crashed_run_is_stale_then_marked_interrupted_on_open(
    store: FileSessionStore,
) -> None:
    await store.create(record())
    await store.append("s1", MID_TOOL)
    meta_path = store.root / "s1" / "meta.json"
    await store.release("s1")
    meta = json.loads(meta_path.read_bytes())
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    )
    meta.update(pid=int(dead.stdout), host=host_name(), heartbeat=time.time())
    meta_path.write_text(json.dumps(meta))  # what a SIGKILLed holder leaves behind
    assert [i.liveness for i in list_sessions(store.root)] == ["stale"]
    await store.open("s1")
    assert json.loads(meta_path.read_bytes())["status"] == "interrupted"


async def test_a_meta_json_of_another_version_is_read_without_its_odd_fields(
    store: FileSessionStore, caplog: pytest.LogCaptureFixture
) -> None:
    """Before, a meta.json whose created_at was an ISO date (another version, a hand edit)
    ended --list, monitor ps, export and --resume with "ValueError: could not convert string
    to float", for every session in the store; a heartbeat past a float's range with
    OverflowError. Such fields are left out and named; opening writes meta.json again."""
    await store.create(record())
    await store.append("s1", MID_TOOL)
    await store.release("s1")
    meta_path = store.root / "s1" / "meta.json"
    meta = json.loads(meta_path.read_bytes())
    odd = {"created_at": "2026-11-27T10:00:00Z", "updated_at": "x", "runs": [1], "status": 5,
           "usage": {"input_tokens": "12"}, "labels": ["a"], "pid": "12", "heartbeat": 10**400,
           "from_a_newer_version": {"kept": True}}  # fmt: skip
    meta_path.write_text(json.dumps(meta | odd))
    with caplog.at_level("WARNING", logger="rho_adapters.store"):
        (listed,) = list_sessions(store.root)
    # dated by the trace's first event, not 1970-01-01 ("20784d ago" in --list)
    assert (listed.id, listed.status, listed.created_at, listed.usage) == (
        "s1",
        "unknown",
        MID_TOOL[0].at,
        Usage(),
    )
    assert "created_at (str), heartbeat (int), labels (list), pid (str)" in caplog.text
    got = load_recording(store.root / "s1")
    assert got.record.created_at == MID_TOOL[0].at  # the trace's first time
    assert len(got.events) == len(MID_TOOL)
    # the PostgreSQL store's summary of another version, read the same way
    pg_row = ("s1", json.dumps(odd), None, False, False, "{}", 7.0)
    assert pg_listing.info_of(pg_row).created_at == 7.0  # the row's created_at column
    await store.open("s1")
    rewritten = json.loads(meta_path.read_bytes())
    assert (rewritten["created_at"], rewritten["runs"]) == (MID_TOOL[0].at, 1)
    await store.release("s1")


async def test_a_config_yaml_of_another_version_says_what_to_do(store: FileSessionStore) -> None:
    """Before, a stored config.yaml holding a key a newer rho-agent writes was refused with
    "unknown key 'new_setting' @ config" alone, by --resume and export alike."""
    await store.create(record())
    await store.release("s1")
    config = store.root / "s1" / "config.yaml"
    config.write_text(config.read_text() + "new_setting: 3\n")
    refusals = []
    with pytest.raises(ConfigError) as refused:
        load_recording(store.root / "s1")  # export, fork, replay
    refusals.append(refused.value)
    with pytest.raises(ConfigError) as refused:
        await store.open("s1")  # --resume
    refusals.append(refused.value)
    for said in refusals:
        assert str(said).startswith(f"{config}: unknown key 'new_setting' @ config. ")
        assert str(said).endswith(
            "another rho-agent version or edited: upgrade rho-agent to read it, or correct "
            "that key in the file; its trace is unchanged"
        )


def test_an_empty_session_id_is_said_to_be_one_by_both_stores(tmp_path: Path) -> None:
    """Before: "no session matches ''" (and in PostgreSQL ' ' was a prefix looked up)."""
    for blank in ("", " "):
        with pytest.raises(SessionNotFound) as by_files:
            resolve(tmp_path, blank)
        with pytest.raises(SessionNotFound) as by_pg:
            pg_listing.resolve_id(None, blank, "me@here")  # refused before the database is asked
        assert str(by_files.value) == str(by_pg.value) == f"session {blank!r}: {EMPTY_ID}"


async def test_paused_liveness_comes_from_the_pause_file(store: FileSessionStore) -> None:
    await store.create(record())
    await store.append("s1", MID_TOOL[:1])
    (store.root / "s1" / "pause").touch()
    assert [i.liveness for i in list_sessions(store.root)] == ["paused"]


def test_state_from_jsonl_repairs_a_call_without_result(tmp_path: Path) -> None:
    trace = tmp_path / "trace.jsonl"
    trace.write_bytes(b"".join(encode_event_line(e) for e in MID_TOOL))
    for source in (trace, str(trace), trace.read_bytes()):
        state = state_from_jsonl(source)
        assert state.usage == Usage(input_tokens=9, output_tokens=4)
        last = state.messages[-1]
        assert isinstance(last, ToolResultMessage)
        assert (last.call_id, last.content, last.is_error) == ("c1", INTERRUPTED_RESULT, True)


def test_unreadable_middle_line_is_skipped_with_a_warning() -> None:
    lines = [encode_event_line(e) for e in MID_TOOL[:3]]
    lines.insert(1, b"{not json\n")
    with pytest.warns(TornTraceWarning, match="unreadable line 2"):
        read = parse_trace(b"".join(lines))
    assert list(read.events) == MID_TOOL[:3]


@pytest.mark.parametrize("cut", [0, 2, 5, 7, 9])
def test_summarizing_a_trace_matches_folding_every_event(cut: int) -> None:
    from rho_adapters.store.meta import fold_events, initial_meta, summarize_trace

    total = Usage(input_tokens=9, output_tokens=4)
    trace = [
        *MID_TOOL,
        ev.RunEnded(at=2.0, run_id="r1", status=RunStatus.ERROR, session_usage=total),
        ev.RunStarted(at=3.0, run_id="r2", prompt="again"),
        ev.UsageRecorded(at=3.1, usage=Usage(input_tokens=1), prompt_tokens=1),
        ev.RunEnded(at=4.0, run_id="r2", status=RunStatus.COMPLETED, session_usage=total + total),
        ev.UsageRecorded(at=5.0, usage=Usage(output_tokens=2), prompt_tokens=1),
    ][:cut]
    one = record()
    folded, summarized = initial_meta(one), initial_meta(one)
    fold_events(folded, trace)
    summarize_trace(summarized, trace)
    assert summarized == folded


async def test_a_session_whose_meta_json_is_unreadable_is_listed_saying_so(
    store: FileSessionStore,
) -> None:
    """A meta.json cut short (a full disk, a hand edit) was listed as created in 1970, sorted
    below every other session, with no word of why."""
    for session_id in ("cut", "whole"):
        await store.create(record(session_id))
        await store.release(session_id)
    meta = store.root / "cut" / "meta.json"
    meta.write_text(meta.read_text()[:40])

    listed = {info.id: info for info in list_sessions(store.root)}

    cut = listed["cut"]
    assert cut.status == "unknown"
    assert cut.first_prompt == (
        "(meta.json unreadable; rho-agent --resume =cut rebuilds it from the trace)"
    )
    assert abs(cut.created_at - listed["whole"].created_at) < 3600


def test_a_meta_json_without_created_at_is_dated_by_its_directory(tmp_path: Path) -> None:
    """Before, a session whose meta.json had no created_at (a hand edit, or one another
    version wrote that this one drops) and no readable trace was listed as created
    1970-01-01, "20784d ago" in --list; now its directory's time dates it."""
    for name, trace in (("empty", b""), ("garbage", b"not json\n"), ("untimed", b'{"at": "x"}\n')):
        (tmp_path / name).mkdir()
        (tmp_path / name / "meta.json").write_text('{"status": "done"}')
        (tmp_path / name / "trace.jsonl").write_bytes(trace)
    os.utime(tmp_path / "garbage", (5000.0, 5000.0))
    listed = {i.id: i.created_at for i in list_sessions(tmp_path)}
    assert listed["garbage"] == 5000.0
    assert min(listed["empty"], listed["untimed"]) > 1e9
