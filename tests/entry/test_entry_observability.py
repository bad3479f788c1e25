"""`rho-agent stats` and `rho-agent export --format atif` on a real session directory."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from obs_support import stored_session

from rho_adapters.atif import arguments_object, trajectory
from rho_adapters.store.trace import read_trace
from rho_domain.errors import ConfigError
from rho_domain.messages import AssistantMessage, ToolResultMessage, UserMessage
from rho_entry.cli.main import main as cli_main
from rho_entry.cli.stats import session_stats
from rho_entry.config.prices import load_prices, parse_prices

# Harbor 0.26's own models as JSON Schema (ATIF-v1.8); test_atif_harbor.py runs Harbor itself.
SCHEMA = json.loads(
    (Path(__file__).parents[1] / "fixtures" / "atif" / "atif-v1.8.schema.json").read_text()
)


def _validate(document: dict[str, Any]) -> None:
    # imported here: each xdist worker collects this module, one runs it (0.06 s of CPU)
    import jsonschema

    jsonschema.Draft202012Validator(
        SCHEMA, format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER
    ).validate(document)


@pytest.fixture
async def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("RHO_AGENT_HOME", str(tmp_path))
    await stored_session(tmp_path)
    return tmp_path


def _parent(home: Path) -> Path:
    (parent,) = [
        d
        for d in (home / "sessions").iterdir()
        if "parent_id" not in json.loads((d / "meta.json").read_text())
        or json.loads((d / "meta.json").read_text())["parent_id"] is None
    ]
    return parent


def _run_cli(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = cli_main(args)
    out, err = capsys.readouterr()
    return code, out, err


async def test_stats_json_has_turns_tools_and_priced_cost(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    parent = _parent(home)
    code, out, err = _run_cli(["stats", parent.name, "--json"], capsys)
    assert code == 0, err
    data = json.loads(out)
    assert data["session_id"] == parent.name
    assert data["turn_count"] == 3
    assert data["tool_count"] == 3
    turns = data["runs"][0]["turns"]
    assert [t["finish_reason"] for t in turns] == ["tool_calls", "tool_calls", "stop"]
    # gpt-4o from the shipped table: 800 uncached at 2.5, 200 cached at 1.25, 100 out at 10
    assert turns[0]["usage"]["cost_usd"] == pytest.approx((800 * 2.5 + 200 * 1.25 + 1000) / 1e6)
    tools = {t["call_id"]: t for t in data["runs"][0]["tools"]}
    assert tools["call_w"]["outcome"] == "ok"
    assert tools["call_w"]["approval"] == "approved"
    assert tools["call_r"]["outcome"] == "error"
    assert tools["call_d"]["outcome"] == "ok"
    assert data["usage"]["cost_usd"] == pytest.approx(sum(t["usage"]["cost_usd"] for t in turns))
    library = session_stats(parent.name, home)  # the library function gives the same numbers
    assert library.usage.cost_usd == pytest.approx(data["usage"]["cost_usd"])
    assert len(library.turns) == 3


async def test_stats_table_and_all(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    parent = _parent(home)
    code, out, _ = _run_cli(["stats", parent.name[:6]], capsys)
    assert code == 0
    assert f"session {parent.name}: 1 run(s), 3 model call(s), 3 tool call(s)" in out
    assert "delegate" in out
    assert "approved" in out
    code, out, _ = _run_cli(["stats", "--all"], capsys)
    lines = out.splitlines()
    assert code == 0
    assert len(lines) == 1 + 2 + 1
    assert lines[-1].startswith("total")


async def test_stats_unknown_session_is_a_clear_error(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = _run_cli(["stats", "nope"], capsys)
    assert code == 1
    assert "no session matches 'nope'" in err


async def test_atif_export_validates_and_holds_every_message(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    parent = _parent(home)
    code, out, err = _run_cli(["export", parent.name, "--format", "atif"], capsys)
    assert code == 0, err
    document = json.loads(out)
    _validate(document)
    assert document["session_id"] == parent.name
    assert document["agent"]["model_name"] == "gpt-4o"

    # round trip: every message, tool call and result of the trace is in the export
    events = read_trace(parent / "trace.jsonl").events
    steps = document["steps"]
    calls = {c["tool_call_id"]: (s, c) for s in steps for c in s.get("tool_calls", ())}
    results = {
        r["source_call_id"]: r for s in steps for r in s.get("observation", {}).get("results", ())
    }
    messages = [e.message for e in events if e.kind == "message"]  # type: ignore[union-attr]
    assert messages
    agent_steps = iter(s for s in steps if s["source"] == "agent")
    user_steps = iter(s for s in steps if s["source"] == "user")
    for message in messages:
        if isinstance(message, UserMessage):
            assert next(user_steps)["message"] == message.content
        elif isinstance(message, AssistantMessage):
            step = next(agent_steps)
            assert step["message"] == message.text
            assert step.get("reasoning_content", "") == message.reasoning
            for tool_call in message.tool_calls:
                owner, exported = calls[tool_call.id]
                assert owner is step
                assert exported["function_name"] == tool_call.name
                assert exported["arguments"] == json.loads(tool_call.arguments)
        elif isinstance(message, ToolResultMessage):
            assert results[message.call_id]["content"] == message.content
    assert next(agent_steps, None) is None
    assert next(user_steps, None) is None
    assert [s["step_id"] for s in steps] == list(range(1, len(steps) + 1))

    first_agent = next(s for s in steps if s["source"] == "agent")
    assert first_agent["metrics"]["prompt_tokens"] == 1000
    assert first_agent["metrics"]["cached_tokens"] == 200
    assert first_agent["metrics"]["cost_usd"] > 0
    assert first_agent["extra"]["failed_calls"] == ["call_r"]
    final = document["final_metrics"]
    agent_metrics = [s["metrics"] for s in steps if s["source"] == "agent"]
    assert final["total_prompt_tokens"] == sum(m["prompt_tokens"] for m in agent_metrics)
    assert final["total_cost_usd"] == pytest.approx(sum(m["cost_usd"] for m in agent_metrics))
    assert final["total_steps"] == len(steps)

    (ref,) = results["call_d"]["subagent_trajectory_ref"]
    child = home / "sessions" / ref["session_id"]
    assert json.loads((child / "meta.json").read_text())["parent_id"] == parent.name
    # resolvable by trajectory_id: the child is embedded, as its own export
    (embedded,) = document["subagent_trajectories"]
    assert ref["trajectory_id"] == embedded["trajectory_id"] == ref["session_id"]
    assert document["trajectory_id"] == parent.name
    code, out, _ = _run_cli(["export", ref["session_id"], "--format", "atif"], capsys)
    child_doc = json.loads(out)
    _validate(child_doc)
    assert child_doc == embedded
    assert [s["message"] for s in child_doc["steps"]] == ["count files", "child says 3"]


async def test_atif_a_child_that_is_gone_is_named_not_referenced(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    parent = _parent(home)
    for child in (home / "sessions").iterdir():
        if child != parent:
            (child / "trace.jsonl").unlink()
    code, out, _ = _run_cli(["export", parent.name, "--format", "atif"], capsys)
    assert code == 0
    document = json.loads(out)
    _validate(document)
    assert "subagent_trajectories" not in document
    (result,) = [
        r
        for s in document["steps"]
        for r in s.get("observation", {}).get("results", ())
        if r["source_call_id"] == "call_d"
    ]
    assert "subagent_trajectory_ref" not in result  # session_id alone would not resolve
    assert result["extra"]["child_trajectory"] == "not exported: the child session was not found"


def test_the_schema_rejects_what_the_rfc_forbids() -> None:
    from jsonschema import ValidationError

    good = trajectory([], session_id="s", agent_version="1")
    _validate(good)
    for broken in (
        {**good, "schema_version": "ATIF-v9"},
        {**good, "agent": {"name": "x"}},
        {**good, "steps": [{"step_id": 1, "source": "tool", "message": ""}]},
        {**good, "surprise": 1},
    ):
        with pytest.raises(ValidationError):
            _validate(broken)


def test_arguments_that_are_not_an_object_are_kept_raw() -> None:
    assert arguments_object('{"a": 1}') == {"a": 1}
    assert arguments_object("") == {}
    assert arguments_object("[1, 2]") == {"_raw": "[1, 2]"}
    assert arguments_object('{"a": ') == {"_raw": '{"a": '}


def test_user_prices_override_the_shipped_ones(tmp_path: Path) -> None:
    (tmp_path / "prices.yaml").write_text(
        "version: 1\nmodels:\n  gpt-4o: {input: 1, output: 2, taken: '2026-01-01'}\n"
        "  my-local: {input: 0.1, output: 0.2}\n"
    )
    table = load_prices({"RHO_AGENT_HOME": str(tmp_path)})
    gpt = table.lookup("gpt-4o")
    assert gpt is not None
    assert (gpt.input, gpt.output, gpt.taken) == (1.0, 2.0, "2026-01-01")
    assert table.lookup("my-local") is not None
    shipped = load_prices({"RHO_AGENT_HOME": str(tmp_path / "none")})
    assert all(p.taken for p in shipped.prices.values())  # every shipped price says when


@pytest.mark.parametrize(
    ("document", "message"),
    [
        ({"version": 2, "models": {}}, "version: expected 1"),
        ({"version": 1, "models": {"m": {"input": 1}}}, "models.m.output: missing"),
        ({"version": 1, "models": {"m": {"input": "x", "output": 1}}}, "models.m.input: expected"),
        ({"version": 1, "models": {"m": {"input": 1, "output": 1, "cache": 1}}}, "models.m.cache"),
        ({"version": 1, "extra": 1}, "extra: unknown key"),
    ],
)
def test_a_bad_price_file_names_the_key(document: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError, match=message.replace(".", r"\.")) as info:
        parse_prices(document, "/home/me/prices.yaml")
    assert "/home/me/prices.yaml" in str(info.value)


@pytest.mark.parametrize("usage", [(200_000, 1_000), None], ids=["tokens-no-cost", "no-usage"])
async def test_the_cost_budget_fires_over_a_real_openai_compatible_socket(
    tmp_path: Path, usage: tuple[int, int] | None
) -> None:
    """Through the real HTTP client: a server that reports tokens but never a cost, and one
    that reports no usage at all; the price table prices both, and the budget ends the run."""
    from rho_adapters.fakes.loopback import LoopbackServer
    from rho_adapters.fakes.wire import call as wire_call
    from rho_adapters.fakes.wire import tool_reply
    from rho_domain.config import Budget
    from rho_domain.run import RunStatus
    from rho_entry import Agent, AgentConfig, Session

    (tmp_path / "big.txt").write_text("x" * 200_000)
    reply = tool_reply(wire_call("read", {"path": "big.txt"}), usage=usage)
    with LoopbackServer([reply], repeat=True) as server:
        config = AgentConfig(
            model="gpt-4o",
            base_url=server.base_url,
            working_dir=str(tmp_path),
            budget=Budget(max_cost_usd=0.05),
            max_turns=30,
            repeat_limit=0,  # the same read each time: the budget, not the repeat guard, is tested
        )
        async with Session(Agent(config)) as session:
            result = await session.run("read big.txt until you are stopped")
    assert result.status is RunStatus.BUDGET_EXCEEDED, result.error
    assert result.usage.cost_usd is not None
    assert result.usage.cost_usd >= 0.05
