"""Hooks through the library facade and YAML configs, on real files, a real trace.jsonl and a
real resume (issue 29, item 15).

The first test is the one issue 29 reports: a redaction done by wrapping the model (the only
way before hooks) kept the secret in trace.jsonl, since the trace recorded the tool's result
before the model was called. A hook's output is what the session records.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from rho_adapters.fakes import ScriptedModel, call, text, tools
from rho_adapters.store import FileSessionStore
from rho_domain.config import HookConfig
from rho_domain.errors import ConfigError
from rho_domain.hooks import AfterToolCall, Hooks, ReplaceResult
from rho_domain.run import RunStatus
from rho_entry import Agent, AgentConfig, Session

SSN = "078-05-1120"
PATTERN = re.compile(r"\b\d{3}-\d{2}-\d{4}\b")


def redact(given: AfterToolCall) -> ReplaceResult | None:
    """Social security numbers out of every tool result."""
    if not PATTERN.search(given.content):
        return None
    return ReplaceResult(PATTERN.sub("[ssn]", given.content))


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "work"
    root.mkdir()
    (root / "customers.csv").write_text(f"name,ssn\nAda,{SSN}\n")
    return root


def _trace(store_root: Path, session_id: str) -> bytes:
    return (store_root / session_id / "trace.jsonl").read_bytes()


async def test_a_redacted_result_never_reaches_trace_jsonl_or_the_model(
    workspace: Path, tmp_path: Path
) -> None:
    store_root = tmp_path / "sessions"
    model = ScriptedModel([tools(call("read", {"path": "customers.csv"})), text("one customer")])
    agent = Agent(
        AgentConfig(profile="readonly", working_dir=str(workspace)),
        environ={},
        hooks=Hooks(after_tool=[redact]),
    )
    async with Session(agent, model=model, store=FileSessionStore(store_root)) as session:
        result = await session.run("how many customers?")
    assert result.status is RunStatus.COMPLETED, result.error
    trace = _trace(store_root, session.id)
    assert b"[ssn]" in trace  # the tool ran and its result was recorded, redacted
    assert SSN.encode() not in trace
    assert all(SSN not in repr(r.messages) for r in model.requests)


def _hook_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str) -> Path:
    """A module of the user's, importable by name, whose import leaves a mark."""
    folder = tmp_path / "userhooks"
    folder.mkdir(exist_ok=True)
    mark = tmp_path / f"{name}.imported"
    (folder / f"{name}.py").write_text(
        "import re\n"
        "from pathlib import Path\n"
        "from rho_domain.hooks import ReplaceResult\n"
        f"Path({str(mark)!r}).write_text('imported')\n"
        "def redact(given):\n"
        f"    return ReplaceResult(re.sub(r'\\b\\d{{3}}-\\d{{2}}-\\d{{4}}\\b', '[ssn]', "
        "given.content))\n"
        "NOT_A_FUNCTION = 42\n"
    )
    monkeypatch.syspath_prepend(str(folder))
    monkeypatch.delitem(sys.modules, name, raising=False)
    return mark


