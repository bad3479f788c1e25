"""The reference implementation's ``rho-eval bird`` selection and endpoint flags on
``rho-agent eval bird``: ``--difficulty``, ``--offset``, ``-n`` (``--limit``) and
``--service-tier``, ``--no-evidence`` and ``--system-prompt``. Before, each was refused as an
unrecognized argument, so a run of the moderate questions only, a run continued past the
first N, one on the flex tier, one without the evidence (BIRD's harder setting) or with
another system prompt could not be asked for."""

from __future__ import annotations

import json
from pathlib import Path

from test_eval_cli import env, rho_here, sample_rule

from rho_adapters.fakes.loopback import LoopbackServer
from rho_entry.evals.bird_data import load_bird
from rho_entry.evals.sample_data import write_sample


def test_difficulty_offset_limit_and_service_tier_reach_the_run(tmp_path: Path) -> None:
    write_sample(tmp_path / "bird")
    moderate = [q for q in load_bird(tmp_path / "bird").questions if q.difficulty == "moderate"]
    with LoopbackServer([], rules=[sample_rule()]) as server:
        environ = env(tmp_path, server)
        done = rho_here(
            "eval", "bird", "--data", "bird", "--difficulty", "moderate", "--offset", "1",
            "-n", "1", "--service-tier", "flex", "-m", "m", "--out", "r.jsonl",
            cwd=tmp_path, environ=environ,
        )  # fmt: skip
        bad = [
            rho_here("eval", "bird", "--data", "bird", *flag, cwd=tmp_path, environ=environ)
            for flag in (("--offset", "-1"), ("--difficulty", "hard"))
        ]
    assert done.returncode == 0, done.stderr
    graded = [json.loads(line) for line in (tmp_path / "r.jsonl").read_text().splitlines()]
    assert [g["question_id"] for g in graded] == [moderate[1].question_id]
    assert server.requests
    assert {r.get("service_tier") for r in server.requests} == {"flex"}
    assert bad[0].returncode == bad[1].returncode == 1
    assert "--offset must be 0 or more, got -1" in bad[0].stderr
    assert "argument --difficulty: invalid choice: 'hard'" in bad[1].stderr


def test_no_evidence_and_system_prompt_reach_the_prompts(tmp_path: Path) -> None:
    write_sample(tmp_path / "bird")
    first = load_bird(tmp_path / "bird").questions[0]
    assert first.evidence  # the sample's first question has evidence to leave out
    (tmp_path / "sql.md").write_text("You answer in SQLite, nothing else.\n")
    with LoopbackServer([], rules=[sample_rule()]) as server:
        environ = env(tmp_path, server)
        done = rho_here(
            "eval", "bird", "--data", "bird", "-n", "1", "--no-evidence", "-s", "sql.md",
            "-m", "m", cwd=tmp_path, environ=environ,
        )  # fmt: skip
        missing = rho_here(
            "eval", "bird", "--data", "bird", "-s", "nope.md", cwd=tmp_path, environ=environ
        )
    assert done.returncode == 0, done.stderr
    chats = [r for r in server.requests if "messages" in r]
    assert chats
    for request in chats:
        system, user = request["messages"][0], request["messages"][1]
        assert system == {"role": "system", "content": "You answer in SQLite, nothing else."}
        assert f"Question: {first.question}\n" in user["content"]
        assert "External knowledge" not in user["content"]
    # a run without evidence is graded in its own file, never continuing one with it
    assert (tmp_path / "bird-dev-no-evidence-results.jsonl").is_file()
    assert not (tmp_path / "bird-dev-results.jsonl").exists()
    assert missing.returncode == 1
    assert "rho-agent eval: --system-prompt nope.md: " in missing.stderr
