"""The monitor and export commands over a real sessions directory."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from store_support import build_session

from rho_adapters.clock import SystemClock
from rho_adapters.fakes import call, text, tools
from rho_adapters.store import FileSessionStore
from rho_entry.cli import export, monitor


@pytest.fixture
async def home(tmp_path: Path) -> AsyncIterator[Path]:
    """A rho-agent home with two finished sessions (ids ab1..., ab2...) and one open one."""
    store = FileSessionStore(tmp_path / "sessions", heartbeat=0.05)
    for session_id, prompt in (("ab1111", "why is the disk full?"), ("ab2222", "list tables")):
        turns = [tools(call("echo", {"text": "du"}), input_tokens=3), text("because logs")]
        session = build_session(turns, store=store, session_id=session_id, clock=SystemClock())
        await session.run(prompt)
        await session.close()
    live = build_session([text("hi")], store=store, session_id="cd3333", clock=SystemClock())
    await live.run("hello")  # left open: an idle REPL
    yield tmp_path
    await live.close()


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    capsys.readouterr()
    code = monitor.main(argv)
    out, err = capsys.readouterr()
    return code, out, err


async def test_ps_table_lists_newest_first_with_liveness(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run([str(home), "ps"], capsys)
    assert code == 0
    header, *rows = out.splitlines()
    assert header.split()[:5] == ["ID", "STATUS", "LIVENESS", "MODEL", "ELAPSED"]
    assert [r.split()[0] for r in rows] == ["cd3333", "ab2222", "ab1111"]
    assert rows[0].split()[1:3] == ["completed", "idle"]
    assert "why is the disk full?" in rows[2]


async def test_ambiguous_and_unknown_prefixes_are_errors(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run([str(home / "sessions"), "pause", "ab"], capsys)
    assert code == 1
    assert "ambiguous" in err
    assert "ab1111" in err
    assert "ab2222" in err
    assert not (home / "sessions" / "ab1111" / "pause").exists()
    code, _, err = run([str(home), "directive", "zz", "hello"], capsys)
    assert (code, "no session matches" in err) == (1, True)


async def test_watch_formats_and_json_prints_raw_lines(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run([str(home), "watch", "ab1", "--once"], capsys)
    assert code == 0
    assert "run started: why is the disk full?" in out
    assert "tool echo" in out
    assert "run ended: completed" in out
    code, out, _ = run([str(home), "watch", "ab1", "--json"], capsys)  # finished: no follow
    lines = [json.loads(line) for line in out.splitlines()]
    assert lines[0]["kind"] == "run_start"
    assert all(line["v"] == 1 for line in lines)


async def test_cancel_all_targets_live_sessions_only(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run([str(home), "cancel", "--all"], capsys)
    assert code == 0
    assert "cd3333" in out
    assert (home / "sessions" / "cd3333" / "cancel").exists()
    assert not (home / "sessions" / "ab1111" / "cancel").exists()


async def test_usage_errors_exit_1(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert monitor.main([str(home), "frobnicate"]) == 1
    assert monitor.main([str(home), "cancel"]) == 1
    assert monitor.main([str(home), "pause"]) == 1


@pytest.mark.parametrize(
    ("command", "sentinel"),
    [(["pause"], "pause"), (["cancel"], "cancel"), (["directive"], "directives.jsonl")],
)
async def test_signals_to_a_finished_session_are_refused(
    home: Path, capsys: pytest.CaptureFixture[str], command: list[str], sentinel: str
) -> None:
    extra = ["look at /var/log"] if command == ["directive"] else []
    code, out, err = run([str(home), *command, "ab1", *extra], capsys)
    assert code == 1
    assert "session ab1111 is not running (completed)" in err
    assert "rho-agent --resume =ab1111" in err  # a short id bare is a prefix: said whole
    assert out == ""
    assert not (home / "sessions" / "ab1111" / sentinel).exists()


async def test_signals_to_an_open_session_are_delivered(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run([str(home), "directive", "cd3", "check the logs"], capsys)[0] == 0
    assert run([str(home), "pause", "cd3"], capsys)[0] == 0
    assert (home / "sessions" / "cd3333" / "pause").exists()
    assert run([str(home), "cancel", "cd3"], capsys)[0] == 0
    assert (home / "sessions" / "cd3333" / "cancel").exists()


async def test_export_prints_one_json_document(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    capsys.readouterr()
    assert export.main(["ab2", "--dir", str(home)]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["session"]["id"] == "ab2222"
    assert document["config"]["model"] == "scripted"
    kinds = [e["kind"] for e in document["events"]]
    assert kinds[0] == "run_start"
    assert kinds[-1] == "run_end"
    assert export.main(["nope", "--dir", str(home)]) == 1


async def test_a_short_id_others_begin_with_is_reached_whole(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A session ``ab1`` beside ab1111 (a library user's chosen id) was "ambiguous ... type
    more characters" for every command, no spelling reaching it; ``=ab1`` now does, and a
    command that resolves it hands the store the whole spelling (bare, it was a prefix again)."""
    store = FileSessionStore(home / "sessions", heartbeat=0.05)
    short = build_session([text("ok")], store=store, session_id="ab1", clock=SystemClock())
    await short.run("the short one")
    await short.close()
    code, _, err = run([str(home), "watch", "ab1", "--once"], capsys)
    assert (code, "or =ab1 for the session ab1 itself" in err) == (1, True), err
    code, out, err = run([str(home), "watch", "=ab1", "--once"], capsys)
    assert (code, "run started: the short one" in out) == (0, True), err
    code, _, err = run([str(home), "pause", "=ab1"], capsys)
    assert "session ab1 is not running (completed)" in err
    assert "rho-agent --resume =ab1 " in err
    assert export.main(["=ab1", "--dir", str(home)]) == 0
    assert json.loads(capsys.readouterr().out)["session"]["id"] == "ab1"


