"""What a one-shot run imports is pinned, not timed (bench/bench_oneshot.py measures).

The one-shot ``rho-agent -y "list the files"`` against the loopback server lists the real
workspace; the modules it has no use for stay unimported: httpx's command line (click,
pygments), the SQL checker and the database tools without databases, the shell planner and
the argv rules without a program started, the destructive-command rules without a bash call,
git's shadow directory and rules without a git command, httpx (the model client is
httpcore's pool; ``core_client``) with the cookie jar, urllib's opener, email and IDNA,
the Anthropic adapter for an OpenAI-compatible server, the workbook guard without a workbook,
the server and the drivers, cattrs (events and the config are written by the codec's plain
walk; cattrs reads them back), the database and durable ports and durable steps (the ports
package names its ports lazily), the design documents' tool API without a tool given, zipfile
(the shipped price table is read beside its module), the hooks' values without a hook,
difflib, csv and shlex (an edit's diff, a delimited file, the xargs guard, a config key's hint),
secrets and hmac (a temporary file's random name is os.urandom's), our OpenTelemetry module
without a tracing API set up, the output schema's validator, the context export, the writing
tools, delegate and the delegation's values in a read-only run, sniffio and anyio's runtime
(the model clients' sockets, locks and events are asyncio's own), the event kinds a plain
run never emits, the command launchers without a command started, and the library
Session's recorded runs, approval interrupt and run_sync, ``--json``'s renderer, the shell
package (the glob tool's expansion), a profile file's YAML reader, the compressed bodies'
decoders and the write rules, and the cut-arguments parser; nor does it compile the regular
expressions only other paths match (``FIRST_USE``) or a typing ``ForwardRef`` of ours, or
sort the patterns of a secrets glob set it never asks (``NOT_WORKED_OUT``).
``from rho_agent import Agent, AgentConfig, Session`` loads the config's values only: the
loop, the tools, the wiring and the secrets policy wait for the first Agent.
``--help`` stays on the parser: no attrs, no asyncio, no logging, no domain beyond its error
tree.
"""

from __future__ import annotations

import importlib
import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from rho_adapters.fakes.loopback import LoopbackServer
from rho_adapters.fakes.wire import call, text_reply, tool_reply
from rho_domain.first_use import FirstUse

