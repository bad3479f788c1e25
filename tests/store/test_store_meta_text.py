"""meta.json's text: the same JSON as before (sorted keys, one top-level key a line), written
without leaving objects in reference cycles for the garbage collector."""

from __future__ import annotations

import gc
import json
from pathlib import Path

from rho_adapters.store.layout import SessionPaths
from rho_adapters.store.meta import MetaFile, meta_text
from rho_domain.messages import Usage


def test_meta_text_is_the_json_of_the_summary_one_key_a_line() -> None:
    data = {"status": "running", "usage": Usage(input_tokens=7), "runs": 2, "a": None}
    text = meta_text(data)
    assert json.loads(text) == {
        "a": None,
        "runs": 2,
        "status": "running",
        "usage": json.loads(json.dumps(json.loads(text)["usage"])),
    }
    assert json.loads(text)["usage"]["input_tokens"] == 7
    assert text.splitlines()[1:-1] == [
        '  "a": null,',
        '  "runs": 2,',
        '  "status": "running",',
        f'  "usage": {json.dumps(json.loads(text)["usage"], sort_keys=True)}',
    ]
    assert meta_text({}) == "{}"


def test_writing_meta_json_leaves_nothing_for_the_garbage_collector(tmp_path: Path) -> None:
    (tmp_path / "s1").mkdir()
    meta = MetaFile(SessionPaths(tmp_path / "s1"), {"status": "idle", "runs": 0}, heartbeat=60)
    meta.write()  # warm
    gc.collect()
    gc.disable()
    try:
        for _ in range(5):
            meta.write(durable=False)
        assert gc.collect() == 0
    finally:
        gc.enable()
    assert json.loads((tmp_path / "s1" / "meta.json").read_text())["status"] == "idle"
