"""The results file: one JSON line per graded question, appended as each one finishes.

Each line is a ``QuestionResult`` with a format tag and version::

    {"format": "rho-agent.bird-result", "version": 1, "question_id": 3, "db_id": "shop",
     "difficulty": "simple", "session_id": "...", "status": "completed", "correct": true,
     "predicted_sql": "SELECT ...", "error": null, "input_tokens": 812, "output_tokens": 64,
     "cost_usd": null, "wall_seconds": 3.2}

A line is written whole and flushed to disk before the next question is counted, so a run
that is stopped leaves only whole lines, at worst plus one torn last line; ``read_results``
drops a torn tail (and ``ResultsFile`` cuts it off before appending), and the questions
already there are not run again.
"""

from __future__ import annotations

import json
import os
import warnings
from pathlib import Path
from typing import Any

from rho_adapters.codec import make_converter
from rho_domain.errors import ConfigError
from rho_domain.evals.accuracy import QuestionResult

FORMAT = "rho-agent.bird-result"
VERSION = 1


def result_to_line(result: QuestionResult) -> str:
    """One results line (with its newline)."""
    body: dict[str, Any] = {"format": FORMAT, "version": VERSION}
    body.update(make_converter().unstructure(result))
    return json.dumps(body, ensure_ascii=False) + "\n"


def result_from_line(line: str, *, where: str) -> QuestionResult:
    """Parse one line; ConfigError names the line when it is not a result of this version."""
    try:
        data = json.loads(line)
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{where}: not JSON ({exc.msg})") from exc
    except RecursionError:  # legal JSON nested past the parser: no result line is
        raise ConfigError(
            f"{where}: not a rho-agent BIRD result line (nested too deeply)"
        ) from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise ConfigError(f"{where}: not a rho-agent BIRD result line; use another --out file")
    if data.get("version") != VERSION:
        raise ConfigError(f"{where}: results format version {data.get('version')!r} is not 1")
    fields = {k: v for k, v in data.items() if k not in ("format", "version")}
    try:
        result: QuestionResult = make_converter(forbid_extra_keys=True).structure(
            fields, QuestionResult
        )
    except Exception as exc:
        raise ConfigError(f"{where}: not a valid result ({exc})") from exc
    return result


def read_results(path: Path) -> tuple[QuestionResult, ...]:
    """The results already in ``path`` (none if it does not exist). A torn last line (a run
    killed while writing) is dropped with a warning; a bad line elsewhere is a ConfigError."""
    if not path.exists():
        return ()
    text = path.read_text(encoding="utf-8")
    lines = text.split("\n")
    torn = lines.pop()  # "" when the file ends with a newline
    if torn:
        warnings.warn(f"{path}: dropped a torn last line; that question runs again", stacklevel=2)
    return tuple(
        result_from_line(line, where=f"{path}: line {number}")
        for number, line in enumerate(lines, start=1)
        if line.strip()
    )


class ResultsFile:
    """Appends result lines to one file, each durable before ``append`` returns."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._file: Any = None

    def open(self) -> None:
        """Create the file (and its folder) or cut a torn last line off, then open it."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        if self.path.exists():
            data = self.path.read_bytes()
            whole = data.rfind(b"\n") + 1
            if whole != len(data):
                with self.path.open("r+b") as handle:
                    handle.truncate(whole)
        self._file = self.path.open("a", encoding="utf-8")

    def append(self, result: QuestionResult) -> None:
        """Write one line and flush it to disk."""
        if self._file is None:
            self.open()
        self._file.write(result_to_line(result))
        self._file.flush()
        os.fsync(self._file.fileno())

    def close(self) -> None:
        """Close the file (appending again reopens it)."""
        if self._file is not None:
            self._file.close()
            self._file = None