async def test_hooks_named_in_a_yaml_config_are_imported_and_run(
    workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _hook_module(tmp_path, monkeypatch, "site_redaction")
    config_file = tmp_path / "agent.yaml"
    config_file.write_text(
        f"profile: readonly\nworking_dir: {workspace}\n"
        "hooks:\n  after_tool: ['site_redaction:redact']\n  timeout: 2\n"
    )
    config = AgentConfig.from_file(config_file)
    assert config.hooks == HookConfig(after_tool=("site_redaction:redact",), timeout=2)
    store_root = tmp_path / "sessions"
    model = ScriptedModel([tools(call("read", {"path": "customers.csv"})), text("ok")])
    agent = Agent(config, environ={})
    assert agent.hooks.deadline == 2
    async with Session(agent, model=model, store=FileSessionStore(store_root)) as session:
        result = await session.run("read it")
    assert result.status is RunStatus.COMPLETED, result.error
    assert SSN.encode() not in _trace(store_root, session.id)
    # a config written back keeps the reference
    again = tmp_path / "again.yaml"
    AgentConfig.from_config(config).to_file(again)
    assert AgentConfig.from_file(again).hooks == config.hooks


@pytest.mark.parametrize(
    ("ref", "says"),
    [
        ("no_such_module_anywhere:redact", "does not import: ModuleNotFoundError"),
        ("site_redaction:nothing_here", "site_redaction has no nothing_here"),
        # a slip is named with the function meant (before: only what was not there)
        ("site_redaction:redcat", "site_redaction has no redcat (did you mean 'redact'?)"),
        ("site_redaction:NOT_A_FUNCTION", "is a int, not a function"),
    ],
)
def test_a_reference_that_does_not_resolve_is_refused_naming_its_key(
    ref: str, says: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _hook_module(tmp_path, monkeypatch, "site_redaction")
    config = AgentConfig(hooks=HookConfig(after_run=("json:dumps", ref)))
    with pytest.raises(ConfigError) as caught:
        Agent(config, environ={})
    assert str(caught.value).startswith(f"hooks.after_run[1]: {ref!r}")
    assert says in str(caught.value)


def test_a_module_that_exits_or_raises_as_it_is_read_is_refused_naming_its_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Before, SystemExit escaped the import's ``except Exception``: a hook module that runs
    its own CLI at import (``sys.exit(3)``) ended ``rho-agent`` with no message and exit code
    3, the code of a run that hit its limit; a module ``__getattr__`` raising anything but
    AttributeError left as a traceback."""
    folder = tmp_path / "userhooks"
    folder.mkdir()
    (folder / "exits_at_import.py").write_text("import sys\nsys.exit(3)\n")
    (folder / "lazy_attrs.py").write_text("def __getattr__(name):\n    raise SystemExit(4)\n")
    monkeypatch.syspath_prepend(str(folder))
    for name in ("exits_at_import", "lazy_attrs"):
        monkeypatch.delitem(sys.modules, name, raising=False)
    for ref, says in (
        ("exits_at_import:f", "does not import: SystemExit: 3"),
        ("lazy_attrs:f", "reading f raised SystemExit: 4"),
    ):
        config = AgentConfig(hooks=HookConfig(before_tool=(ref,)))
        with pytest.raises(ConfigError) as caught:
            Agent(config, environ={})
        assert str(caught.value).startswith(f"hooks.before_tool[0]: {ref!r}")
        assert says in str(caught.value)


def test_a_malformed_reference_in_yaml_names_the_file_and_key(tmp_path: Path) -> None:
    config_file = tmp_path / "agent.yaml"
    config_file.write_text("hooks:\n  before_tool: ['just_a_name']\n")
    with pytest.raises(ConfigError) as caught:
        AgentConfig.from_file(config_file)
    message = str(caught.value)
    assert str(config_file) in message
    assert "hooks.before_tool[0]" in message
    assert "module:function" in message


async def test_a_resume_never_imports_the_hooks_a_session_directory_names(
    workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store_root = tmp_path / "sessions"
    mark = _hook_module(tmp_path, monkeypatch, "planted")
    config = AgentConfig(profile="readonly", working_dir=str(workspace))
    async with Session(
        Agent(config, environ={}),
        model=ScriptedModel([text("hi")]),
        store=FileSessionStore(store_root),
    ) as session:
        await session.run("hello")
    # someone who can write the directory names a module to import on the next resume
    meta_config = store_root / session.id / "config.yaml"
    text_now = meta_config.read_text()
    meta_config.write_text(text_now + "hooks:\n  before_tool: ['planted:redact']\n")
    with pytest.raises(ConfigError) as caught:
        await Session.resume(
            session.id, store=FileSessionStore(store_root), model=ScriptedModel([])
        )
    assert "planted:redact" in str(caught.value)
    assert "does not choose code to run" in str(caught.value)
    assert not mark.exists()  # refused before anything was imported


async def test_a_resume_with_the_hooks_given_again_runs_under_them(
    workspace: Path, tmp_path: Path
) -> None:
    store_root = tmp_path / "sessions"
    agent = Agent(
        AgentConfig(profile="readonly", working_dir=str(workspace), hooks=HookConfig(timeout=3)),
        environ={},
        hooks=Hooks(after_tool=[redact]),
    )
    async with Session(
        agent, model=ScriptedModel([text("hi")]), store=FileSessionStore(store_root)
    ) as session:
        await session.run("hello")
    model = ScriptedModel([tools(call("read", {"path": "customers.csv"})), text("ok")])
    resumed = await Session.resume(
        session.id,
        store=FileSessionStore(store_root),
        model=model,
        hooks=Hooks(after_tool=[redact]),
        overrides={"working_dir": str(workspace)},
    )
    async with resumed:
        result = await resumed.run("now read it")
    assert result.status is RunStatus.COMPLETED, result.error
    assert SSN.encode() not in _trace(store_root, session.id)


async def test_a_replay_never_imports_the_hooks_a_recording_names(
    workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from rho_entry.replay import replay_async

    store_root = tmp_path / "sessions"
    mark = _hook_module(tmp_path, monkeypatch, "planted_in_replay")
    config = AgentConfig(profile="readonly", working_dir=str(workspace))
    async with Session(
        Agent(config, environ={}),
        model=ScriptedModel([tools(call("read", {"path": "customers.csv"})), text("ok")]),
        store=FileSessionStore(store_root),
    ) as session:
        await session.run("read")
    config_file = store_root / session.id / "config.yaml"
    config_file.write_text(
        config_file.read_text() + "hooks:\n  after_tool: ['planted_in_replay:redact']\n"
    )
    monkeypatch.chdir(workspace)  # live tools run in the caller's directory
    for tools_mode in ("recorded", "live"):
        report = await replay_async(store_root / session.id, tools=tools_mode)
        assert report.divergence is None, tools_mode
    assert not mark.exists()


async def test_a_runtime_resumes_a_session_under_its_own_hooks(
    workspace: Path, tmp_path: Path
) -> None:
    from rho_entry.runtime import close_runtime, create_runtime, run_prompt, start_runtime

    store = FileSessionStore(tmp_path / "sessions")
    agent = Agent(
        AgentConfig(profile="readonly", working_dir=str(workspace)),
        environ={},
        hooks=Hooks(after_tool=[redact]),
    )
    runtime = create_runtime(agent, store=store, model=ScriptedModel([text("hi")]))
    await start_runtime(runtime)
    try:
        first = await run_prompt(runtime, "hello")
    finally:
        await close_runtime(runtime)
    # another runtime (another process, say) continues the stored session
    model = ScriptedModel([tools(call("read", {"path": "customers.csv"})), text("ok")])
    runtime = create_runtime(agent, store=store, model=model)
    await start_runtime(runtime)
    try:
        second = await run_prompt(runtime, "read it", session_id=first.session_id)
    finally:
        await close_runtime(runtime)
    assert second.status is RunStatus.COMPLETED, second.error
    assert SSN.encode() not in _trace(tmp_path / "sessions", first.session_id)


def test_one_reference_may_be_written_without_its_list(tmp_path: Path) -> None:
    config_file = tmp_path / "agent.yaml"
    config_file.write_text("hooks:\n  after_run: json:dumps\n  timeout: 0.5\n")
    assert AgentConfig.from_file(config_file).hooks == HookConfig(
        after_run=("json:dumps",), timeout=0.5
    )
    config_file.write_text("hooks:\n  timeout: 0\n")
    with pytest.raises(ConfigError, match=r"hooks\.timeout must be a number of seconds"):
        AgentConfig.from_file(config_file)


def test_a_function_put_in_the_config_says_where_functions_go() -> None:
    with pytest.raises(ConfigError, match=r"pass the function itself as Agent\(config, hooks="):
        HookConfig(before_tool=(redact,))  # type: ignore[arg-type]