NOT_IN_A_ONE_SHOT = (
    # the model client is httpcore's pool without httpx's client (core_client), and with
    # httpx go the modules only it wanted: cookies, urllib's opener, email, IDNA
    "httpx",
    "http.cookiejar",
    "http.client",
    "urllib.request",
    "email",
    "idna",
    "mimetypes",
    "cattrs",
    "click",
    "pygments",
    "rich",
    "openpyxl",
    "psycopg",
    "pymysql",
    "oracledb",
    "vertica_python",
    "starlette",
    "uvicorn",
    "opentelemetry",
    "rho_domain.sql",
    "rho_domain.tools.database",
    "rho_domain.shell.destructive",
    "rho_domain.shell.plan",
    "rho_domain.shell.parser",
    "rho_domain.shell.syntax_tree",
    "rho_domain.shell.programs",
    "rho_domain.shell.reads",
    "rho_domain.shell.git_objects",
    "rho_domain.shell.walk_exclusions",
    "rho_adapters.model.anthropic",
    "rho_adapters.local.xlsx_guard",
    "rho_adapters.local.git_shadow",
    "rho_domain.shell.git",
    "rho_domain.shell.git_repo",
    "rho_domain.shell.git_revs",
    "rho_adapters.db",
    "rho_entry.server",
    "rho_entry.runtime",
    "rho_entry.cli.repl",
    "rho_entry.cli.monitor",
    # the ports package names its ports lazily: no database port without databases
    "rho_domain.ports.database",
    # durable runs' steps and their port load with a durable run
    "rho_domain.ports.durable",
    "rho_domain.loop.durable_steps",
    # the design documents' tool API loads with the first tool given to an Agent
    "rho_entry.seed_api.tools",
    # the shipped price table is read beside its module, not through a zip-capable reader
    "zipfile",
    # what hooks are given and answer loads with the first hook (an Agent holds Hooks only)
    "rho_domain.hooks.values",
    # the standard library a tool or a check needs when it runs, not when it is built: an
    # edit's diff, a delimited file's reader, the xargs guard's quoting, a config key's hint
    "difflib",
    "csv",
    "shlex",
    # a temporary file's random name is os.urandom's, as secrets.token_hex reads it
    "secrets",
    "hmac",
    # OpenTelemetry of ours only when the process set its tracing API up
    "rho_entry.otel",
    # the operator's ports (catalog, control): a run never asks them
    "rho_domain.ports.session_control",
    # the output schema's validator loads with the first schema checked or answer judged
    "rho_domain.json_schema",
    # the context export with the first export asked for (rho-agent connect)
    "rho_domain.context_export",
    # the writing tools and delegate where a profile registers them (a read-only run does not)
    "rho_domain.tools.write",
    "rho_domain.tools.delegate",
    # what a parent and its children pass each other, with the first delegation
    "rho_domain.tools.children",
    # the model clients' sockets, locks and events are asyncio's own (network.py,
    # lean_connection.py, lean_pool.py): no sniffio, no anyio runtime (httpcore imports the
    # anyio package itself, whose lazy __init__ loads nothing more)
    "sniffio",
    "anyio._backends",
    "anyio._core",
    "anyio.abc",
    "anyio.lowlevel",
    "anyio.streams",
    # the event kinds a run that goes as planned never emits (approvals, blocks, compaction,
    # interruptions, directives, errors, retries, skipped stream pieces): rho_domain.events
    # names them lazily, and State, the renderer and the store's meta dispatch by kind first
    "rho_domain.approval_events",
    "rho_domain.control_events",
    # ... and the events of a listener that failed or a hook that acted
    "rho_domain.hook_events",
    # the process launcher, the rlimits launcher and the guard load with the first command
    "rho_adapters.local.process",
    "rho_adapters.local.rlimits",
    "rho_adapters.local.guard",
    # ... and the walk that finds what the sandbox hides (the sandbox's Masks are masks.py)
    "rho_adapters.local.secret_scan",
    # ... and a stage's argv preparation, the judge of its reads, the pipeline's wiring and the
    # commands' environments
    "rho_adapters.local.stage_argv",
    "rho_adapters.local.stage_reads",
    "rho_adapters.local.pipeline_spawn",
    "rho_adapters.local.command_env",
    # the cattrs converter's hooks with the first value read back (events and config are written
    # by the codec's plain walk)
    "rho_adapters.converter",
    # a command's values and an uploaded file (Stage, Command, CommandResult, FileUpload) are
    # built where a tool runs a program or --upload gives files: list reads in-process
    "rho_domain.ports.commands",
    # the files a flag names (--config, --prompt, --output, ...) are checked by launch_files,
    # the task on stdin read by stdin_task, a config file by config_files: none is named here
    # (the profile is resolved by profile_files itself)
    "rho_entry.cli.launch_files",
    "rho_entry.cli.stdin_task",
    "rho_entry.config.config_files",
    # the approver port's values and the terminal's approver: with the first approver asked
    # (the terminal's approver is built only when stdin is a terminal)
    "rho_domain.ports.approver",
    "rho_entry.cli.approval",
    # compaction's trigger, plan and result: with the first compaction
    "rho_domain.compaction_values",
    # the model clients' counters: when someone asks for them
    "rho_adapters.model.pool_stats",
    # the stream pieces beyond text and tool calls (reasoning, refusals, thinking blocks,
    # retry notices, warnings): with the first one a model streams
    "rho_domain.model_extras",
    # PyYAML: config.yaml is written by the store's own emitter, and the shipped price table
    # and prompt frontmatter are read from their parsed form; yaml parses what a user wrote
    "yaml",
    "_yaml",
    # a built-in profile as made is labelled by its name (permissions.builtin_as_made): the
    # grants' comparison loads with the first other profile labelled or checked
    "rho_domain.profile_grants",
    # a template's values with the first template of the user's (--prompt, --system FILE.md)
    "rho_entry.config.template_values",
    # the library Session's other run modes (recorded events, the approval interrupt,
    # run_sync) with the run that asks for one: the CLI reports awaiting_approval itself
    "rho_entry.run_modes",
    # a server's error body read into a typed error: with the first error a server sends
    "rho_adapters.model.error_bodies",
    # what a one-shot says when its run stopped short of an answer: with a run that did
    "rho_entry.cli.stopped",
    # the tables of names never written: with the first path judged for a write
    "rho_domain.never_written",
    # ... and the local workspace's judges of a write: with the first file written
    "rho_adapters.local.write_checks",
    "rho_domain.write_rules",  # ... and the profile's write mode checked (oneshot25)
    # --json's renderer with the first --json run (running.make_renderer)
    "rho_entry.cli.json_render",
    # grep's output with the first grep's lines, a compaction's summary request with the
    # first compaction, the store's dating of sessions with the first "latest" (oneshot24)
    "rho_domain.tools.grep_render",
    "rho_domain.loop.summary_request",
    "rho_adapters.store.meta_fields",
    # the shell package whole (oneshot25): its glob expansion with the executor's first glob
    # and the star-free name regex with the first pattern matched (tools/walk.py); a profile
    # file's YAML mapping reader with the first profile file (a built-in one needs none)
    "rho_domain.shell",
    "rho_entry.config.yaml_mappings",
    # a compressed body's decoders with the first one a server sends (model/bodies.py)
    "rho_adapters.model.encodings",
    # whether arguments that are not JSON were cut short, with the first such arguments
    # (oneshot26)
    "rho_adapters.model.json_prefix",
    # a session's and a run's id, and a nameless call's, are os.urandom's hex (oneshot28)
    "uuid",
)