def test_importing_the_monitor_stays_light() -> None:
    code = (
        "import sys, rho_entry.cli.monitor\n"
        "heavy = [m for m in ('httpx', 'yaml', 'cattrs') if m in sys.modules]\n"
        "print(','.join(heavy))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


async def test_a_heartbeat_from_the_future_holds_no_session(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """meta.json is anyone's who writes the session directory: a heartbeat written as 1e18,
    with pid 1 on this host (alive) or any pid on another host (not asked), held the session
    for ever: ``watch`` followed it without end, and a server refused to drive it (another
    process drives it). A beat that far ahead is as stale as one that far behind."""
    from rho_adapters.store import FileSessions
    from rho_adapters.store.layout import host_name

    meta = home / "sessions" / "ab2222" / "meta.json"
    sessions = FileSessions(home / "sessions")
    for host in (host_name(), "elsewhere"):
        data = {**json.loads(meta.read_text()), "status": "running", "pid": 1, "host": host}
        meta.write_text(json.dumps({**data, "heartbeat": 1e18}))
        assert (await sessions.info("ab2222")).liveness == "stale", host
    code, out, _ = run([str(home), "watch", "ab2", "--json"], capsys)  # ends on its own
    assert (code, json.loads(out.splitlines()[-1])["kind"]) == (0, "run_end")


@pytest.mark.parametrize("pid", [2**31, 2**63, 10**30])
async def test_a_pid_no_process_can_have_is_no_crash(
    home: Path, capsys: pytest.CaptureFixture[str], pid: int
) -> None:
    """A meta.json whose ``pid`` no ``pid_t`` holds, on this host with a fresh beat, made
        ``os.kill(pid, 0)`` raise ``OverflowError``: ``--list``, ``monitor ps``, ``export`` and a
        server's listing ended with a traceback, for every session of the store. Now the pid is
        left out as of another type (no process holds the session: ``stale``), and ``liveness``
    given it anyway finds no such process."""
    import time

    from rho_adapters.store import FileSessions
    from rho_adapters.store.layout import host_name, liveness

    meta = home / "sessions" / "ab2222" / "meta.json"
    data = {**json.loads(meta.read_text()), "status": "running", "pid": pid}
    data = {**data, "host": host_name(), "heartbeat": time.time()}
    meta.write_text(json.dumps(data))
    listed = {i.id: i for i in await FileSessions(home / "sessions").sessions()}
    assert listed["ab2222"].liveness == "stale"  # no process holds it
    code, out, _ = run([str(home), "ps"], capsys)
    assert code == 0
    assert "ab2222" in out
    assert liveness(data, paused=False, now=time.time()) == "stale"  # read without the check
