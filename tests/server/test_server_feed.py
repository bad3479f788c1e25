"""TraceFeed and the SSE stream on their own, over a real trace file read through the file
store's catalog (``FileSessions``): line numbers as ids, torn lines, the replay/live seam,
overflow, a rewritten trace, deltas between lines, lines persisted without an announcement."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import TypeVar

from rho_adapters.codec import encode_event_line
from rho_adapters.store import FileSessions
from rho_domain import events as ev
from rho_domain.ports.session_control import TraceLine
from rho_entry.server.feed import TraceFeed
from rho_entry.server.sse import StreamOptions, event_stream, frame

T = TypeVar("T")


def _event(n: int) -> ev.Event:
    return ev.ErrorOccurred(at=float(n), error_type="Note", message=f"line {n}")


def _append(trace: Path, *numbers: int, tail: bytes = b"") -> None:
    with trace.open("ab") as handle:
        handle.write(b"".join(encode_event_line(_event(n)) for n in numbers) + tail)


async def _feed(tmp_path: Path, *, buffer: int = 10_000) -> tuple[TraceFeed, Path]:
    """A feed of session ``s`` under ``tmp_path``, and its trace (written by the test)."""
    directory = tmp_path / "s"
    directory.mkdir(exist_ok=True)
    (directory / "meta.json").write_text("{}")
    trace = directory / "trace.jsonl"
    trace.touch()
    return await TraceFeed(FileSessions(tmp_path), "s", buffer=buffer).start(), trace


def _trace(tmp_path: Path) -> Path:
    (tmp_path / "s").mkdir()
    (tmp_path / "s" / "meta.json").write_text("{}")
    return tmp_path / "s" / "trace.jsonl"


async def _published(feed: TraceFeed) -> None:
    """Wait until the feed's worker has published the run's events given so far."""
    for _ in range(500):
        if not feed.busy:
            return
        await asyncio.sleep(0.01)
    raise AssertionError("the feed did not publish its events")


async def _drain(queue: asyncio.Queue[T]) -> list[T]:
    items: list[T] = []
    while not queue.empty():
        items.append(queue.get_nowait())
    return items


async def test_lines_are_published_with_their_numbers_and_a_torn_tail_waits(
    tmp_path: Path,
) -> None:
    trace = _trace(tmp_path)
    _append(trace, 1, 2)
    feed = await TraceFeed(FileSessions(tmp_path), "s").start()
    assert feed.seq == 2  # existing lines are for replay, not republished
    sub = feed.subscribe()
    line3 = encode_event_line(_event(3))
    _append(trace, tail=line3[:10])  # half a line: a writer mid-write
    await feed.refresh()
    assert (feed.seq, sub.queue.qsize()) == (2, 0)
    with trace.open("ab") as handle:
        handle.write(line3[10:] + encode_event_line(_event(4)))
    await feed.refresh()
    items = await _drain(sub.queue)
    assert [(i.seq, i.kind) for i in items] == [(3, "error"), (4, "error")]
    data = json.loads(items[0].data)
    assert (data["seq"], data["message"]) == (3, "line 3")


async def test_an_announced_event_publishes_the_stored_lines_up_to_its_own(
    tmp_path: Path,
) -> None:
    """A persisted event arrives after its line is stored: the lines before it that were never
    announced (an approval answered here) come first, then its own, and not the lines after it
    (the deltas announced before them come first). Nothing is published twice."""
    feed, trace = await _feed(tmp_path)
    sub = feed.subscribe()
    _append(trace, 1, 2, 3)
    feed.on_event(_event(2))  # line 1 was persisted without an announcement
    feed.on_event(ev.TextDelta(at=9.0, text="hi"))
    await _published(feed)
    await feed.refresh()  # a subscriber's poll meanwhile: line 3
    feed.on_event(_event(3))  # already published: not again
    _append(trace, 4)
    feed.on_event(_event(4))
    await _published(feed)
    items = await _drain(sub.queue)
    assert [(i.seq, i.kind) for i in items] == [
        (1, "error"),
        (2, "error"),
        (None, "text_delta"),
        (3, "error"),
        (4, "error"),
    ]
    assert [json.loads(i.data)["message"] for i in items if i.seq] == [
        f"line {n}" for n in (1, 2, 3, 4)
    ]


async def test_replay_reads_exactly_the_missed_lines(tmp_path: Path) -> None:
    trace = _trace(tmp_path)
    _append(trace, *range(1, 11))
    feed = await TraceFeed(FileSessions(tmp_path), "s").start()
    assert [i.seq for i in await feed.replay(3, 7)] == [4, 5, 6, 7]
    assert await feed.replay(7, 7) == []


async def test_a_subscriber_that_falls_behind_is_dropped(tmp_path: Path) -> None:
    feed, trace = await _feed(tmp_path, buffer=3)
    slow, fast = feed.subscribe(), feed.subscribe()
    _append(trace, 1, 2)
    await feed.refresh()
    await _drain(fast.queue)
    _append(trace, 3, 4)
    await feed.refresh()
    assert slow.overflowed
    assert not fast.overflowed
    assert feed.subscribers == 1


async def test_a_rewritten_shorter_trace_is_counted_again(tmp_path: Path) -> None:
    trace = _trace(tmp_path)
    _append(trace, 1, 2, 3)
    feed = await TraceFeed(FileSessions(tmp_path), "s").start()
    sub = feed.subscribe()
    trace.write_bytes(encode_event_line(_event(1)))  # a repair set lines aside
    await feed.refresh()
    assert (feed.seq, sub.queue.qsize()) == (1, 0)
    _append(trace, 2)  # the next line is numbered as the trace numbers it
    await feed.refresh()
    assert [i.seq for i in await _drain(sub.queue)] == [2]


async def test_a_poll_never_reads_the_last_line_it_published_again(tmp_path: Path) -> None:
    """A poll read from the line it had published last, to check it was still there: a last
    line of 300 MB (a hostile trace, under its bound) was read again at every poll, 0.86 s of
    CPU each on the server's event loop. The proof it is not read: a newline put in place
    inside it (same size) makes no line of its own."""
    trace = _trace(tmp_path)
    _append(trace, 1, 2)
    feed = await TraceFeed(FileSessions(tmp_path), "s").start()
    sub = feed.subscribe()
    await feed.refresh()
    with trace.open("r+b") as handle:  # inside line 2, which the feed has seen
        handle.seek(trace.stat().st_size - 10)
        handle.write(b"\n")
    for _ in range(2):
        await feed.refresh()
    assert (feed.seq, sub.queue.qsize()) == (2, 0)
    _append(trace, 3)
    await feed.refresh()
    assert [i.seq for i in await _drain(sub.queue)] == [3]


async def test_an_unreadable_line_keeps_its_number(tmp_path: Path) -> None:
    feed, trace = await _feed(tmp_path)
    sub = feed.subscribe()
    with trace.open("ab") as handle:
        handle.write(b"{not json\n")
    _append(trace, 2)
    await feed.refresh()
    items = await _drain(sub.queue)
    assert [(i.seq, i.kind) for i in items] == [(1, "unreadable"), (2, "error")]


async def test_the_stream_joins_replay_and_live_without_gap_or_duplicate(tmp_path: Path) -> None:
    trace = _trace(tmp_path)
    _append(trace, 1, 2, 3, 4)
    feed = await TraceFeed(FileSessions(tmp_path), "s").start()
    running = [True]
    stream = event_stream(
        feed, StreamOptions(after=2, poll=0.01, until_idle=True), lambda: running[0]
    )
    chunks = [await anext(stream)]  # retry: header
    # lines written after the subscription and before the replay is read
    _append(trace, 5)
    await feed.refresh()
    chunks.append(await anext(stream))
    _append(trace, 6)
    feed.on_event(_event(6))
    running[0] = False
    chunks += [chunk async for chunk in stream]
    ids = [int(line[4:]) for c in chunks for line in c.decode().splitlines() if line[:4] == "id: "]
    assert ids == [3, 4, 5, 6]


def test_a_frame_has_an_id_only_for_trace_lines() -> None:
    from rho_entry.server.feed import FeedItem

    assert frame(FeedItem(7, "tool_end", "{}")) == b"id: 7\nevent: tool_end\ndata: {}\n\n"
    assert frame(FeedItem(None, "text_delta", "{}")) == b"event: text_delta\ndata: {}\n\n"


class _CountingSessions(FileSessions):
    """The file store's catalog, counting its reads of a trace."""

    reads = 0

    async def trace(self, session_id: str, *, after: int = 0) -> tuple[TraceLine, ...]:
        self.reads += 1
        return await super().trace(session_id, after=after)


async def test_subscribers_share_one_read_of_the_store(tmp_path: Path) -> None:
    # each stream polled the store on its own timer: 50 streams of one session were 50 reads
    # a period; now one read serves every subscriber polling at once, and still publishes
    trace = _trace(tmp_path)
    catalog = _CountingSessions(tmp_path)
    feed = await TraceFeed(catalog, "s").start()
    subscriptions = [feed.subscribe() for _ in range(50)]
    _append(trace, 1)
    catalog.reads = 0
    await asyncio.gather(*(feed.poll(60.0) for _ in subscriptions))
    assert catalog.reads == 1
    for subscription in subscriptions:
        assert [item.seq for item in await _drain(subscription.queue)] == [1]
    await asyncio.gather(*(feed.poll(60.0) for _ in subscriptions))  # within the period
    assert catalog.reads == 1
    _append(trace, 2)
    await feed.poll(0.0)  # a period later: read again
    assert catalog.reads == 2
    assert [item.seq for item in await _drain(subscriptions[0].queue)] == [2]
