"""The codec: every event round-trips, tags are stable, versions and configs are checked."""

from __future__ import annotations

import json

import pytest
import yaml

from rho_adapters.codec import (
    TRACE_FORMAT_VERSION,
    config_from_dict,
    config_to_dict,
    decode_event_line,
    encode_event_line,
    event_from_dict,
    event_to_dict,
    make_converter,
)
from rho_domain import events as ev
from rho_domain.config import AgentConfig, Budget, DatabaseConfig
from rho_domain.errors import ConfigError, TraceFormatError
from rho_domain.messages import (
    AssistantMessage,
    SystemMessage,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
)
from rho_domain.permissions import developer_profile, eval_profile
from rho_domain.placement import Placement
from rho_domain.run import RunStatus

CALL = ToolCall("call_1", "bash", '{"command": "ls -la"}')
USAGE = Usage(input_tokens=10, output_tokens=5, cached_tokens=2, reasoning_tokens=1, cost_usd=0.25)

ONE_OF_EACH: tuple[ev.Event, ...] = (
    ev.RunStarted(at=1.0, run_id="r1", prompt="what is in /var/log? ünïcødé"),
    ev.RunStarted(at=1.0, run_id="r2", prompt=None),
    ev.RunEnded(
        at=2.0,
        run_id="r1",
        status=RunStatus.COMPLETED,
        text="done",
        usage=USAGE,
        session_usage=USAGE + USAGE,
        error=None,
    ),
    ev.MessageAdded(at=1.1, message=UserMessage("hello", origin="directive")),
    ev.MessageAdded(at=1.1, message=SystemMessage("be brief")),
    ev.MessageAdded(
        at=1.2,
        message=AssistantMessage(text="let me look", tool_calls=(CALL,), reasoning="hmm"),
    ),
    ev.MessageAdded(
        at=1.3,
        message=ToolResultMessage(call_id="call_1", tool_name="bash", content="x", is_error=True),
    ),
    ev.LLMStarted(at=1.0, model="m", call_index=0, context_tokens=120),
    ev.LLMEnded(at=1.5, model="m", call_index=0, usage=USAGE, finish_reason=None, duration=0.5),
    ev.TextDelta(at=1.0, text="par"),
    ev.ReasoningDelta(at=1.0, text="think"),
    ev.ToolCallDelta(at=1.0, index=0, call_id="c", name="bash", arguments_delta='{"com'),
    ev.ToolStarted(at=1.0, call=CALL),
    ev.ToolEnded(
        at=1.0,
        call_id="call_1",
        tool_name="bash",
        content="out",
        is_error=False,
        duration=0.01,
        metadata={"exit_code": 0, "nested": {"a": [1, 2]}},
    ),
    ev.ToolBlocked(at=1.0, call=CALL, by="policy", reason="denied"),
    ev.ApprovalRequested(at=1.0, call=CALL, reason="dangerous", pending=(CALL, ToolCall("b", "x"))),
    ev.ApprovalResolved(at=1.0, call_id="call_1", tool_name="bash", approved=True, always=True),
    ev.Compacted(
        at=1.0,
        trigger="auto",
        summary="summary",
        tokens_before=900,
        tokens_after=100,
        replaced_count=7,
        messages=(UserMessage("summary", origin="summary"), UserMessage("q", origin="recent")),
    ),
    ev.UsageRecorded(at=1.0, usage=Usage(estimated=True), prompt_tokens=33),
    ev.Interrupted(at=1.0, reason="paused", detail="before model call"),
    ev.DirectiveApplied(at=1.0, offset=3, text="focus on errors"),
    ev.ErrorOccurred(at=1.0, error_type="ModelHTTPError", message="boom"),
    ev.ModelRetrying(at=1.0, delay=1.0, reason="429", attempt=2, attempts=3),
    ev.TraceNoted(at=1.0, name="parse_error", message="skipped", detail="{garbage"),
    ev.Placed(at=1.0, placement=Placement(backend="daytona", id="sbx-1")),
    ev.CompactStarted(at=1.0, trigger="manual", tokens_before=900),
    ev.ListenerFailed(
        at=1.0, listener="ui.Renderer", event_kind="tool_end", error_type="KeyError", message="w"
    ),
    ev.HookActed(
        at=1.0,
        point="before_model",
        hook="hooks.redact",
        outcome="rewrote",
        messages=(UserMessage("[redacted]"),),
    ),
)


