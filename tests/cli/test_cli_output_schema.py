"""``--output-schema FILE`` through the real CLI against the loopback server: the answer is
parsed and ``--json`` prints it as ``output``; a wrong answer twice exits 1 naming the path;
a schema rho-agent cannot check is refused before anything runs (issue 29, item 2)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_support import rho

from rho_adapters.fakes.loopback import LoopbackServer
from rho_adapters.fakes.wire import call, text_reply, tool_reply

SCHEMA = {
    "type": "object",
    "properties": {
        "files": {"type": "array", "items": {"type": "string"}},
        "count": {"type": "integer"},
    },
    "required": ["files", "count"],
    "additionalProperties": False,
}


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    work = tmp_path / "work"
    work.mkdir()
    (work / "notes.txt").write_text("hello\n")
    (tmp_path / "schema.json").write_text(json.dumps(SCHEMA))
    return work


def run(server: LoopbackServer, work: Path, *args: str) -> tuple[int, list[dict[str, object]], str]:
    done = rho(
        "--base-url", server.base_url, "-m", "fake-model", "--json",
        "--output-schema", str(work.parent / "schema.json"), *args, "what is here?",
        cwd=work, home=work.parent / "home",
    )  # fmt: skip
    return done.returncode, [json.loads(line) for line in done.stdout.splitlines()], done.stderr


def test_json_prints_the_parsed_output(workspace: Path) -> None:
    replies = [
        tool_reply(call("list", {"path": "."})),
        text_reply('{"files": ["notes.txt"], "count": 1}'),
    ]
    with LoopbackServer(replies) as server:
        code, lines, err = run(server, workspace)
    assert code == 0, err
    assert lines[-1]["status"] == "completed"
    assert lines[-1]["output"] == {"files": ["notes.txt"], "count": 1}
    assert "JSON Schema" in server.requests[0]["messages"][0]["content"]  # the system prompt


def test_a_wrong_answer_is_corrected_once_then_the_run_fails_naming_the_path(
    workspace: Path,
) -> None:
    wrong = text_reply('{"files": ["notes.txt"], "count": "one"}')
    with LoopbackServer([wrong, wrong]) as server:
        code, lines, err = run(server, workspace)
    assert code == 1, err
    assert lines[-1]["status"] == "error"
    assert lines[-1]["output"] is None
    assert "$.count: expected integer, got string" in str(lines[-1]["error"])
    assert len(server.requests) == 2
    assert "$.count" in server.requests[1]["messages"][-1]["content"]


def test_an_answer_schema_on_vllm_goes_as_response_format_when_it_answers(
    workspace: Path,
) -> None:
    replies = [text_reply("notes.txt"), text_reply('{"files": ["notes.txt"], "count": 1}')]
    with LoopbackServer(replies) as server:
        code, _lines, err = run(server, workspace, "--provider", "vllm")
    assert code == 0, err
    assert "response_format" not in server.requests[0]
    assert server.requests[1]["response_format"]["json_schema"]["schema"] == SCHEMA


def test_an_unchecked_keyword_or_a_missing_file_is_refused(workspace: Path) -> None:
    (workspace.parent / "schema.json").write_text(json.dumps({"type": "object", "if": {}}))
    done = rho("--output-schema", str(workspace.parent / "schema.json"), "-m", "demo", "go",
               cwd=workspace, home=workspace.parent / "home")  # fmt: skip
    assert done.returncode == 1
    assert "--output-schema: output_schema: 'if' at # is a JSON Schema keyword" in done.stderr
    missing = rho("--output-schema", "nope.json", "-m", "demo", "go", cwd=workspace,
                  home=workspace.parent / "home")  # fmt: skip
    assert missing.returncode == 1
    assert "--output-schema nope.json" in missing.stderr
