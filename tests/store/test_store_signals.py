"""FileSignals and the monitor-side helpers, alone and driving a real Session loop."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

import pytest
from store_support import build_session

from rho_adapters.fakes import call, text, tools
from rho_adapters.store import (
    FileSessionStore,
    FileSignals,
    add_directive,
    read_directives,
    request_cancel,
    request_pause,
    request_resume,
)
from rho_adapters.store import signals as signals_module
from rho_domain.errors import StoreError
from rho_domain.messages import UserMessage
from rho_domain.ports.signals import Directive
from rho_domain.state import State


@pytest.fixture
def session_dir(tmp_path: Path) -> Path:
    path = tmp_path / "sessions" / "s1"
    path.mkdir(parents=True)
    return path


async def test_cancel_is_requested_and_consumed(session_dir: Path) -> None:
    signals = FileSignals(session_dir.parent, poll=0.01)
    assert not await signals.cancel_requested("s1")
    waiter = asyncio.create_task(signals.wait_for_cancel("s1"))
    await asyncio.sleep(0.03)
    assert not waiter.done()
    request_cancel(session_dir)
    await asyncio.wait_for(waiter, timeout=5)
    assert await signals.cancel_requested("s1")
    await signals.clear_cancel("s1")
    await signals.clear_cancel("s1")  # idempotent
    assert not await signals.cancel_requested("s1")


async def test_pause_and_resume(session_dir: Path) -> None:
    signals = FileSignals(lambda session_id: session_dir)
    request_pause(session_dir)
    assert await signals.is_paused("s1")
    assert request_resume(session_dir)
    assert not request_resume(session_dir)
    assert not await signals.is_paused("s1")


async def test_signal_paths_kept_per_session_are_bounded_and_a_dropped_one_is_found_again(
    tmp_path: Path,
) -> None:
    asked: list[str] = []

    def locate(session_id: str) -> Path:
        asked.append(session_id)
        return tmp_path / session_id

    signals = FileSignals(locate)
    names = [f"s{i}" for i in range(signals_module.PLACES_KEPT + 1)]
    for session_id in names:  # no directory: nothing is set
        assert not await signals.is_paused(session_id)
        assert not await signals.is_paused(session_id)  # the second ask: kept
    assert asked == names
    assert len(signals._places) == signals_module.PLACES_KEPT  # "s0", the oldest, went
    (tmp_path / "s0").mkdir()
    request_pause(tmp_path / "s0")
    assert await signals.is_paused("s0")
    assert asked == [*names, "s0"]


def _plant(path: Path, kind: str) -> None:
    """Something at a sentinel's name that ``request_*`` never makes."""
    if kind == "directory":
        path.mkdir()
    elif kind == "full directory":
        path.mkdir()
        (path / "notes").write_text("the operator's")
    elif kind == "fifo":
        os.mkfifo(path)
    else:  # a link to a regular file outside the session
        target = path.parent.parent / f"{path.name}-target"
        target.write_text("x")
        path.symlink_to(target)


KINDS = ("directory", "full directory", "fifo", "link")


async def test_a_sentinel_that_is_no_regular_file_is_ignored_and_cleared(tmp_path: Path) -> None:
    """A directory named ``pause`` kept a session paused that ``monitor resume`` could not
    lift ("Is a directory"); one named ``cancel`` failed every run's start (clearing it
    raised), and a link was followed to decide. Now only a regular file is a signal; clearing
    removes the rest without following it, or names what it leaves."""
    root = tmp_path / "sessions"
    signals = FileSignals(root)
    for number, kind in enumerate(KINDS):
        directory = root / f"s{number}"
        directory.mkdir(parents=True)
        _plant(directory / "pause", kind)
        _plant(directory / "cancel", kind)
        assert not await signals.is_paused(directory.name), kind
        assert not await signals.cancel_requested(directory.name), kind
        if kind == "full directory":  # the operator's own ask is told what is left
            with pytest.raises(StoreError, match=r"pause is a directory, .* pauses nothing"):
                request_resume(directory)
        else:
            assert not request_resume(directory), kind  # no pause there to lift, no error
        await signals.clear_cancel(directory.name)
        await signals.clear_pause(directory.name)
        kept = kind == "full directory"  # its contents are not the store's to delete
        assert (directory / "cancel").exists() is kept, kind
        assert (directory / "pause").exists() is kept, kind
        assert (root / "cancel-target").exists() or kind != "link"  # never followed
    with pytest.raises(StoreError, match=r"pause: is a directory; .*remove it"):
        request_pause(root / "s1")
    # A run of a session whose directory holds a ``cancel`` directory starts and ends.
    store = FileSessionStore(root, heartbeat=0.05)
    session = build_session([text("one"), text("two")], store=store, signals=signals)
    assert (await session.run("first")).ok
    _plant(root / session.id / "cancel", "full directory")
    _plant(root / session.id / "pause", "full directory")
    assert (await session.run("second")).ok
    await session.close()


