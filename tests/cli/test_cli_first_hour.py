"""Issue 30, "the first hour": what a new user's first mistakes print, and their exit codes.

Each test makes the mistake for real (a bad URL, an unusable config directory, a closed
progress pipe...) and asserts the one message that says what to fix, and that nothing
misleading follows it (no retries, no "the session is saved", no traceback).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_support import rho

from rho_domain.config import AgentConfig
from rho_domain.errors import ConfigError


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    work = tmp_path / "work"
    work.mkdir()
    (work / "README.md").write_text("# Sample\n")
    return work


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "home"


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("http://127.0.0.1:99999/v1", "the port must be a number from 1 to 65535"),
        ("http://127.0.0.1:0/v1", "the port must be a number from 1 to 65535"),
        ("http://localhost:80x/v1", "the port must be a number from 1 to 65535"),
        ("localhost:8080", "not an http:// or https:// URL (did you mean http://localhost:8080?)"),
        ("localhost:8080/v1", "did you mean http://localhost:8080/v1?"),
        ("ftp://example.com/v1", "not an http:// or https:// URL"),
        ("http:///v1", "not an http:// or https:// URL"),
        ("http://:8080/v1", "names no host"),
    ],
)
def test_a_bad_base_url_is_refused_before_anything_runs(
    workspace: Path, home: Path, url: str, message: str
) -> None:
    result = rho("--base-url", url, "x", cwd=workspace, home=home)
    assert result.returncode == 1, result.stderr
    assert f"rho-agent: --base-url: base_url {url!r}" in result.stderr
    assert message in result.stderr
    assert "retrying" not in result.stderr
    assert "session" not in result.stderr
    assert not (home / "rho" / "sessions").exists()


def test_a_bad_base_url_from_the_environment_names_the_variable(
    workspace: Path, home: Path
) -> None:
    result = rho("x", cwd=workspace, home=home, OPENAI_BASE_URL="localhost:1234")
    assert result.returncode == 1
    assert "rho-agent: OPENAI_BASE_URL: base_url 'localhost:1234'" in result.stderr


def test_the_library_refuses_a_bad_base_url_when_the_config_is_built() -> None:
    with pytest.raises(ConfigError, match="port must be a number from 1 to 65535"):
        AgentConfig(base_url="http://127.0.0.1:99999/v1")
    for good in ("http://localhost:8080/v1", "https://api.openai.com/v1", "http://[::1]:1/v1"):
        assert AgentConfig(base_url=good).base_url == good
    assert AgentConfig(base_url="").base_url == ""  # "" is "not given"
    for mangled in ("http//localhost:8080", "http:/localhost", "/v1"):  # no guess at these
        with pytest.raises(ConfigError, match="is not an http:// or https:// URL") as info:
            AgentConfig(base_url=mangled)
        assert "did you mean" not in str(info.value)


def test_an_unusable_config_directory_stops_before_the_run(
    workspace: Path, home: Path, tmp_path: Path
) -> None:
    a_file = tmp_path / "a-file"
    a_file.write_text("not a directory\n")
    for where, why in ((a_file, "Not a directory"), (Path("/proc/rho-home"), "")):
        result = rho("-m", "demo", "x", cwd=workspace, home=home, RHO_AGENT_HOME=str(where))
        assert result.returncode == 1, result.stderr
        assert f"cannot keep sessions in {where / 'sessions'}: {why}" in result.stderr
        assert "set RHO_AGENT_HOME to a writable directory" in result.stderr
        # no header, no run, no false promise of a saved session
        assert "session" not in result.stderr.replace("sessions", "")
        assert "--resume" not in result.stderr
        assert result.stdout == ""


def test_an_unknown_session_is_named_the_same_way_everywhere(workspace: Path, home: Path) -> None:
    rho("-m", "demo", "hi", cwd=workspace, home=home)  # one session exists: 3f2a is not it
    sessions = home / "rho" / "sessions"
    expected = f"no session matches '3f2a' in {sessions}"
    for args, prefix in (
        (("--resume", "3f2a", "go on"), "rho-agent"),
        (("monitor", "watch", "3f2a"), "rho-agent monitor"),
        (("export", "3f2a"), "rho-agent export"),
    ):
        result = rho(*args, cwd=workspace, home=home)
        assert result.returncode == 1, args
        assert result.stderr.startswith(f"{prefix}: {expected}"), result.stderr
        assert "SessionNotFound" not in result.stderr


def test_an_endpoint_error_is_not_followed_by_an_empty_usage_line(
    workspace: Path, home: Path
) -> None:
    from rho_adapters.fakes.loopback import LoopbackServer
    from rho_adapters.fakes.wire import http_error

    with LoopbackServer([http_error(400, "bad request: no")]) as server:
        result = rho(
            "--base-url", server.base_url, "-m", "x", "--retries", "0", "hi",
            cwd=workspace, home=home,
        )  # fmt: skip
    assert result.returncode == 2, result.stderr
    assert "HTTP 400: bad request: no" in result.stderr
    assert "in 0 / out 0" not in result.stderr
    assert "the session is saved" in result.stderr  # it was stored: --resume works


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("export",), "the following arguments are required: id"),
        (("stats", "--bogus"), "unrecognized arguments: --bogus"),
        (("monitor", "bogus"), "argument COMMAND: invalid choice: 'bogus'"),
        (("monitor",), "COMMAND: ps, watch, cancel, pause, resume, directive, connect\n"),
        (("monitor", "ps", "--limit", "many"), "argument --limit: invalid int value"),
        (("fork",), "the following arguments are required: id"),
        (("serve", "--port", "x"), "argument --port: expected a port from 0 to 65535"),
        (("ps", "--bogus"), "unrecognized arguments: --bogus"),
        (("kill",), "one of the arguments id --all is required"),
        (("eval",), "the following arguments are required"),
        (("--preview-lines", "-3", "-m", "demo", "x"), "--preview-lines -3: expected 0 or more"),
        (("--force", "-m", "demo", "x"), "--force goes with --output FILE"),
        (("--bogus",), "unrecognized arguments: --bogus"),
        (("worker",), "the following arguments are required: --durable-db"),
        (("worker", "--durable-db", "q.sqlite", "--bogus"), "unrecognized arguments: --bogus"),
        (
            ("worker", "--durable-db", "q.sqlite", "--poll", "0"),
            "argument --poll: expected a positive number of seconds, got '0'",
        ),
        (
            ("worker", "--durable-db", "q.sqlite", "--dead-after", "nan"),
            "argument --dead-after: expected a positive number of seconds, got 'nan'",
        ),
        (
            ("worker", "--durable-db", "q.sqlite", "--heartbeat", "-1"),
            "argument --heartbeat: expected a positive number of seconds, got '-1'",
        ),
        (
            ("worker", "--durable-db", "q.sqlite", "--heartbeat", "12"),
            "--heartbeat 12 is not shorter than --dead-after 10: the other workers would take",
        ),
        (("queue", "--durable-db", "q.sqlite"), "the following arguments are required: command"),
        (("queue", "--bogus"), "the following arguments are required: --durable-db"),
        (
            ("serve", "--durable", "--poll", "0"),
            "argument --poll: expected a positive number of seconds, got '0'",
        ),
        (
            ("serve", "--durable", "--dead-after", "inf"),
            "argument --dead-after: expected a positive number of seconds, got 'inf'",
        ),
    ],
)
def test_every_usage_error_exits_1_and_says_what_is_wrong(
    workspace: Path, home: Path, args: tuple[str, ...], message: str
) -> None:
    result = rho(*args, cwd=workspace, home=home)
    assert result.returncode == 1, (args, result.stderr)
    assert message in result.stderr
    assert not (home / "rho" / "sessions").exists()  # nothing ran


def test_preview_lines_from_the_environment_is_checked_too(workspace: Path, home: Path) -> None:
    result = rho("-m", "demo", "x", cwd=workspace, home=home, RHO_AGENT_PREVIEW_LINES="-1")
    assert result.returncode == 1
    assert "RHO_AGENT_PREVIEW_LINES='-1': expected 0 or more lines" in result.stderr
    zero = rho("-m", "demo", "--preview-lines", "0", "x", cwd=workspace, home=home)
    assert zero.returncode == 0, zero.stderr
    assert "⎿" not in zero.stderr  # no output lines, only the count


def test_force_with_output_still_overwrites(workspace: Path, home: Path) -> None:
    answer = workspace / "answer.md"
    answer.write_text("old\n")
    result = rho("-m", "demo", "-o", str(answer), "--force", "x", cwd=workspace, home=home)
    assert result.returncode == 0, result.stderr
    assert "demo model" in answer.read_text()


def test_monitor_takes_a_home_directory_before_the_command(workspace: Path, home: Path) -> None:
    rho("-m", "demo", "hi", cwd=workspace, home=home)
    for where in (str(home / "rho"), "rho"):
        result = rho("monitor", where, "ps", cwd=home, home=home)
        assert result.returncode == 0, result.stderr
        assert "completed" in result.stdout


def test_list_json_prints_the_objects_monitor_ps_prints(workspace: Path, home: Path) -> None:
    import json

    rho("-m", "demo", "hi", cwd=workspace, home=home)
    listed = rho("--list", "--json", cwd=workspace, home=home)
    assert listed.returncode == 0, listed.stderr
    rows = json.loads(listed.stdout)
    ps = json.loads(rho("monitor", "ps", "--json", cwd=workspace, home=home).stdout)
    assert [r["id"] for r in rows] == [r["id"] for r in ps]
    assert rows[0]["status"] == "completed"
    assert rows[0]["first_prompt"] == "hi"
    assert set(rows[0]) == set(ps[0])
    empty = rho("--list", "--json", cwd=workspace, home=home / "nobody")
    assert json.loads(empty.stdout) == []


def test_help_of_the_short_forms_is_theirs(workspace: Path, home: Path) -> None:
    """Also: ``--store URL``, which ps, kill and every monitor command take (README), was in
    none of their -h (it is taken out of the words before they are parsed)."""
    store = "--store URL  the session store (as rho-agent --store)"
    kill = rho("kill", "-h", cwd=workspace, home=home)
    assert kill.returncode == 0
    assert kill.stdout.startswith("usage: rho-agent kill [-h] [--store URL] [-d DIR] [--all] [id]")
    assert " id                 session id or unique prefix" in kill.stdout
    assert "--store URL        the session store (as rho-agent --store)" in kill.stdout
    assert "-d DIR, --dir DIR  rho-agent home or sessions directory" in kill.stdout
    ps = rho("monitor", "ps", "-h", cwd=workspace, home=home)
    assert "--limit N    at most N sessions, newest first (50)" in ps.stdout
    assert store in ps.stdout
    short = rho("ps", "-h", cwd=workspace, home=home).stdout
    assert short.startswith("usage: rho-agent ps [-h] [--store URL]"), short
    monitor = rho("monitor", "-h", cwd=workspace, home=home)
    assert monitor.stdout.startswith("usage: rho-agent monitor [-h] [DIR] COMMAND ...")


def test_the_library_refuses_a_hosted_model_without_key_or_url(tmp_path: Path) -> None:
    from rho_adapters.fakes import FakeClock
    from rho_entry.wiring import build_model

    with pytest.raises(ConfigError, match="OPENAI_API_KEY is not set and no base URL is given"):
        build_model(AgentConfig(model="gpt-5-mini"), {}, FakeClock())
    with pytest.raises(ConfigError, match="ANTHROPIC_API_KEY is not set"):
        build_model(AgentConfig(model="claude-sonnet-4"), {}, FakeClock())
    # what can work is built: a key, a base URL (config or environment), a local provider
    for config, env in (
        (AgentConfig(model="gpt-5-mini"), {"OPENAI_API_KEY": "k"}),
        (AgentConfig(model="m", base_url="http://127.0.0.1:8080/v1"), {}),
        (AgentConfig(model="m"), {"OPENAI_BASE_URL": "http://127.0.0.1:8080/v1"}),
        (AgentConfig(model="m", provider="ollama"), {}),
        (AgentConfig(model="demo"), {}),
    ):
        assert build_model(config, env, FakeClock()) is not None


def test_a_hosted_apis_own_url_without_its_key_is_refused_before_the_run(
    workspace: Path, home: Path
) -> None:
    """``--base-url https://api.openai.com/v1`` with ``ANTHROPIC_API_KEY`` set and no
    ``OPENAI_API_KEY``. Before: the run started, a session was made and the call went out
    without a key (the header named the URL; OpenAI's 401 came after the retries)."""
    cases = [
        (("--base-url", "https://api.openai.com/v1"), {"ANTHROPIC_API_KEY": "sk-ant-api03-x"}),
        ((), {"OPENAI_BASE_URL": "https://api.openai.com/v1/"}),
        (("--base-url", "https://api.anthropic.com", "-m", "claude-sonnet-4"), {}),
    ]
    for flags, env in cases:
        result = rho(*flags, "x", cwd=workspace, home=home, **env)
        assert result.returncode == 1, result.stderr
        assert "rho-agent: no API key for https://api." in result.stderr
        assert "is not set" in result.stderr
        assert "session" not in result.stderr
    assert (
        "ANTHROPIC_API_KEY is set, but it is not read for this URL"
        in rho(*cases[0][0], "x", cwd=workspace, home=home, **cases[0][1]).stderr
    )
    assert not (home / "rho" / "sessions").exists()

    from rho_adapters.fakes import FakeClock
    from rho_entry.wiring import build_model

    hosted = AgentConfig(model="gpt-5-mini", base_url="https://api.openai.com/v1")
    with pytest.raises(ConfigError) as caught:
        build_model(hosted, {}, FakeClock())
    assert "no API key for https://api.openai.com/v1, the openai API" in str(caught.value)
    # a key, or a server that is no provider's own API (a gateway, a local one), is built
    for config, env in (
        (hosted, {"OPENAI_API_KEY": "k"}),
        (AgentConfig(model="m", base_url="https://gateway.example/v1"), {}),
    ):
        assert build_model(config, env, FakeClock()) is not None


def test_config_mistakes_say_what_would_be_right(workspace: Path, home: Path) -> None:
    (workspace / "agent.yaml").write_text("modle: x\nbudget: {max_cost: 2}\n")
    typo = rho("-m", "demo", "-c", "agent.yaml", "x", cwd=workspace, home=home)
    assert typo.returncode == 1
    assert "unknown key 'modle' (did you mean 'model'?) @ config" in typo.stderr
    assert "unknown key 'max_cost' (did you mean 'max_cost_usd'?) @ config.budget" in typo.stderr
    # Before: a config file's bad profile or working_dir named neither the file nor the key,
    # and a file named by RHO_AGENT_CONFIG that could not be read did not name the variable.
    for text, said in (
        ("profile: readonyl\n", "profile: unknown profile 'readonyl' (did you mean 'readonly'?)"),
        ("working_dir: gone\n", "working_dir: working directory 'gone' does not exist"),
    ):
        (workspace / "own.yaml").write_text(text)
        named = rho("-m", "demo", "-c", "own.yaml", "x", cwd=workspace, home=home)
        assert named.returncode == 1
        assert named.stderr.startswith(f"rho-agent: own.yaml: {said}"), named.stderr
    hidden = rho("-m", "demo", "x", cwd=workspace, home=home, RHO_AGENT_CONFIG="gone.yaml")
    assert hidden.stderr.startswith("rho-agent: RHO_AGENT_CONFIG: gone.yaml: cannot read"), hidden
    (workspace / "ops.yaml").write_text("shell: sometimes\nfile_write: always\n")
    choice = rho("-m", "demo", "--profile", "./ops.yaml", "x", cwd=workspace, home=home)
    assert choice.returncode == 1
    assert "expected one of restricted, unrestricted (got 'sometimes')" in choice.stderr
    assert "expected one of off, create-only, full (got 'always')" in choice.stderr


def test_monitor_lines_never_show_pythons_none() -> None:
    import json

    from rho_entry.cli.monitor_format import _FORMATS, format_event

    seen = format_event(
        json.dumps({
            "kind": "llm_end", "at": 0, "duration": 3.06, "finish_reason": None,
            "usage": {"input_tokens": 518, "output_tokens": 0, "cost_usd": 0.0001},
        }).encode()
    )  # fmt: skip
    assert seen.endswith("model answered in 3.06s (in 518 out 0 $0.0001)")
    fields = [
        "status",
        "usage",
        "error",
        "prompt",
        "model",
        "call_index",
        "context_tokens",
        "duration",
        "finish_reason",
        "tool_name",
        "is_error",
        "by",
        "call",
        "reason",
        "approved",
        "trigger",
        "tokens_before",
        "tokens_after",
        "detail",
        "offset",
        "text",
        "error_type",
        "message",
        "listener",
        "event_kind",
        "hook",
        "point",
        "outcome",
    ]
    for kind in _FORMATS:  # every field null, as an older or torn writer may leave it
        line = format_event(json.dumps({"kind": kind, "at": 0, **dict.fromkeys(fields)}).encode())
        assert "None" not in line, (kind, line)
    for role in (None, "assistant", "tool"):
        message = {"role": role, "tool_name": None, "tool_calls": [{"name": None}]}
        line = format_event(json.dumps({"kind": "message", "at": 0, "message": message}).encode())
        assert "None" not in line, (role, line)


def test_a_run_stopped_by_a_rejection_is_not_an_empty_answer(workspace: Path, home: Path) -> None:
    import json

    dev = ("--profile", "developer")
    waiting = rho("-m", "demo", *dev, "run `date`", cwd=workspace, home=home)
    assert waiting.returncode == 4, waiting.stderr
    denied = rho("--resume", "latest", *dev, "--deny", "demo_1", "--json", cwd=workspace, home=home)
    assert denied.returncode == 5, denied.stderr
    result = json.loads(denied.stdout.splitlines()[-1])
    assert (result["status"], result["exit_code"], result["text"]) == ("completed", 5, "")
    # the next instruction is answered: exit 0 with the model's text
    after = rho("--resume", "latest", *dev, "-m", "demo", "list", cwd=workspace, home=home)
    assert after.returncode == 0, after.stderr
    assert after.stdout.strip()


def test_a_session_the_store_could_not_create_is_not_offered_for_resume(tmp_path: Path) -> None:
    """The directory passes the up-front check, then writing the session fails (no file may
    grow past 0 bytes): the run ends in error and nothing claims the session is saved."""
    import resource
    import subprocess
    import sys

    from cli_support import clean_env

    def no_file_growth() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (0, 0))  # Python ignores SIGXFSZ: EFBIG

    done = subprocess.run(
        [sys.executable, "-m", "rho_entry", "-m", "demo", "hi"],
        cwd=tmp_path, env=clean_env(tmp_path), capture_output=True, text=True,
        timeout=60, check=False, preexec_fn=no_file_growth,
    )  # fmt: skip
    assert done.returncode == 1, done.stderr
    assert "cannot create session" in done.stderr
    assert "File too large" in done.stderr
    assert "nothing was saved: the session could not be stored." in done.stderr
    assert "--resume" not in done.stderr


