"""A final answer with no text is said, not shown as a silent success.

Before: a server that streamed only ``reasoning_content`` and then ``stop`` (vLLM's reasoning
parser keeps the whole reply as reasoning when the model never closes its ``</think>``), or
that sent ``[DONE]`` before any choice, ended the one-shot completed, exit 0, with nothing on
stdout and only the usage line on stderr."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from cli_support import rho

from rho_adapters.fakes.loopback import LoopbackServer
from rho_adapters.fakes.wire import call, raw_reply, tool_reply


def _sse(*deltas: Mapping[str, object], finish: str | None = "stop") -> bytes:
    chunks: list[dict[str, Any]] = [
        {"index": 0, "delta": delta, "finish_reason": None} for delta in deltas
    ]
    if finish is not None:
        chunks.append({"index": 0, "delta": {}, "finish_reason": finish})
    lines = [f"data: {json.dumps({'id': 'x', 'model': 'm', 'choices': [c]})}\n\n" for c in chunks]
    return ("".join(lines) + "data: [DONE]\n\n").encode()


def test_an_answer_of_reasoning_only_or_nothing_is_said(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    thought = {"reasoning_content": "The answer is 4"}
    replies = {
        # after a tool call whose answer had reasoning: the empty one is said as empty
        "nothing at all": [tool_reply(call("list", {"path": "."})), raw_reply(_sse(finish=None))],
        "only reasoning (15 characters; -v shows it)": [raw_reply(_sse(thought))],
    }
    for sent, script in replies.items():
        with LoopbackServer(script) as server:
            run = rho("--base-url", server.base_url, "-m", "m", "hi", cwd=work, home=tmp_path)
        assert (run.returncode, run.stdout) == (0, ""), run.stderr
        assert f"warning: the model's answer has no text: it sent {sent}; " in run.stderr