# The regular expressions a one-shot has no use for: each compiled at its first use
# (``rho_domain.first_use.FirstUse``), not when its module is imported (oneshot26): an ssh
# wrapper script's assignments and variables, an ssh or git command's words, a Windows
# stream name, a config field's checks when the field is set, a cut JSON text's escape,
# a usage error's hint
FIRST_USE = (
    ("rho_domain.ssh_wrappers", "_CONTINUED"),
    ("rho_domain.ssh_wrappers", "_ASSIGNED"),
    ("rho_domain.ssh_wrappers", "_USED"),
    ("rho_domain.ssh_named_files", "_ESCAPE"),
    ("rho_domain.ssh_named_files", "_SSH_WORD"),
    ("rho_domain.git_named_files", "_BLANK"),
    ("rho_domain.git_named_files", "_OPTION_KEYWORD"),
    ("rho_domain.names", "_NTFS_STREAM_TYPE"),
    ("rho_domain.config_checks", "_VARIABLE"),
    ("rho_domain.model_choices", "_TIER"),
    ("rho_adapters.model.json_prefix", "_UNFINISHED_ESCAPE"),
    ("rho_entry.usage", "_INVALID_CHOICE"),
    ("rho_entry.usage", "_CHOICE"),
)

# What a command imported, and the attrs classes of ours it built (found by their
# ``__attrs_attrs__``: importing attrs here would hide whether the command did); the
# regular expressions it compiled, and the modules that made a typing.ForwardRef (a quoted
# type subscripted at run time: ``Forward["ChatModel"]`` compiled its text)
_RUN = """
import contextlib, io, json, sys, typing
from re import _compiler

expressions, type_refs = [], []
real_compile, real_ref = _compiler.compile, typing.ForwardRef.__init__

def compile_(pattern, flags=0):
    expressions.append(str(pattern))
    return real_compile(pattern, flags)

def ref(self, arg, *args, **kwargs):
    frame = sys._getframe(1)
    while frame.f_code.co_filename == typing.__file__:
        frame = frame.f_back
    type_refs.append(frame.f_globals.get("__name__", "?"))
    real_ref(self, arg, *args, **kwargs)

_compiler.compile, typing.ForwardRef.__init__ = compile_, ref
import signal
checks, real_valid = [], signal.valid_signals

def valid_signals():
    checks.append(1)
    return real_valid()

signal.valid_signals = valid_signals
swaps, real_signal = [], signal.signal

def signal_(signum, handler):  # a function put over a function: two enum conversions fail
    before = real_signal(signum, handler)
    if callable(before) and callable(handler):
        swaps.append(int(signum))
    return before

signal.signal = signal_
from rho_entry.cli import main
out, err = io.StringIO(), io.StringIO()
sys.argv = ["rho-agent", *sys.argv[1:]]  # the process's own command line, as the script runs
with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
    code = main()
built = {
    value
    for name, module in list(sys.modules.items())
    if name.split(".")[0] in ("rho_domain", "rho_adapters", "rho_entry")
    for value in list(vars(module).values())
    if isinstance(value, type) and "__attrs_attrs__" in vars(value) and value.__module__ == name
}
compiled = {  # the methods attrs compiled for them
    f"{value.__qualname__}.{method}"
    for value in built
    for method in ("__repr__", "__eq__", "__hash__")
    if getattr(vars(value).get(method), "__code__", None) is not None
    and vars(value)[method].__code__.co_filename.startswith("<attrs generated")
}
worked_out = sorted(  # the module-level glob sets whose patterns were sorted by shape
    f"{name}.{attribute}"
    for name, module in list(sys.modules.items())
    if name.split(".")[0] == "rho_domain"
    for attribute, value in list(vars(module).items())
    if type(value).__name__ == "GlobSet"
    and (getattr(value, "_groups", None), value._shapes) != (None, None)
)
print(json.dumps({"code": code, "out": out.getvalue(), "err": err.getvalue(),
                  "modules": sorted(sys.modules), "classes": sorted(c.__qualname__ for c in built),
                  "compiled": sorted(compiled), "expressions": expressions,
                  "type_refs": type_refs, "worked_out": worked_out,
                  "signal_checks": len(checks), "swaps": swaps}))
"""