def test_every_event_type_is_covered() -> None:
    assert {type(e) for e in ONE_OF_EACH} == set(ev.EVENT_TYPES)


@pytest.mark.parametrize("event", ONE_OF_EACH, ids=lambda e: f"{e.kind}")
def test_event_round_trips_through_a_line(event: ev.Event) -> None:
    line = encode_event_line(event)
    assert line.endswith(b"\n")
    assert line.count(b"\n") == 1
    assert decode_event_line(line) == event
    assert event_from_dict(json.loads(line)) == event


@pytest.mark.parametrize("event", ONE_OF_EACH, ids=lambda e: f"{e.kind}")
def test_lines_carry_version_kind_and_time(event: ev.Event) -> None:
    data = event_to_dict(event)
    assert data["v"] == TRACE_FORMAT_VERSION
    assert data["kind"] == event.kind
    assert data["at"] == event.at
    assert type(event).__name__ not in json.dumps(data)


def test_messages_are_tagged_by_role() -> None:
    data = event_to_dict(
        ev.MessageAdded(at=0.0, message=ToolResultMessage(call_id="c", tool_name="t", content="r"))
    )
    assert data["message"]["role"] == "tool"


def test_future_version_is_refused_with_a_clear_error() -> None:
    data = event_to_dict(ONE_OF_EACH[0]) | {"v": TRACE_FORMAT_VERSION + 1}
    with pytest.raises(TraceFormatError, match="newer"):
        event_from_dict(data)


@pytest.mark.parametrize(
    "line",
    [
        b'{"kind": "run_start", "at": 1, "run_id": "r", "prompt": null}',
        b'{"v": 1, "kind": "teleport", "at": 1}',
        b'{"v": 1, "kind": "run_start", "at": 1}',
        b'{"v": 1, "kind": "message", "at": 1, "message": {"role": "alien", "content": "x"}}',
        b"[1, 2]",
        b'{"v": 1, "kind": "run_st',
        b'{"v": 1, "kind": "interruption", "at": 1, "reason": "napping"}',
        b'{"v": 1, "kind": "run_end", "at": 1, "run_id": "r", "status": "exploded"}',
    ],
)
def test_malformed_lines_raise_trace_format_error(line: bytes) -> None:
    with pytest.raises(TraceFormatError):
        decode_event_line(line)


def test_unknown_extra_field_in_a_trace_line_is_tolerated() -> None:
    data = event_to_dict(ONE_OF_EACH[0]) | {"added_later": 1}
    assert event_from_dict(data) == ONE_OF_EACH[0]


@pytest.mark.parametrize("event", ONE_OF_EACH, ids=lambda e: f"{e.kind}")
def test_the_plain_encoder_writes_what_the_converter_writes(event: ev.Event) -> None:
    """Events are written by a plain walk (no cattrs); its bytes are the converter's."""
    fields = make_converter(detailed_validation=False, strict=False).unstructure(
        event, unstructure_as=type(event)
    )
    by_converter = {"v": TRACE_FORMAT_VERSION, "kind": event.kind, **fields}
    assert event_to_dict(event) == by_converter
    compact = json.dumps(by_converter, ensure_ascii=False, separators=(",", ":"))
    assert encode_event_line(event) == compact.encode() + b"\n"


CONFIGS = [
    AgentConfig(),
    AgentConfig(
        profile=developer_profile(),
        vars={"team": "sre"},
        databases={
            "prod": DatabaseConfig(
                engine="postgres",
                host="db",
                port=5432,
                password_env="PGPASSWORD",
                options={"ssl": True},
            )
        },
        budget=Budget(max_cost_usd=1.5),
        response_format={"type": "json_object"},
        stream=False,
    ),
    AgentConfig(profile=eval_profile(), temperature=0.2, max_turns=3),
]