def test_a_misspelt_profile_name_says_the_name_meant(home: Path) -> None:
    """Before: ``--profile readonyl`` and ``--profile Ops`` (saved as ``profiles/ops.yaml``)
    listed the built-in names only, with no word on the one meant, and never the saved ones."""
    from rho_entry.config.config_files import resolve_profile

    (home / "profiles").mkdir(parents=True)
    (home / "profiles" / "ops.yaml").write_text("base: readonly\n")
    for typed, meant in (("readonyl", "readonly"), ("Ops", "ops"), ("Developer", "developer")):
        with pytest.raises(ConfigError) as refused:
            resolve_profile(typed, config_dir=home)
        message = str(refused.value)
        assert message.startswith(f"unknown profile {typed!r} (did you mean {meant!r}?): "), message
        assert "use one of developer, eval, readonly, unrestricted, ops, " in message
    with pytest.raises(ConfigError, match=r"^unknown profile 'zzz': use one of"):
        resolve_profile("zzz", config_dir=home)


def test_the_durable_commands_help_says_what_each_option_takes(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Before: ``queue -h`` listed ``status`` as "status of a run" and ``wait`` as "wait of a
    run", and ``queue wait -h`` showed ``--timeout TIMEOUT`` and ``run`` with no word on
    either; ``worker -h`` showed ``--poll POLL``, ``--heartbeat HEARTBEAT``, ``--dead-after
    DEAD_AFTER`` and ``--queue QUEUE`` without their units or defaults."""
    from rho_entry.cli import queue, worker

    queue_parser = queue.build_parser()
    shown = queue_parser.format_help()
    assert "wait                wait for a run to settle, print its status" in shown
    assert "status              print a run's status" in shown
    with pytest.raises(SystemExit):
        queue_parser.parse_args(["--durable-db", "x", "wait", "-h"])
    wait_help = capsys.readouterr().out
    assert "--timeout S  longest wait (600 s)" in wait_help
    assert "run          the run's id (the first word enqueue printed)" in wait_help
    worker_help = " ".join(worker.build_parser().format_help().split())
    for said in (
        "--queue NAME the queue to consume (rho-runs)",
        "--poll S seconds between looks at the queue (1)",
        "--heartbeat S seconds between this worker's heartbeats (2)",
        "--dead-after S a worker silent this many seconds is dead and its runs recovered (10)",
    ):
        assert said in worker_help