def _run(args: list[str], cwd: Path, home: Path) -> dict[str, object]:
    env = {**os.environ, "HOME": str(home), "RHO_AGENT_HOME": str(home / "rho"), "NO_COLOR": "1"}
    env["OPENAI_API_KEY"] = "unused"
    done = subprocess.run(
        [sys.executable, "-c", _RUN, *args], cwd=cwd, env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    result: dict[str, object] = json.loads(done.stdout)
    return result


def _loaded(modules: object, names: tuple[str, ...]) -> list[str]:
    assert isinstance(modules, list)
    return sorted(m for m in modules for n in names if m == n or m.startswith(n + "."))


@pytest.fixture(scope="module")
def one_shot(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Any], list[Any]]:
    """One ``rho-agent -y "list the files"`` in its own process (the real ``list`` over a
    workspace): what ``_RUN`` reports of it, and the requests the model server got. The
    module and class pins below read the same run."""
    home = tmp_path_factory.mktemp("one_shot")
    work = home / "work"
    work.mkdir()
    (work / "notes.txt").write_text("hello\n")
    replies = [tool_reply(call("list", {"path": "."})), text_reply("Here: notes.txt.", deltas=4)]
    with LoopbackServer(replies) as server:
        args = ["--base-url", server.base_url, "-m", "m", "-y", "list the files"]
        run = _run(args, work, home)
    return run, list(server.requests)


def test_a_one_shot_lists_the_files_without_the_modules_it_does_not_use(
    one_shot: tuple[dict[str, Any], list[Any]],
) -> None:
    run, requests = one_shot
    assert run["code"] == 0, run["err"]
    assert run["out"] == "Here: notes.txt.\n"
    assert "notes.txt" in requests[1]["messages"][-1]["content"]  # the real listing
    modules = run["modules"]
    assert _loaded(modules, ("httpcore", "rho_domain.loop.session")), "the run was imported"
    assert _loaded(modules, NOT_IN_A_ONE_SHOT) == []


