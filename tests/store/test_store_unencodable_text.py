"""Text that UTF-8 cannot hold (a lone surrogate: a ``\\udcff`` escape in a model's JSON, a
file name that is not UTF-8 as Python lists it) never stops the trace: the line is written
with JSON escapes and reads back as the same text. Before, the append raised
UnicodeEncodeError: the run ended in 'internal error', its trace cut at the event before and
its meta left 'running'. A message no longer holds one (``messages.unicode_text``: shown as
escapes, since every later model request failed to encode it); other events still may."""

from __future__ import annotations

import json
from pathlib import Path

from store_support import build_session

from rho_adapters.codec import decode_event_line, encode_event_line
from rho_adapters.fakes import text
from rho_adapters.store import FileSessionStore
from rho_domain import events as ev
from rho_domain.messages import AssistantMessage
from rho_domain.run import RunStatus
from rho_domain.state import State

LONE = "caf\udce9 and \ud800"  # an escaped byte and a surrogate that stands for none


def test_a_line_with_a_lone_surrogate_is_json_escapes_and_reads_back_the_same() -> None:
    event = ev.ErrorOccurred(at=1.0, error_type="X", message=LONE)
    line = encode_event_line(event)
    assert line.isascii()
    assert b"\\udce9" in line
    assert decode_event_line(line) == event
    plain = ev.MessageAdded(at=1.0, message=AssistantMessage(text="café"))
    assert "café".encode() in encode_event_line(plain)  # UTF-8 text stays as it was


async def test_a_run_whose_answer_holds_one_completes_and_resumes(tmp_path: Path) -> None:
    store = FileSessionStore(tmp_path)
    session = build_session([text(LONE)], store=store, session_id="s1")
    async with session:
        result = await session.run("go", run_id="r1")
    assert result.status is RunStatus.COMPLETED
    lines = (tmp_path / "s1" / "trace.jsonl").read_bytes().splitlines()
    events = [decode_event_line(line) for line in lines]
    assert events[-1].kind == "run_end"
    answer = State.from_events(events).messages[-1]
    assert answer.text == "caf\\udce9 and \\ud800"  # type: ignore[union-attr]
    assert json.loads((tmp_path / "s1" / "meta.json").read_text())["status"] == "completed"
