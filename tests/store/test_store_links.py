"""Session files are opened inside their session directory, never through a link.

Every test plants a link (absolute or relative), a hard link or a FIFO where a session file
belongs, pointing at a real file outside the session directory, then asserts the specific
refusal and that the outside file is unchanged (or was never created).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
import warnings
from collections.abc import Callable
from pathlib import Path

import pytest
from store_support import build_session

from rho_adapters.fakes import text
from rho_adapters.store import FileSessionStore, load_recording, read_trace
from rho_adapters.store.confined import LinkRefused
from rho_adapters.store.layout import NAME_MAX
from rho_adapters.store.signals import (
    FileSignals,
    add_directive,
    request_cancel,
    request_export,
    request_pause,
)
from rho_domain.config import AgentConfig
from rho_domain.errors import StoreError
from rho_domain.ports.store import SessionRecord
from rho_domain.run import RunStatus

SRC = Path(__file__).resolve().parents[2] / "src"
SECRET = b"outside: keep me exactly as I am\n"


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    target = tmp_path / "outside" / "victim.txt"
    target.parent.mkdir()
    target.write_bytes(SECRET)
    return target


async def _session(root: Path, session_id: str = "s1") -> Path:
    store = FileSessionStore(root)
    await store.create(SessionRecord(id=session_id, created_at=time.time(), config=AgentConfig()))
    await store.release(session_id)
    return root / session_id


def _link(at: Path, target: Path, *, relative: bool) -> None:
    at.unlink(missing_ok=True)
    at.symlink_to(os.path.relpath(target, at.parent) if relative else target)


def _unchanged(target: Path, mtime: int) -> None:
    assert target.read_bytes() == SECRET
    assert target.stat().st_mtime_ns == mtime


@pytest.mark.parametrize("relative", [False, True])
@pytest.mark.parametrize("name", ["trace.jsonl", "config.yaml", "lock"])
async def test_a_linked_session_file_is_refused_on_open(
    tmp_path: Path, outside: Path, name: str, relative: bool
) -> None:
    directory = await _session(tmp_path / "sessions")
    if name == "config.yaml":  # a valid config: following the link would succeed
        outside.write_bytes((directory / name).read_bytes())
    else:
        outside.write_bytes(SECRET)
    before = outside.read_bytes()
    mtime = outside.stat().st_mtime_ns
    _link(directory / name, outside, relative=relative)
    store = FileSessionStore(tmp_path / "sessions")
    with pytest.raises(LinkRefused, match=rf"{directory / name}: is a symbolic link; session"):
        await store.open("s1")
    assert outside.read_bytes() == before
    assert outside.stat().st_mtime_ns == mtime
    assert not store._open  # nothing held: the lock was released


@pytest.mark.parametrize("name", ["trace.jsonl", "config.yaml"])
async def test_reading_without_the_lock_refuses_links_too(
    tmp_path: Path, outside: Path, name: str
) -> None:
    directory = await _session(tmp_path / "sessions")
    _link(directory / name, outside, relative=False)
    with pytest.raises(LinkRefused, match=name):
        load_recording(directory)
    if name == "trace.jsonl":
        with pytest.raises(LinkRefused, match=name):
            read_trace(directory / name)


async def test_a_hard_linked_trace_is_not_appended_to(tmp_path: Path, outside: Path) -> None:
    directory = await _session(tmp_path / "sessions")
    outside.write_bytes(b"")  # an empty trace: it would be read and then appended to
    (directory / "trace.jsonl").unlink()
    os.link(outside, directory / "trace.jsonl")
    store = FileSessionStore(tmp_path / "sessions")
    with pytest.raises(LinkRefused, match=r"trace.jsonl: has 2 hard links"):
        await store.open("s1")
    assert outside.read_bytes() == b""


async def test_a_fifo_in_place_of_the_trace_is_refused_without_blocking(tmp_path: Path) -> None:
    directory = await _session(tmp_path / "sessions")
    (directory / "trace.jsonl").unlink()
    os.mkfifo(directory / "trace.jsonl")
    with pytest.raises(LinkRefused, match=r"trace.jsonl: is not a regular file"):
        await FileSessionStore(tmp_path / "sessions").open("s1")


async def test_a_linked_torn_file_is_not_written(tmp_path: Path, outside: Path) -> None:
    directory = await _session(tmp_path / "sessions")
    (directory / "trace.jsonl").write_bytes(b'{"v": 1, "kind": "run_st')  # a torn last line
    _link(directory / "trace.torn", outside, relative=True)
    mtime = outside.stat().st_mtime_ns
    store = FileSessionStore(tmp_path / "sessions")
    warnings.simplefilter("ignore")  # the torn line is reported; pytest restores the filters
    with pytest.raises(LinkRefused, match=r"trace\.torn: is a symbolic link"):
        await store.open("s1")
    _unchanged(outside, mtime)


async def test_a_linked_meta_file_is_replaced_not_followed(tmp_path: Path, outside: Path) -> None:
    directory = await _session(tmp_path / "sessions")
    _link(directory / "meta.json", outside, relative=False)
    mtime = outside.stat().st_mtime_ns
    store = FileSessionStore(tmp_path / "sessions")
    await store.open("s1")
    await store.release("s1")
    _unchanged(outside, mtime)
    assert not (directory / "meta.json").is_symlink()
    assert b'"id": "s1"' in (directory / "meta.json").read_bytes()


async def test_a_linked_session_directory_is_refused(tmp_path: Path) -> None:
    real = await _session(tmp_path / "elsewhere", "s1")
    trace = (real / "trace.jsonl").read_bytes()
    root = tmp_path / "sessions"
    root.mkdir()
    (root / "s1").symlink_to(real)
    store = FileSessionStore(root)
    with pytest.raises(StoreError, match=r"s1 is a symbolic link; a session directory is never"):
        await store.open("s1")
    assert await store.list() == ()  # not listed either
    assert (real / "trace.jsonl").read_bytes() == trace
    with pytest.raises(LinkRefused, match="is a link or not a directory"):
        add_directive(root / "s1", "x")
    assert not (real / "directives.jsonl").exists()


@pytest.mark.parametrize("relative", [False, True])
@pytest.mark.parametrize(("name", "ask"), [("cancel", request_cancel), ("pause", request_pause)])
async def test_a_linked_sentinel_creates_nothing_outside(
    tmp_path: Path, name: str, ask: Callable[[Path], None], relative: bool
) -> None:
    directory = await _session(tmp_path / "sessions")
    target = tmp_path / "outside" / "created"
    target.parent.mkdir()
    _link(directory / name, target, relative=relative)  # dangling: touch would create it
    with pytest.raises(LinkRefused, match=rf"{name}: is a symbolic link"):
        ask(directory)
    assert not target.exists()


async def test_a_linked_directive_log_is_not_appended_to(tmp_path: Path, outside: Path) -> None:
    directory = await _session(tmp_path / "sessions")
    _link(directory / "directives.jsonl", outside, relative=True)
    mtime = outside.stat().st_mtime_ns
    with pytest.raises(LinkRefused, match=r"directives\.jsonl: is a symbolic link"):
        add_directive(directory, "rm -rf /")
    signals = FileSignals(tmp_path / "sessions")
    with pytest.raises(LinkRefused, match=r"directives\.jsonl: is a symbolic link"):
        await signals.directives("s1", after=0)
    _unchanged(outside, mtime)


async def test_a_linked_exports_directory_receives_nothing(tmp_path: Path) -> None:
    directory = await _session(tmp_path / "sessions")
    elsewhere = tmp_path / "outside"
    elsewhere.mkdir()
    (directory / "exports").symlink_to(elsewhere)
    with pytest.raises(LinkRefused, match="exports: is a link or not a directory"):
        request_export(directory, "r0")
    signals = FileSignals(tmp_path / "sessions")
    assert await signals.export_requests("s1") == ()
    with pytest.raises(StoreError, match="exports: is a link"):
        await signals.answer_export("s1", "r1", "the context")
    assert list(elsewhere.iterdir()) == []


async def test_a_linked_export_answer_is_replaced_not_followed(
    tmp_path: Path, outside: Path
) -> None:
    directory = await _session(tmp_path / "sessions")
    request_id = "r1"
    request_export(directory, request_id)
    _link(directory / "exports" / f"{request_id}.md", outside, relative=False)
    mtime = outside.stat().st_mtime_ns
    await FileSignals(tmp_path / "sessions").answer_export("s1", request_id, "the context")
    _unchanged(outside, mtime)
    assert (directory / "exports" / f"{request_id}.md").read_text() == "the context"


async def test_legit_sessions_still_open_append_and_signal(tmp_path: Path) -> None:
    directory = await _session(tmp_path / "sessions")
    store = FileSessionStore(tmp_path / "sessions")
    record, events = await store.open("s1")
    assert record.id == "s1"
    assert events == ()
    await store.release("s1")
    request_cancel(directory)
    request_pause(directory)
    assert add_directive(directory, "look at the logs") == 0
    assert (directory / "cancel").is_file()
    assert (directory / "pause").is_file()
    shutil.rmtree(directory)


async def test_a_session_directory_given_relative_to_the_current_one_works(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    directory = await _session(tmp_path / "sessions")
    monkeypatch.chdir(directory.parent)
    request_cancel(Path("s1"))  # one relative component: looked up here, not under /
    assert (directory / "cancel").is_file()
    monkeypatch.chdir(directory)
    request_pause(Path())
    assert (directory / "pause").is_file()


async def test_a_hard_linked_file_is_refused_before_it_is_truncated(
    tmp_path: Path, outside: Path
) -> None:
    """A session file written whole (``wb``: an MCP call's full output) was opened with
    ``O_TRUNC`` and its links counted after: the refusal came with the outside file
    already emptied. Now it is truncated only once it is known to have a single name."""
    from rho_adapters.mcp.results import capped, output_file

    directory = await _session(tmp_path / "sessions")
    save = output_file(directory / "mcp-output", "srv", "tool", "c1")
    save.parent.mkdir()
    os.link(outside, save)
    mtime = outside.stat().st_mtime_ns
    shown, path = capped("x" * 5000, 1000, save)
    assert path is None
    assert f"could not be saved: {save}: has 2 hard links" in shown
    _unchanged(outside, mtime)


async def test_a_session_id_that_is_not_one_name_creates_nothing_outside_the_root(
    tmp_path: Path,
) -> None:
    """``create`` joined the id to the root as it came: ``../x`` or an absolute path made the
    session directory elsewhere, and an existing directory without a trace was taken over
    (its ``config.yaml`` deleted and replaced, meta.json and a trace written). An id from
    data (a queued run's) chose where. Now an id is one name in the root, or nothing is
    written."""
    root, victim = tmp_path / "sessions", tmp_path / "project"
    victim.mkdir()
    (victim / "config.yaml").write_bytes(SECRET)
    store = FileSessionStore(root)
    refused = {}
    for session_id in ("../project", str(victim), "..", ".", "", "a/b", "a\0b"):
        record = SessionRecord(id=session_id, created_at=0.0, config=AgentConfig())
        with pytest.raises(StoreError) as error:
            await store.create(record)
        refused[session_id] = str(error.value)
    assert sorted(p.name for p in victim.iterdir()) == ["config.yaml"]
    assert (victim / "config.yaml").read_bytes() == SECRET
    assert not root.exists() or list(root.iterdir()) == []
    assert refused["../project"] == (
        f"session id '../project' is not a name in {root}: a session id is one file name "
        f"(not empty, '.' or '..', without '/' or NUL, at most {NAME_MAX} bytes); nothing was "
        "created"
    )
    assert all("nothing was created" in message for message in refused.values())


async def test_a_session_id_that_is_not_one_name_signals_nothing_outside_the_root(
    tmp_path: Path,
) -> None:
    """``create`` refused ``../x``, but a session's signals had located it as the root joined
    to the id as it came: the run's start deleted ``<root>/../x/cancel``, and its end deleted
    ``pause`` and answered every ``exports/*.request`` there (writing ``.md``, deleting the
    request). The store's ``session_dir`` and ``FileSignals`` over a root now take the id
    through ``named_in``: the run ends refused and nothing outside the root is touched."""
    root, victim = tmp_path / "sessions", tmp_path / "project"
    (victim / "exports").mkdir(parents=True)
    planted = ("cancel", "exports/r1.request", "pause")
    for name in planted:
        (victim / name).write_bytes(SECRET)
    store = FileSessionStore(root)
    for session_id in ("../project", str(victim)):
        session = build_session(
            [text("hi")], store=store, signals=store.signals(), session_id=session_id
        )
        result = await session.run("go")
        await session.close()
        assert result.status is RunStatus.ERROR
        assert f"session id {session_id!r} is not a name in {root}" in (result.error or "")
    found = sorted(str(p.relative_to(victim)) for p in victim.rglob("*") if p.is_file())
    assert found == list(planted)
    assert all((victim / name).read_bytes() == SECRET for name in planted)
    with pytest.raises(StoreError, match="is not a name in"):
        await FileSignals(root).clear_pause("../project")


async def test_a_session_id_no_file_name_can_hold_is_refused_by_the_store(tmp_path: Path) -> None:
    """An id longer than a file name (``NAME_MAX`` bytes) or one the file system cannot
    encode (a lone surrogate) passed ``named_in``: ``create`` refused it only once ``mkdir``
    failed, and the signals, which act before ``create``, raised a bare ``OSError`` (seen: a
    session with a 300-character id raised ``[Errno 36] File name too long`` out of
    ``Session.run``). Both refuse it now, naming the rule, before touching the disk."""
    root = tmp_path / "sessions"
    store = FileSessionStore(root)
    for session_id in ("a" * (NAME_MAX + 1), "é" * 128, "x\ud800"):
        with pytest.raises(StoreError, match="is not a name in"):
            await store.signals().clear_cancel(session_id)
        with pytest.raises(StoreError, match="is not a name in"):
            await store.create(SessionRecord(id=session_id, created_at=0.0, config=AgentConfig()))
    assert not root.exists() or list(root.iterdir()) == []
    named = "a" * NAME_MAX  # the longest name is still one
    await store.create(SessionRecord(id=named, created_at=0.0, config=AgentConfig()))
    await store.release(named)
    assert (root / named / "trace.jsonl").exists()


_LIST_UNDER_1_GIB = """
import resource, sys
resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))
from pathlib import Path
from rho_adapters.store.listing import list_sessions
print(sorted((s.id, s.status) for s in list_sessions(Path(sys.argv[1]))))
"""


async def test_a_huge_meta_file_does_not_take_down_the_listing(tmp_path: Path) -> None:
    """One session's meta.json grown to 4 GiB (a sparse file: no disk used) by whoever can
    write the directory. Every listing reads every session's meta.json: read whole, it cost
    4 GiB of memory, and ``--list``, ``monitor ps`` and a server's ``GET /api/sessions``
    failed for every session (MemoryError under the child's 1 GiB limit here). Now past
    ``META_BYTES`` it is not read: that session is listed without its summary, the others
    as they are."""
    root = tmp_path / "sessions"
    await _session(root, "big1")
    await _session(root, "fine1")
    os.truncate(root / "big1" / "meta.json", 4 << 30)
    listed = subprocess.run(
        [sys.executable, "-c", _LIST_UNDER_1_GIB, str(root)],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(SRC)},
        check=False,
    )
    assert listed.returncode == 0, listed.stderr[-2000:]
    assert listed.stdout.strip() == "[('big1', 'unknown'), ('fine1', 'created')]"