def test_a_one_shot_compiles_no_expression_it_does_not_use(
    one_shot: tuple[dict[str, Any], list[Any]],
) -> None:
    """Each ``FIRST_USE`` expression waits for its first use, and the one-shot has none."""
    run, _ = one_shot
    compiled = run["expressions"]
    assert isinstance(compiled, list)
    assert any("https?://" in text for text in compiled), "the run's own expressions were seen"
    for module, name in FIRST_USE:
        expression = getattr(importlib.import_module(module), name)
        assert isinstance(expression, FirstUse), f"{module}.{name} is compiled at import"
        assert expression.text not in compiled, f"{module}.{name} was compiled"


def test_a_one_shot_builds_no_forward_reference_of_ours(
    one_shot: tuple[dict[str, Any], list[Any]],
) -> None:
    """The library classes' ``Forward`` attributes take their types from annotations, never
    from a subscript (``Forward["ChatModel"](...)`` built an alias and compiled a
    ``ForwardRef`` for each quoted type at import)."""
    run, _ = one_shot
    refs = run["type_refs"]
    assert isinstance(refs, list)
    assert refs, "the libraries' own references were seen"
    assert [m for m in refs if m.split(".")[0] in ("rho_domain", "rho_adapters", "rho_entry")] == []


# The secrets policy's glob sets a one-shot never asks: each one's patterns are sorted by
# shape at its first question, not when its module builds it (oneshot27): the git paths'
# reads, the secret-named files without the key name, the git object stores
NOT_WORKED_OUT = (
    "rho_domain.secret_patterns._GIT_READS",
    "rho_domain.secret_shapes._NAMES",
    "rho_domain.secret_shapes._STORE",
    "rho_domain.secret_shapes._STORES",
)


def test_a_one_shot_sorts_only_the_glob_sets_it_asks(
    one_shot: tuple[dict[str, Any], list[Any]],
) -> None:
    run, _ = one_shot
    worked_out = run["worked_out"]
    assert isinstance(worked_out, list)
    assert "rho_domain.secrets._LOCATIONS" in worked_out, "the listing's paths were judged"
    assert sorted(set(worked_out) & set(NOT_WORKED_OUT)) == []


def test_a_one_shot_hands_only_ctrl_c_to_asyncio(
    one_shot: tuple[dict[str, Any], list[Any]],
) -> None:
    """asyncio's ``add_signal_handler`` and ``remove_signal_handler`` check each signal
    against ``signal.valid_signals()``, which builds every ``Signals`` member (~0.75 M
    instructions a call): only SIGINT is the loop's, once for the run and once for the close
    (oneshot27: SIGTERM and SIGHUP were too, 12 calls); the other ending signals get a plain
    handler (``tests/cli/test_cli_other_signals.py`` and ``test_cli_interrupts.py`` hold what
    each does)."""
    run, _ = one_shot
    assert run["code"] == 0, run["err"]
    assert run["signal_checks"] == 4


def test_a_one_shot_keeps_main_s_handler_for_the_ending_signals(
    one_shot: tuple[dict[str, Any], list[Any]],
) -> None:
    """``signal.signal`` putting a function handler over another converts both to
    ``Handlers`` members and fails twice (~20 K instructions a call). ``main`` gives the ~43
    ending signals ``interrupt_at_start`` once; the run and its close take them through it
    (``stop_signals.listen``) and the end of ``main`` too (``end_as_returned``), instead of
    swapping each handler in and out (oneshot28: 220 swaps). What is left is SIGINT's:
    asyncio's add and remove, twice, and the end's."""
    run, _ = one_shot
    assert run["code"] == 0, run["err"]
    assert run["swaps"] == [signal.SIGINT] * 5


