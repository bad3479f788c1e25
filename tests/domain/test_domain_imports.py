"""What importing a domain module builds is pinned, not timed (bench/bench_oneshot.py measures).

A one-shot builds the classes its run uses; the domain modules below load where they apply:
the output schema's validator with the first schema checked or answer judged, the context
export with the first export asked for, the writing tools and ``delegate`` where a profile
registers them, the delegation's values (``tools.children``) with the first child, the tool
factory where a GRANULAR profile is compared, and the session store's port without the events
and the config it names in annotations. Each test runs in a fresh interpreter and fails when
the module is loaded again with its importer.
"""

from __future__ import annotations

import subprocess
import sys


def _domain_modules(code: str) -> list[str]:
    """The rho_domain modules loaded after ``code`` runs in a fresh interpreter (its stdout's
    last line is the sorted list)."""
    shown = "import sys\nprint(*sorted(m for m in sys.modules if m.startswith('rho_domain')))"
    done = subprocess.run(
        [sys.executable, "-c", f"{code}\n{shown}"], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()[-1].split()


def test_the_store_port_names_events_and_the_config_without_building_them() -> None:
    loaded = _domain_modules("import rho_domain.ports.store")
    assert "rho_domain.ports.store" in loaded
    assert "rho_domain.events" not in loaded
    assert "rho_domain.config" not in loaded
    assert "rho_domain.ports.signals" not in loaded


def test_the_output_schema_validator_loads_with_the_first_schema() -> None:
    without = _domain_modules(
        "from rho_domain.agent import Agent\n"
        "from rho_domain.config import AgentConfig\n"
        "from rho_domain.permissions import builtin_profile\n"
        "from rho_domain.tools.registry import ToolRegistry\n"
        "import rho_domain.loop.output_check\n"
        "profile, registry = builtin_profile('readonly'), ToolRegistry([])\n"
        "agent = Agent(\n"
        "    config=AgentConfig(), profile=profile, registry=registry, system_prompt=''\n"
        ")\n"
        "agent.request(())"
    )
    # the answer's shape (and its validator) load with the first schema: agent.request and
    # output_check import it only for a config that has one
    assert "rho_domain.answer_shape" not in without
    assert "rho_domain.json_schema" not in without
    with_schema = _domain_modules(
        "from rho_domain.config import AgentConfig\n"
        "from rho_domain.errors import ConfigError\n"
        "AgentConfig(output_schema={'type': 'object'})\n"
        "try:\n"
        "    AgentConfig(output_schema={'type': 'thing'})\n"
        "except ConfigError as exc:\n"
        "    print(exc)\n"
    )
    assert "rho_domain.json_schema" in with_schema


def test_an_answer_is_judged_by_the_validator_it_loads() -> None:
    code = (
        "from rho_domain.answer_shape import parse\n"
        "print(parse('```json\\n{\"a\": 1}\\n```'))\n"
        "print(parse('[1')[1])\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    fenced, wrong = done.stdout.splitlines()
    assert fenced == "({'a': 1}, None)"
    assert wrong.startswith("$: the answer is not JSON")  # the problem's path: the whole answer


def test_a_read_only_registry_builds_no_writing_tool_and_no_delegate() -> None:
    code = (
        "from rho_domain.permissions import builtin_profile\n"
        "from rho_domain.tools.factory import build_registry\n"
        "print(sorted(build_registry(builtin_profile('readonly')).names))\n"
    )
    loaded = _domain_modules(code)
    assert "rho_domain.tools.write" not in loaded
    assert "rho_domain.tools.delegate" not in loaded
    code = (
        "from rho_domain.permissions import builtin_profile\n"
        "from rho_domain.tools.factory import build_registry\n"
        "names = build_registry(builtin_profile('developer'), delegation=True).names\n"
        "assert {'write', 'edit', 'delegate'} <= set(names), names\n"
    )
    loaded = _domain_modules(code)
    assert {"rho_domain.tools.write", "rho_domain.tools.delegate"} <= set(loaded)


def test_comparing_profiles_builds_the_tools_only_for_a_granular_one() -> None:
    readonly = _domain_modules(
        "from rho_domain.permissions import builtin_profile\n"
        "from rho_domain.profile_grants import excess\n"
        "assert excess(builtin_profile('readonly'), builtin_profile('eval')) == ()\n"
    )
    assert "rho_domain.tools.factory" not in readonly
    granular = _domain_modules(
        "from rho_domain.permissions import builtin_profile\n"
        "from rho_domain.profile_grants import excess\n"
        "assert excess(builtin_profile('developer'), builtin_profile('eval')) == ()\n"
    )
    assert "rho_domain.tools.factory" in granular


def test_the_run_control_loads_the_context_export_with_the_first_request() -> None:
    loaded = _domain_modules("import rho_domain.loop.control")
    assert "rho_domain.loop.control" in loaded
    assert "rho_domain.context_export" not in loaded


def test_the_loop_builds_the_delegation_values_with_the_first_child() -> None:
    loaded = _domain_modules("import rho_domain.loop.session")
    assert {"rho_domain.loop.tool_batch", "rho_domain.loop.sub_agents"} <= set(loaded)
    assert "rho_domain.tools.children" not in loaded


_OFF_PLAN = {"rho_domain.approval_events", "rho_domain.control_events", "rho_domain.hook_events"}

_PLAIN_RUN = (
    "from rho_domain import events as ev\n"
    "from rho_domain.messages import AssistantMessage, ToolCall, Usage, UserMessage\n"
    "from rho_domain.run import RunStatus\n"
    "from rho_domain.state import State\n"
    "call = ToolCall(id='c1', name='list', arguments={'path': '.'})\n"
    "plain = [\n"
    "    ev.RunStarted(at=1.0, run_id='r', prompt='hi'),\n"
    "    ev.MessageAdded(at=1.0, message=UserMessage(content='hi')),\n"
    "    ev.LLMStarted(at=1.0, model='m', call_index=1, context_tokens=3),\n"
    "    ev.TextDelta(at=1.0, text='x'),\n"
    "    ev.LLMEnded(at=1.0, model='m', call_index=1, usage=Usage(), finish_reason=None,\n"
    "                duration=0.1),\n"
    "    ev.UsageRecorded(at=1.0, usage=Usage(input_tokens=3), prompt_tokens=3),\n"
    "    ev.ToolStarted(at=1.0, call=call),\n"
    "    ev.ToolEnded(at=1.0, call_id='c1', tool_name='list', content='a', is_error=False,\n"
    "                 duration=0.1),\n"
    "    ev.RunEnded(at=2.0, run_id='r', status=RunStatus.COMPLETED, text='done'),\n"
    "]\n"
    "state = State.from_events(plain)\n"
    "print(state.status, state.run_count, state.model_calls, state.tool_calls)\n"
)


def test_a_plain_run_folds_without_the_kinds_it_never_emits() -> None:
    """Approvals, blocks, compaction, interruptions, directives, errors, retries, skipped
    stream pieces, failed listeners and hooks that acted are built by the first process that
    emits or reads one."""
    code = _PLAIN_RUN + "import sys\nprint(*sorted(m for m in sys.modules if 'rho_' in m))\n"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    folded, loaded = done.stdout.splitlines()[-2:]
    assert folded == "completed 1 1 1"
    assert "rho_domain.events" in loaded.split()
    assert not _OFF_PLAN & set(loaded.split())


def test_the_kinds_a_plain_run_never_emits_load_with_the_first_one_and_fold() -> None:
    code = _PLAIN_RUN + (
        "state.apply(ev.ApprovalRequested(at=3.0, call=call, reason='asks'))\n"
        "state.apply(ev.ApprovalResolved(at=3.0, call_id='c1', tool_name='list',\n"
        "                                approved=True, always=True))\n"
        "state.apply(ev.DirectiveApplied(at=3.0, offset=4, text='stop'))\n"
        "state.apply(ev.ErrorOccurred(at=3.0, error_type='X', message='y'))\n"
        "print(state.approvals, sorted(state.always_allowed), state.directive_offset)\n"
        "compact = ev.EVENTS_BY_KIND['compact'].__name__\n"
        "print(len(ev.EVENT_TYPES), len(ev.EVENTS_BY_KIND), compact)\n"
        "print(ev.Compacted in ev.EVENT_TYPES, ev.ToolBlocked in ev.Event.__args__)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    folded, joined, found = done.stdout.splitlines()[-3:]
    assert folded == "{'c1': True} ['list'] 5"
    assert joined == "24 24 Compacted"
    assert found == "True True"


def test_a_config_builds_the_mcp_and_database_values_with_the_first_one_named() -> None:
    """An AgentConfig (and a profile) without MCP servers or databases leaves their module
    unloaded; naming one loads it and checks it; the codec's converter resolves the fields'
    annotations and reads both back."""
    plain = _domain_modules(
        "from rho_domain.config import AgentConfig\n"
        "from rho_domain.permissions import builtin_profile\n"
        "AgentConfig(profile=builtin_profile('developer'))"
    )
    assert "rho_domain.config" in plain
    assert "rho_domain.mcp_config" not in plain
    assert "rho_domain.database_config" not in plain
    named = _domain_modules(
        "from rho_domain.config import AgentConfig, DatabaseConfig, McpServerConfig\n"
        "from rho_domain.errors import ConfigError\n"
        "AgentConfig(databases={'d': DatabaseConfig(engine='sqlite', path='x')})\n"
        "try:\n"
        "    AgentConfig(mcp_servers={'a__b': McpServerConfig(command=('x',))})\n"
        "except ConfigError as exc:\n"
        "    print(exc)\n"
    )
    assert {"rho_domain.mcp_config", "rho_domain.database_config"} <= set(named)
    code = (
        "from rho_adapters.codec import make_converter\n"
        "from rho_domain.config import AgentConfig\n"
        "data = {'databases': {'d': {'engine': 'sqlite', 'path': 'x'}},\n"
        "        'mcp_servers': {'t': {'url': 'http://h/mcp'}},\n"
        "        'profile': {'name': 'p', 'mcp_servers': {'t': {}}}}\n"
        "config = make_converter(forbid_extra_keys=True).structure(data, AgentConfig)\n"
        "print(config.databases['d'].path, config.mcp_servers['t'].url,\n"
        "      config.profile.mcp_servers['t'].is_reference)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["x", "http://h/mcp", "True"]