async def test_directives_have_stable_offsets(session_dir: Path) -> None:
    signals = FileSignals(session_dir.parent)
    assert await signals.directives("s1", after=0) == ()
    assert add_directive(session_dir, "first") == 0
    assert add_directive(session_dir, "second ünï") == 1
    with (session_dir / "directives.jsonl").open("ab") as handle:
        handle.write(b'plain text line\n{"text": "half')  # a hand edit, then a torn write
    assert await signals.directives("s1", after=1) == (
        Directive(1, "second ünï"),
        Directive(2, "plain text line"),
    )
    assert add_directive(session_dir, "after the tear") == 4
    assert read_directives(session_dir, after=4) == (Directive(4, "after the tear"),)
    with (session_dir / "directives.jsonl").open("ab") as handle:
        handle.write(b"\n \t\r\n")  # blank lines: nothing said, nothing injected
    assert add_directive(session_dir, "after the blanks") == 7
    assert read_directives(session_dir, after=4) == (
        Directive(4, "after the tear"),
        Directive(7, "after the blanks"),
    )


async def test_a_torn_or_interleaved_line_is_no_directive(
    session_dir: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Before: a writer that died mid-line left ``{"text": "stop deleting the da``, the next
    ``add_directive`` ended that line, and a resumed run injected it raw as the operator's
    instruction; so were the pieces two lock-less writers interleave."""
    with (session_dir / "directives.jsonl").open("ab") as handle:
        handle.write(b'{"text": "stop deleting the da')  # the writer died here
    assert add_directive(session_dir, "whole") == 1
    with (session_dir / "directives.jsonl").open("ab") as handle:
        handle.write(
            b'{"text": "a", "at": 1}{"text": "b\n'  # two writers, no lock
            b'ing the db", "at": 2}\n'  # the tail of a cut line
            b'{"at": 3}\n'  # no text
            b'{"text": "caf\xc3\n'  # cut inside a character
            b"plain words\n42\n"  # hand-written lines stay directives
        )
    signals = FileSignals(session_dir.parent)
    expected = (Directive(1, "whole"), Directive(6, "plain words"), Directive(7, "42"))
    assert await signals.directives("s1", after=0) == expected
    assert await signals.directives("s1", after=0) == expected
    warned = [r.getMessage() for r in caplog.records if r.name == "rho_adapters.store.signals"]
    assert [w.split(" line ")[1].split(" ")[0] for w in warned] == ["1", "3", "4", "5", "6"]
    assert warned[0] == (
        f"{session_dir}/directives.jsonl line 1 is not a whole directive (a piece of a JSON "
        "line, as a torn or interleaved write leaves): skipped, nothing of it reached the "
        "model; send it again (rho-agent monitor directive)"
    )
    assert "(a JSON object without a text string)" in warned[3]
    assert "(not UTF-8 text, as a write cut inside a character leaves)" in warned[4]


async def test_foreign_entries_in_exports_are_no_requests_and_stop_none(tmp_path: Path) -> None:
    """Before: a directory ``a.request`` (or a hand-made ``b c.request``) was taken for a
    request, answered at every checkpoint (``a.md`` written again each time), and the failure
    to remove it stopped the requests sorted after it: ``zz`` was never answered."""
    from rho_adapters.store.signals import request_export

    store = FileSessionStore(tmp_path)
    signals = FileSignals(store.session_dir)
    session = build_session([text("one"), text("two")], store=store, signals=signals)
    await session.run("one")
    exports = store.session_dir(session.id) / "exports"
    exports.mkdir()
    (exports / "a.request").mkdir()
    for name in ("b c.request", ".request", "notes.txt", "old.md"):
        (exports / name).write_text("")
    (exports / "l.request").symlink_to(tmp_path / "nowhere")
    request_export(store.session_dir(session.id), "zz")
    assert await signals.export_requests(session.id) == ("zz",)
    await session.run("two")
    assert sorted(p.name for p in exports.iterdir()) == [
        ".request",
        "a.request",
        "b c.request",
        "l.request",
        "notes.txt",
        "old.md",
        "zz.md",
    ]
    assert "user: two" in (exports / "zz.md").read_text()
    await session.close()


async def test_planted_export_requests_are_listed_a_page_at_a_time(session_dir: Path) -> None:
    """Before: every entry of ``exports/`` was listed and sorted, on the event loop, at every
    checkpoint of the run (a million planted requests held the loop for seconds each time);
    now one look reads a bounded part of it, in a thread, and lists a page."""
    from rho_adapters.store.signals import EXPORTS_PAGE, EXPORTS_SCANNED, request_export

    exports = session_dir / "exports"
    exports.mkdir()
    for n in range(EXPORTS_SCANNED + 1):
        (exports / f"{n:05d}.md").touch()  # answered ones: read, no request
    for n in range(EXPORTS_PAGE + 1):
        request_export(session_dir, f"r{n:03d}")
    asked = await FileSignals(session_dir.parent).export_requests("s1")
    assert 0 < len(asked) <= EXPORTS_PAGE
    assert set(asked) <= {f"r{n:03d}" for n in range(EXPORTS_PAGE + 1)}
    assert list(asked) == sorted(asked)


def test_concurrent_writers_never_interleave(session_dir: Path) -> None:
    script = (
        "import sys\nfrom pathlib import Path\n"
        "from rho_adapters.store import add_directive\n"
        "for i in range(40): add_directive(Path(sys.argv[1]), f'{sys.argv[2]}-{i}' * 50)\n"
    )
    procs = [
        subprocess.Popen([sys.executable, "-c", script, str(session_dir), f"w{n}"])
        for n in range(4)
    ]
    assert all(p.wait(timeout=60) == 0 for p in procs)
    found = read_directives(session_dir)
    assert [d.offset for d in found] == list(range(160))
    assert sorted(d.text for d in found) == sorted(
        f"w{n}-{i}" * 50 for n in range(4) for i in range(40)
    )


def test_helpers_refuse_a_missing_session(tmp_path: Path) -> None:
    with pytest.raises(StoreError):
        request_cancel(tmp_path / "nope")
    with pytest.raises(StoreError):
        add_directive(tmp_path / "nope", "x")


async def test_a_stale_cancel_file_does_not_cancel_the_next_run(tmp_path: Path) -> None:
    root = tmp_path / "sessions"
    store = FileSessionStore(root, heartbeat=0.05)
    session = build_session([text("one"), text("two")], store=store, signals=FileSignals(root))
    assert (await session.run("first")).ok
    request_cancel(root / session.id)  # arrives after the run ended
    result = await session.run("second")
    assert result.ok
    assert not (root / session.id / "cancel").exists()
    await session.close()


async def test_a_directive_is_applied_once_even_across_resume(tmp_path: Path) -> None:
    root = tmp_path / "sessions"
    store = FileSessionStore(root, heartbeat=0.05)
    signals = FileSignals(root)
    turns = [tools(call("echo", {"text": "x"})), text("one"), text("two")]
    session = build_session(turns, store=store, signals=signals)
    first = await session.run("start")
    assert first.ok
    add_directive(root / session.id, "check the disk too")
    assert (await session.run("next")).ok
    await session.close()

    record, events = await store.open(session.id)
    state = State.from_events(events)
    resumed = build_session(
        [text("three")],
        store=store,
        signals=signals,
        session_id=record.id,
        state=state,
        created=True,
    )
    assert (await resumed.run("again")).ok
    await resumed.close()
    _, events = await store.open(session.id)
    await store.release(session.id)
    applied = [
        m
        for m in State.from_events(events).messages
        if isinstance(m, UserMessage) and m.origin == "directive"
    ]
    assert len(applied) == 1
    assert "check the disk too" in applied[0].content