@pytest.mark.parametrize("config", CONFIGS)
def test_config_round_trips_through_yaml(config: AgentConfig) -> None:
    text = yaml.safe_dump(config_to_dict(config))
    assert config_from_dict(yaml.safe_load(text), source="config.yaml") == config


@pytest.mark.parametrize("config", CONFIGS)
def test_configs_are_written_as_the_converter_writes_them(config: AgentConfig) -> None:
    converter = make_converter(forbid_extra_keys=True)
    expected = converter.unstructure(config, unstructure_as=AgentConfig)
    if not isinstance(config.profile, str):
        expected["profile"] = converter.unstructure(
            config.profile, unstructure_as=type(config.profile)
        )
    assert config_to_dict(config) == expected
    assert yaml.safe_dump(config_to_dict(config), sort_keys=False) == yaml.safe_dump(
        expected, sort_keys=False
    )


def test_stored_configs_of_older_versions_still_load() -> None:
    assert config_from_dict({"extras": {}, "model": "m"}, source="c") == AgentConfig(model="m")


def test_profile_name_stays_a_string_and_object_becomes_a_mapping() -> None:
    assert config_to_dict(AgentConfig(profile="developer"))["profile"] == "developer"
    as_map = config_to_dict(AgentConfig(profile=developer_profile()))["profile"]
    assert as_map["name"] == "developer"
    assert as_map["shell"] == "unrestricted"
    assert as_map["approval_required_tools"] == sorted(as_map["approval_required_tools"])


@pytest.mark.parametrize(
    ("data", "fragment"),
    [
        ({"modle": "x"}, "unknown key 'modle' (did you mean 'model'?) @ config"),
        ({"budget": {"max_cost": 1}}, "unknown key 'max_cost' (did you mean 'max_cost_usd'?)"),
        ({"zzz": 1}, "unknown key 'zzz' @ config"),
        # keys YAML reads as a number, a boolean or null crashed the message (TypeError)
        ({1: "x"}, "unknown key 1 (YAML read it as int: a key here is a name) @ config"),
        ({None: 1, True: 2, "modle": "m"}, "unknown key 'modle' (did you mean 'model'?)"),
        ({"profile": {"name": "p", 2: 3}}, "unknown key 2 (YAML read it as int"),
        # a mistyped scalar says what it got: a number in quotes was "invalid value for type,
        # expected int | None", which hid that the value was there, only quoted
        ({"budget": {"max_cost_usd": "lots"}}, "got the string 'lots' (a number or true/false"),
        ({"budget": {"max_cost_usd": "lots"}}, "expected float, got the string 'lots'"),
        (
            {"max_turns": "5"},
            "expected int, got the string '5' (a number or true/false is written without "
            "quotes) @ config.max_turns",
        ),
        ({"auto_approve": "no"}, "expected bool, got the string 'no'"),
        ({"profile": {"name": "p", "shell_timeout": "30"}}, "got the string '30'"),
        ({"model": 3}, "expected str, got int @ config.model"),
        ({"databases": {"a": {"engine": "x", "pw": 1}}}, "unknown key 'pw'"),
        ({"profile": {"name": "p", "shell": "root"}}, "config.profile.shell"),
        (
            {"profile": {"name": "p", "shell": "root"}},
            "expected one of restricted, unrestricted (got 'root')",
        ),
    ],
)
def test_config_errors_name_source_key_and_type(data: dict[str, object], fragment: str) -> None:
    with pytest.raises(ConfigError) as info:
        config_from_dict(data, source="/etc/rho/agent.yaml")
    message = str(info.value)
    assert message.startswith("/etc/rho/agent.yaml:")
    assert fragment in message


def test_config_that_is_not_a_mapping_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="expected a mapping"):
        config_from_dict(["model"], source="x.yaml")
