"""JSON nested past Python's parser (``[[[[...]]]]``, legal JSON) in a file or a reply
rho-agent reads is said like any other bad JSON, never "internal error: RecursionError":
``--output-schema FILE``, BIRD's questions (``.json`` and ``.jsonl``) and results files, a
model server's error body, a Daytona API's error body, a Harbor trial's logs, and a tool call's
arguments exported to ATIF each raised it (the
server's request bodies and a trace's lines already said it, note42)."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest
from cli_support import rho

from rho_adapters.atif import arguments_object
from rho_adapters.daytona._errors import error_message
from rho_adapters.model._errors import error_payload, overflow_numbers
from rho_domain.errors import ConfigError
from rho_entry.evals.bird_data import load_bird
from rho_entry.evals.bird_results import read_results
from rho_entry.evals.harbor_commands import EVENTS, TRAJECTORY, HarborUsage, usage_from_logs

DEEP = "[" * 100_000 + "]" * 100_000


def test_an_output_schema_nested_too_deeply_is_named(tmp_path: Path) -> None:
    (tmp_path / "schema.json").write_text(DEEP)
    done = rho("-m", "demo", "--output-schema", "schema.json", "hi", cwd=tmp_path, home=tmp_path)
    assert done.returncode == 1
    assert "rho-agent: --output-schema schema.json: nested too deeply to read" in done.stderr
    assert "internal error" not in done.stderr


def test_bird_questions_nested_too_deeply_are_named(tmp_path: Path) -> None:
    (tmp_path / "dev.json").write_text(DEEP + "\n")
    with pytest.raises(ConfigError, match="nested too deeply"):
        load_bird(tmp_path)


def test_a_bird_question_line_nested_too_deeply_is_a_problem_like_any_bad_line(
    tmp_path: Path,
) -> None:
    (tmp_path / "dev.jsonl").write_text(DEEP + "\n")
    (problem,) = load_bird(tmp_path).problems
    assert (problem.where, problem.message) == ("dev.jsonl: line 1", "nested too deeply to read")


def test_a_results_line_nested_too_deeply_is_named(tmp_path: Path) -> None:
    (tmp_path / "out.jsonl").write_text(DEEP + "\n")
    with pytest.raises(ConfigError, match=r"line 1: not a rho-agent BIRD result line"):
        read_results(tmp_path / "out.jsonl")


def test_a_model_servers_error_body_nested_too_deeply_is_shown_as_text() -> None:
    # shown as text, cut to the 1,000 characters a server's words get in a message
    assert error_payload(DEEP) == (DEEP[:1000] + "... [199,000 more characters not shown]", "")
    assert overflow_numbers("context too long", DEEP) == (None, None)


def test_tool_arguments_nested_too_deeply_are_exported_as_given() -> None:
    assert arguments_object(DEEP) == {"_raw": DEEP}


def test_a_daytona_error_body_nested_too_deeply_is_shown_as_text() -> None:
    response = httpx.Response(500, content=DEEP.encode())
    assert error_message(response) == DEEP[:300]  # the text, cut as any error body is


def test_harbor_logs_nested_too_deeply_give_no_figures(tmp_path: Path) -> None:
    (tmp_path / TRAJECTORY).write_text(DEEP)
    (tmp_path / EVENTS).write_text(DEEP + "\n")
    assert usage_from_logs(tmp_path) == HarborUsage()
