"""Session events as JSON lines for scripts (``--json``): ``JsonRenderer``.

One JSON object per event on stdout, then a final ``result`` object (``{"v": 1, "kind":
"result", ...}``); notices are lines of kind ``notice``. The text is the model's exact text:
only the characters ``json.dumps`` leaves raw that could drive a terminal (C1 controls, DEL,
bidi) are written as JSON escapes (``terminal_text.json_visible``), the same values.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from typing import Any, TextIO

from rho_domain import events as ev
from rho_domain.messages import Usage
from rho_domain.run import RunResult
from rho_entry.cli.terminal_text import json_visible


class JsonRenderer:
    """Writes every event, then a final ``result`` object, as one JSON line each."""

    def __init__(self, out: TextIO | None = None) -> None:
        from rho_adapters.codec import event_to_dict

        self._encode = event_to_dict
        self.out = out or sys.stdout

    def __call__(self, event: ev.Event) -> None:
        """Print one event as a JSON line (a session listener)."""
        self._write(self._encode(event))

    def notice(self, text: str, *styles: str) -> None:
        """A notice as its own line, ``{"kind": "notice", "text": ...}`` (the terminal's
        styles dropped)."""
        self._write({"kind": "notice", "text": text})

    def finish(self, result: RunResult, *, exit_code: int) -> None:
        """Print the result as the last JSON line (``{"v": 1, "kind": "result", ...}``)."""
        from rho_adapters.codec import TRACE_FORMAT_VERSION

        pending = [
            {
                "call_id": p.call.id,
                "tool": p.call.name,
                "arguments": p.call.arguments,
                "digest": p.digest,
                "working_dir": p.working_dir,
                "reason": p.reason,
            }
            for p in result.pending
        ]
        self._write(
            {
                "v": TRACE_FORMAT_VERSION,
                "kind": "result",
                "session_id": result.session_id,
                "run_id": result.run_id,
                "status": result.status.value,
                "exit_code": exit_code,
                "text": result.text,
                "output": result.output,
                "error": result.error,
                "usage": _usage(result.usage),
                "session_usage": _usage(result.session_usage),
                "pending": pending,
            }
        )

    def _write(self, data: Mapping[str, Any]) -> None:
        # json.dumps leaves C1 controls, DEL and bidi characters raw: escaped, same values
        self.out.write(json_visible(json.dumps(data, ensure_ascii=False, default=str)) + "\n")
        self.out.flush()


def _usage(usage: Usage) -> dict[str, Any]:
    return {
        "input_tokens": usage.input_tokens,
        "output_tokens": usage.output_tokens,
        "cached_tokens": usage.cached_tokens,
        "reasoning_tokens": usage.reasoning_tokens,
        "cost_usd": usage.cost_usd,
        "estimated": usage.estimated,
    }
