"""``rho-agent export`` of a session whose stored config.yaml this version cannot read."""

from __future__ import annotations

from pathlib import Path

import pytest

from rho_adapters.store import FileSessionStore
from rho_domain import events as ev
from rho_domain.config import AgentConfig
from rho_domain.errors import TraceFormatError
from rho_domain.messages import UserMessage
from rho_domain.ports.store import SessionRecord
from rho_entry.cli.export import export_atif, export_session

EVENTS: list[ev.Event] = [
    ev.RunStarted(at=1.0, run_id="r1", prompt="look"),
    ev.MessageAdded(at=1.0, message=UserMessage("look")),
]


async def test_a_config_of_another_version_exports_the_events_with_a_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Before, export (rho and atif) of a session whose config.yaml held a key a newer
    rho-agent writes, or was cut short, was refused outright ("unknown key 'new_setting'"):
    its events, which the store still held, could not be exported. Now they are, with
    ``"config": null`` and the refusal as a warning naming the file and the key."""
    store = FileSessionStore(tmp_path / "sessions")
    for name in ("newer", "cut"):
        await store.create(SessionRecord(id=name, created_at=1.0, config=AgentConfig()))
        await store.append(name, EVENTS)
        await store.release(name)
    config = tmp_path / "sessions" / "newer" / "config.yaml"
    config.write_text(config.read_text() + "new_setting: 3\n")
    (tmp_path / "sessions" / "cut" / "config.yaml").write_text("model: [unclosed\n")
    for name, said in (("newer", f"{config}: unknown key 'new_setting'"), ("cut", "invalid")):
        caplog.clear()
        with caplog.at_level("WARNING", logger="rho_entry.export"):
            document = export_session(name, str(tmp_path))
        assert document["config"] is None
        assert [e["kind"] for e in document["events"]] == ["run_start", "message"]  # type: ignore[attr-defined]
        assert said in caplog.text
        assert 'exported without it ("config": null)' in caplog.text
        assert export_atif(name, str(tmp_path))["session_id"] == name
    # a trace line it cannot read is still refused, naming the file and the line
    with (tmp_path / "sessions" / "cut" / "trace.jsonl").open("ab") as trace:
        trace.write(b'{"kind": "message"}\n')
    with pytest.raises(TraceFormatError, match=r"cut/trace\.jsonl: line 3: "):
        export_session("cut", str(tmp_path))