def test_help_parses_without_the_run(tmp_path: Path) -> None:
    run = _run(["--help"], tmp_path, tmp_path)
    assert run["code"] == 0
    assert "usage: rho-agent" in str(run["out"])
    heavy = ("attrs", "attr", "asyncio", "httpx", "yaml", "cattrs", "rho_domain.config", "logging")
    assert _loaded(run["modules"], (*heavy, "rho_entry.cli.app", "rho_adapters")) == []


def test_httpx_cli_is_deferred_not_lost() -> None:
    """httpx's ``main`` is still there: it imports the CLI module when called. Nothing named
    httpx is in sys.modules before httpx itself is imported."""
    code = (
        "import sys, rho_adapters\n"
        "print([m for m in sys.modules if m.split('.')[0] == 'httpx'])\n"
        "import httpx\n"
        "print('click' in sys.modules, 'pygments' in sys.modules)\n"
        "try:\n"
        "    httpx.main(['--help'])\n"
        "except SystemExit as exc:\n"
        "    print('exit', exc.code)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    lines = done.stdout.splitlines()
    assert lines[0] == "[]", done.stderr
    assert lines[1] == "False False", done.stderr
    # With httpx's CLI extra installed: its help and exit 0; without: httpx's own message, 1.
    assert lines[-1] in ("exit 0", "exit 1"), done.stderr
    if lines[-1] == "exit 1":
        assert "could not run because the required dependencies" in done.stdout
    else:
        assert "Usage" in done.stdout


def test_only_the_process_own_command_line_freezes_the_heap() -> None:
    """``main()`` reading sys.argv ends the process: its heap is frozen for the teardown.
    ``main([...])`` in a process that goes on (tests, an embedding program) leaves it alone."""
    code = (
        "import contextlib, gc, io, sys\n"
        "from rho_entry.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    main(['--version'])\n"
        "    print(gc.get_freeze_count(), file=sys.stderr)\n"
        "    sys.argv = ['rho-agent', '--version']\n"
        "    main()\n"
        "    print(gc.get_freeze_count() > 0, file=sys.stderr)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stderr.split() == ["0", "True"]


def test_the_facade_import_leaves_the_loop_to_the_first_agent_and_session(tmp_path: Path) -> None:
    """``from rho_agent import Agent, AgentConfig, Session`` loads the config's values, not the
    loop, the tools, the events, the ports, the wiring or pathlib; building an Agent and a Session
    imports them, and the session runs."""
    code = (
        "import sys\n"
        "from rho_agent import Agent, AgentConfig, Session\n"
        "print(' '.join(sorted(sys.modules)))\n"
        "from rho_adapters.fakes.scripted_model import ScriptedModel\n"
        "session = Session(Agent(AgentConfig(working_dir='.')), model=ScriptedModel([]))\n"
        "print(type(session.domain).__module__, 'asyncio' in sys.modules)\n"
    )
    env = {**os.environ, "HOME": str(tmp_path), "RHO_AGENT_HOME": str(tmp_path / "rho")}
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    imported, built = done.stdout.splitlines()
    lazy: tuple[str, ...] = ("asyncio", "rho_domain.loop", "rho_domain.tools", "rho_domain.events")
    lazy += ("rho_domain.ports", "rho_domain.hooks", "rho_domain.agent", "rho_entry.wiring")
    lazy += ("rho_entry.resume_policy", "rho_entry.seed_api", "rho_adapters")
    lazy += ("rho_entry.resume_profile",)  # resume_policy's: with the first resume
    lazy += ("pathlib",)  # with a config file read or written (AgentConfig.from_file, to_file)
    lazy += ("rho_domain.json_schema",)  # a config's output schema is checked when given
    lazy += ("urllib.parse", "ipaddress")  # ... and its base URL (pathlib loads them too)
    lazy += ("rho_domain.secrets",)  # the secrets policy with the first path judged
    lazy += ("rho_entry.facade",)  # open_session's module: the names are agent's and session's
    assert _loaded(imported.split(), lazy) == []
    assert built == "rho_domain.loop.session True"


def test_a_library_session_on_a_file_store_writes_its_config_without_yaml(
    tmp_path: Path,
) -> None:
    """A Session of the library API run on a file store writes config.yaml (the text
    CSafeDumper wrote) without importing yaml; resuming it reads the file with yaml."""
    code = (
        "import asyncio, sys\n"
        "from rho_agent import Agent, AgentConfig, Session\n"
        "from rho_adapters.fakes.scripted_model import ScriptedModel, text\n"
        "async def main():\n"
        "    agent = Agent(AgentConfig(working_dir='.', vars={'on': 'yes'}))\n"
        "    async with Session(agent, store='sessions', model=ScriptedModel([text('hi')])) as s:\n"
        "        print((await s.run('hello')).text, s.id)\n"
        "    print('yaml' in sys.modules, '_yaml' in sys.modules)\n"
        "    again = await Session.resume('latest', store='sessions', model=ScriptedModel([]))\n"
        "    print(again.agent.config.vars, 'yaml' in sys.modules)\n"
        "    await again.close()\n"
        "asyncio.run(main())\n"
    )
    env = {**os.environ, "HOME": str(tmp_path), "RHO_AGENT_HOME": str(tmp_path / "rho")}
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    ran, written, resumed = done.stdout.splitlines()
    answer, session_id = ran.split()
    assert answer == "hi"
    assert written == "False False"
    assert resumed == "{'on': 'yes'} True"
    saved = (tmp_path / "sessions" / session_id / "config.yaml").read_text()
    assert "  'on': 'yes'\n" in saved  # YAML 1.1 reads on and yes as true


_COLLECTIONS = """
import contextlib, gc, io, json, sys
from rho_entry.cli import main
seen = []
gc.callbacks.append(
    lambda phase, info: phase == "start" and seen.append("rho_domain.loop.session" in sys.modules)
)
own = sys.argv[1] == "own"
sys.argv = ["rho-agent", *sys.argv[2:]]
with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
    code = main() if own else main(sys.argv[1:])
print(json.dumps({"code": code, "starting": seen.count(False), "running": seen.count(True),
                  "enabled": gc.isenabled()}))
"""


def test_the_process_own_run_is_not_collected_while_it_starts(tmp_path: Path) -> None:
    """``rho-agent``'s own process pauses the cyclic collector from parsing until its session
    is open (what start-up builds lives as long as the process), then collects the run's
    objects again; ``main([...])`` in a process that goes on is collected throughout."""
    work = tmp_path / "work"
    work.mkdir()
    env = {**os.environ, "HOME": str(tmp_path), "RHO_AGENT_HOME": str(tmp_path / "rho")}
    env["OPENAI_API_KEY"] = "unused"
    counts = {}
    for mode in ("own", "embedded"):
        replies = [tool_reply(call("list", {"path": "."})), text_reply("Done.", deltas=400)]
        with LoopbackServer(replies) as server:
            args = ["--base-url", server.base_url, "-m", "m", "-y", "list the files"]
            done = subprocess.run(
                [sys.executable, "-c", _COLLECTIONS, mode, *args],
                cwd=work,
                env=env,
                capture_output=True,
                text=True,
            )
        assert done.returncode == 0, done.stderr
        counts[mode] = json.loads(done.stdout)
        assert counts[mode]["code"] == 0
        assert counts[mode]["enabled"] is True
    assert counts["own"]["starting"] == 0, counts
    assert counts["own"]["running"] > 0, counts  # the run's own objects are collected
    assert counts["embedded"]["starting"] > 0, counts


# The twelfth round's cuts (imports10): attrs classes a plain one-shot built and never used
# (each ~1.5-4 M instructions: attrs compiles its methods), now built where they are used.
NOT_BUILT_BY_A_ONE_SHOT = (
    # a run opens its store alone (session_store): the store's faces with choose_store
    "StoreChoice",
    "Operator",
    # a config names no MCP server or database unless given one: their values with the first
    "McpServerConfig",
    "McpToolFilter",
    "DatabaseConfig",
    # --upload/--download/--dockerfile/--snapshot and --approve/--deny: with their flags
    "Transfers",
    "Answers",
    # bash's running state with the first bash call (tools/bash_run.py); read_excel's columns
    # are a range; a workbook's sheets with the first workbook read (ports/sheets.py)
    "_Run",
    "_Columns",
    "SheetInfo",
    # an operator's directive with the first one sent; a waiting call with the first run that
    # ends awaiting approval
    "Directive",
    "PendingApproval",
    # the approval policy's outcomes beside Allowed: with the first call denied or asking
    "Denied",
    "RequiresApproval",
    # a hook's failure with the first hook (hooks/values.py). (The hard-link scan's result,
    # ``Aliases``, is built by a one-shot's first ``list`` since the file tools judge a
    # secret-named directory link's target as commands do: ``.ssh -> keys`` hides ``keys``)
    "_Failure",
    "HookFailure",
    # a reasoning fragment's event with the first one a model streams (model_extras.py)
    "ReasoningDelta",
    # parallel reads with the first batch of more than one call; a budget's watch with the
    # first run whose budget limits something
    "_Done",
    "BudgetWatch",
    # the second wave (imports11): a listing's line with the first listing
    # (rho_domain/ports/session_info.py; the store's port names it lazily)
    "SessionInfo",
    # what a profile grants is compared only for a profile that is not a built-in as made
    # (permissions.builtin_as_made): the one-shot's readonly header names it
    "_Asked",
    # the default system prompt is filled from its template's parts: a template's values
    # (rho_entry/config/template_values.py) with the first template of the user's
    "TemplateVar",
    "PromptTemplate",
    "RenderedPrompt",
    # the twentieth round (oneshot20): an SSE event's value with the first event that takes
    # the decoder's general path (rho_adapters/model/sse_event.py); the OpenAI client reads
    # whole data: events as strings
    "SSEEvent",
)


def test_a_one_shot_builds_no_class_it_does_not_use(
    one_shot: tuple[dict[str, Any], list[Any]],
) -> None:
    run, requests = one_shot
    assert run["code"] == 0, run["err"]
    assert run["out"] == "Here: notes.txt.\n"
    assert "notes.txt" in requests[1]["messages"][-1]["content"]  # the real listing
    assert {"AgentConfig", "ToolCall", "RunResult"} <= set(run["classes"]), "the run was built"
    assert sorted(set(run["classes"]) & set(NOT_BUILT_BY_A_ONE_SHOT)) == []


def test_a_one_shot_compiles_only_the_init_of_our_classes(
    one_shot: tuple[dict[str, Any], list[Any]],
) -> None:
    """The ~75 classes a one-shot builds share ``value_repr``, ``value_eq`` and
    ``value_hash`` (rho_domain/value_methods.py): attrs compiles each one's ``__init__``, not
    its ``__repr__``, ``__eq__`` and ``__hash__``, two thirds of the code it compiled for them
    (the eighteenth round, oneshot18)."""
    run, _ = one_shot
    assert run["code"] == 0, run["err"]
    assert len(run["classes"]) > 60, "the run's classes were found"
    assert run["compiled"] == []


def test_the_httpx_cli_finder_leaves_once_httpx_is_imported() -> None:
    """The finder that defers httpx's CLI is asked by every import while it is on
    ``sys.meta_path``; once httpx has imported the stand-in it leaves, and ``httpx.main`` is
    still the deferred one."""
    code = (
        "import sys, rho_adapters\n"
        "ours = lambda: any(\n"
        "    type(f).__module__ == 'rho_adapters.httpx_cli' for f in sys.meta_path\n"
        ")\n"
        "print(ours())\n"
        "import httpx\n"
        "print(ours())\n"
        "print(httpx.main.__name__ == '_real_main')  # the stand-in's, httpx renames its module\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["True", "False", "True"]
