"""How each language of a docs block is run. ``RUNNERS`` is the dispatch: add a language
(or replace one, e.g. SQL executed on real servers) by adding an entry.

A runner raises AssertionError when the block is wrong.
"""

from __future__ import annotations

import importlib.metadata as metadata
import json
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tomllib
from collections.abc import Callable
from pathlib import Path

import attrs
import yaml
from docs_blocks import ROOT, Block, blocks, command_lines
from docs_env import DocsEnv, LiveSession
from docs_imports import check_imports

from rho_adapters.store import request_cancel, resolve
from rho_domain.config import AgentConfig as DomainAgentConfig
from rho_domain.errors import RhoError
from rho_domain.permissions import PermissionProfile
from rho_domain.run import RunStatus
from rho_domain.sql import classify, dialect, tokenize
from rho_entry import AgentConfig
from rho_entry.config.config_files import load_profile_file
from rho_entry.config.databases_config import load_databases_file
from rho_entry.config.mcp_servers import load_mcp_servers
from rho_entry.config.prices import read_prices
from rho_entry.config.templates import parse_template, render_template

Runner = Callable[[Block, DocsEnv], None]

# What a reader types at a prompt that reads stdin (`rho-agent` alone, not on a terminal).
STDIN_TASK = "What is in this directory?\n"

# Commands of bash blocks (without their comment) that cannot run here, each with its reason.
# Keep it short.
NOT_RUN: dict[str, str] = {
    'rho-agent --json --output-schema order.schema.json "the last order in orders.csv" '
    "| tail -n 1": (
        "needs the reader's schema file and a model that answers in JSON; "
        "tests/cli/test_cli_output_schema.py runs --output-schema against the loopback server"
    ),
    'rho-agent --base-url http://127.0.0.1:8080/v1 --model local "what is in this directory?"': (
        "needs a model server on port 8080; tests/cli/test_cli_real_servers.py runs such a "
        "command against the llama-cpp-python fake on loopback"
    ),
    ".venv/bin/python scripts/real_server_check.py": (
        "builds llama-cpp-python from source (about 12 minutes) and downloads a model; it is "
        "the manual real-server check, not part of the test command"
    ),
    "rho-agent eval bird --data dev_20240627 --workers 4 --model gpt-5-mini --out bird-dev.jsonl": (
        "needs BIRD's dev set (1.4 GB, not downloadable here) and a hosted model; "
        "tests/evals/test_eval_cli.py runs the command on the shipped sample"
    ),
    "harbor run -d terminal-bench@2.0 --agent-import-path rho_entry.evals.harbor:RhoAgent "
    "--model openai/gpt-5-mini "
    "--agent-kwarg install_spec=git+https://git.example.org/you/rho-agent.git": (
        "Harbor needs Python >= 3.12 and Docker; tests/evals/test_harbor*.py test the adapter "
        "without it"
    ),
}

# Output a Python block must print (its document, its heading) -> expected text.
EXPECTED_OUTPUT: dict[tuple[str, str], str] = {
    ("README.md", "Use it as a library"): "completed",
    ("architecture.md", "The runtime: many sessions in one process"): (
        "202 event: run_start event: run_end"
    ),
    ("README.md", "Fork a session from a point in the past"): "Marseille is.",
    ("stuck-loops.md", "From Python"): "stuck | stuck: the tool list was called 4 times",
    ("structured-output.md", "From Python"): "completed 1 ['a.txt']",
    ("mcp.md", "From the library"): "completed",
}

# Commands that exit with something other than 0 when they do what the docs say.
EXPECTED_EXIT: dict[str, int] = {
    "rho-agent -m demo --profile developer 'run `date`'": 4,  # waits for approval, no terminal
    # the turn stops on the rejection: no answer yet
    "rho-agent --resume latest --profile developer --deny demo_1 "
    '--reason "not on the build host"': 5,
    # the demo model never says PROJECT COMPLETE: each run pauses at its session limit
    "rho-agent continuum prd.txt -d shop -m demo -y --max-sessions 1": 3,
    "rho-agent continuum prd.txt -d shop -m demo -y --max-sessions 2 --resume": 3,
}

# What the last line a command prints must contain, where its comment promises it.
EXPECTED_LAST_LINE: dict[str, str] = {
    'rho-agent --json "count TODOs" | jq -c .': '"kind":"result"',
    "rho-agent mcp list --mcp-config mcp.yaml --profile ops.yaml": (
        "mcp__tickets__close_ticket  dangerous"
    ),
    'curl -sN --fail-with-body localhost:8765/api/sessions -H "Authorization: Bearer $(cat '
    '"${RHO_AGENT_HOME:-$HOME/.config/rho-agent}/server/127.0.0.1-8765.token")" '
    "-H 'Content-Type: application/json' -H 'Accept: text/event-stream' "
    """-d '{"prompt": "What is in this directory?"}'""": '"kind":"run_end"',
}


# -- python ------------------------------------------------------------------------------------


def run_python(block: Block, env: DocsEnv) -> None:
    """Run the block in a process of its own in the workspace (forked from one that has
    imported the library: ``docs_zygote``); a block defining ``test_*`` functions is a test
    file and runs under pytest, as a reader would run it."""
    name = f"{block.doc.stem}_{block.line}".replace("-", "_").lower()
    _write_titled_files(block, env)  # a program the block starts (docs/mcp.md's server)
    is_test = re.search(r"^(async )?def test_", block.text, re.MULTILINE) is not None
    script = env.scratch / (f"test_{name}.py" if is_test else f"{name}.py")
    script.write_text(block.text, encoding="utf-8")
    check_imports(block, is_test=is_test)  # what the reader installed, not this dev venv
    argv = [sys.executable, str(script)]
    if is_test:
        argv = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(script)]
    # a server written with the MCP SDK (docs/mcp.md's) forks from the Python that imported it
    sdk = re.search(r"^(from|import) mcp\b", block.text, re.MULTILINE) is not None
    done = env.run_python(argv, sdk=sdk)
    assert done.returncode == 0, f"{block.where}: exit {done.returncode}\n{_output(done)}"
    expected = EXPECTED_OUTPUT.get((block.doc.name, block.heading))
    if expected is not None:
        assert expected in done.stdout, f"{block.where}: no {expected!r} in\n{_output(done)}"


# -- bash --------------------------------------------------------------------------------------

# Steps of a command line that are checked, not run (a line `a && b && c` runs the rest).
NOT_RUN_STEPS: dict[str, str] = {
    "python3 -m venv": "creates the venv this suite already runs in",
    ".venv/bin/pip install": "installs into that venv; checked: the project and extras exist",
    "pip install": "likewise: checked that the project and the extras it names exist",
    "bash scripts/": "runs the whole suite (CI runs it); checked: the script exists and parses",
}
_SESSION_REF = re.compile(r"(?:monitor \w+|--resume|export)\s+([0-9a-f]{4,12})\b")


def run_bash(block: Block, env: DocsEnv) -> None:
    """Run every command line of the block in the workspace, in order: install steps are
    checked (what they name exists), not run; session ids the block uses exist and are being
    driven; ``monitor watch`` follows in the background until its session ends."""
    _write_titled_files(block, env)
    live = {ref: LiveSession(env, ref.ljust(12, "0")).start() for ref in _session_refs(block)}
    watchers: list[tuple[str, subprocess.Popen[str]]] = []
    servers: list[tuple[str, subprocess.Popen[str]]] = []
    port = str(_free_port())
    try:
        for line in command_lines(block):
            if bare(line) in NOT_RUN:
                continue
            command = _without_install_steps(line, block)
            if not command:
                continue
            command = command.replace(SERVER_PORT, port)  # the documented port may be taken
            if re.match(r"rho-agent serve\b", command):
                servers.append((line, _serve(bare(command).removesuffix("&").strip(), env)))
                continue
            if re.search(r"\bmonitor watch\b", command) and "--once" not in command:
                watchers.append((command, _background(command, env)))
                continue
            runnable = _available(command, env.environ["PATH"])
            done = env.run_shell(runnable, stdin=STDIN_TASK)
            expected = EXPECTED_EXIT.get(bare(line), 0)
            assert done.returncode == expected, (
                f"{block.where}: `{line}` exited {done.returncode}, expected {expected}\n"
                f"{_output(done)}"
            )
            for name in re.findall(r">\s*(\S+\.json)\b", command):  # "one JSON document"
                json.loads((env.workspace / name).read_text(encoding="utf-8"))
            promised = EXPECTED_LAST_LINE.get(bare(line))
            if promised is not None:
                last = done.stdout.strip().splitlines()[-1:] or [""]
                assert promised in last[0], f"{block.where}: `{line}` ended with {last[0]!r}"
            if re.search(r"\bmonitor cancel\b", command):
                for session in live.values():
                    status = session.join().status
                    assert status is RunStatus.CANCELLED, f"{block.where}: `{line}`: {status}"
    finally:
        for line, server in servers:
            server.send_signal(signal.SIGTERM)
            _, err = server.communicate(timeout=30)
            assert server.returncode == 0, (
                f"{block.where}: `{line}` exited {server.returncode}: {err}"
            )
        for session in live.values():
            if session.running:  # the block never cancelled it
                request_cancel(resolve(env.config_home / "sessions", session.session_id).dir)
            session.join()
        for command, process in watchers:
            out, err = process.communicate(timeout=20)
            assert process.returncode == 0, f"{block.where}: `{command}`: {out}{err}"
            assert out.strip(), f"{block.where}: `{command}` printed nothing"
            if live:
                assert LiveSession.PROMPT in out, f"{block.where}: `{command}` printed {out!r}"


SERVER_PORT = "8765"  # `rho-agent serve`'s default, as the docs write it


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def _serve(command: str, env: DocsEnv) -> subprocess.Popen[str]:
    """``rho-agent serve`` in the background; returns once it listens."""
    server = subprocess.Popen(
        ["bash", "-c", f"exec {command}"],
        cwd=env.workspace,
        env=env.environ,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert server.stderr is not None
    first = server.stderr.readline()
    assert "listening on" in first, f"`{command}`: {first}{server.stderr.read()}"
    return server


def bare(line: str) -> str:
    """A command line without its trailing comment (the key of NOT_RUN and EXPECTED_*)."""
    return line.split("  #")[0].strip()


def _session_refs(block: Block) -> list[str]:
    return sorted(set(_SESSION_REF.findall(block.text)))


def _write_titled_files(block: Block, env: DocsEnv) -> None:
    """Blocks of the same document with ``title="NAME"`` are files the commands use."""
    for other in blocks(block.doc):
        if "title" in other.options:
            (env.workspace / other.options["title"]).write_text(other.text, encoding="utf-8")


def _without_install_steps(line: str, block: Block) -> str:
    """``a && b && c`` with the install steps checked and removed."""
    kept = []
    for step in line.split(" && "):
        if step.startswith(tuple(NOT_RUN_STEPS)):
            _check_install_step(step, block)
        else:
            kept.append(step)
    return " && ".join(kept)


def _check_install_step(step: str, block: Block) -> None:
    words = shlex.split(step)
    if words[0] == "bash":
        script = ROOT / words[1]
        assert script.is_file(), f"{block.where}: {words[1]} does not exist"
        syntax = subprocess.run(["bash", "-n", str(script)], capture_output=True, check=False)
        assert syntax.returncode == 0, f"{block.where}: {words[1]}: {syntax.stderr!r}"
    elif "install" in words:
        project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
        for target in words[words.index("install") + 1 :]:
            if target in {"-e", "-q", "--upgrade"}:
                continue
            name, _, extras = target.partition("[")
            if name in {".", ""}:
                assert (ROOT / "pyproject.toml").is_file()
                name = project["name"]
            if name != project["name"]:  # another package: one this venv has, so it exists
                try:
                    metadata.distribution(name)
                except metadata.PackageNotFoundError:
                    raise AssertionError(f"{block.where}: installs {name!r}, unknown") from None
                continue
            for extra in filter(None, extras.rstrip("]").split(",")):
                declared = project["optional-dependencies"]
                assert extra in declared, f"{block.where}: no extra {extra!r} in pyproject.toml"


def _available(command: str, path: str) -> str:
    """The command, with a pipe stage into a program that is not installed (jq) dropped."""
    stages = command.split(" | ")
    kept = [stages[0]] + [s for s in stages[1:] if shutil.which(s.split()[0], path=path)]
    return " | ".join(kept)


def _background(command: str, env: DocsEnv) -> subprocess.Popen[str]:
    return subprocess.Popen(
        ["bash", "-c", command],
        cwd=env.workspace,
        env=env.shell_environ,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _output(done: subprocess.CompletedProcess[str]) -> str:
    return f"--- stdout\n{done.stdout}--- stderr\n{done.stderr}"


# -- yaml, markdown ----------------------------------------------------------------------------


def load_yaml(block: Block, env: DocsEnv) -> None:
    """Load the block with the loader for what it is: a databases.yaml (one ``databases``
    key), an MCP config (one ``mcp_servers`` key), a prices.yaml (``version`` and
    ``models``), an AgentConfig file (a key only AgentConfig has: model, ...), else a
    profile."""
    data = yaml.safe_load(block.text)
    assert isinstance(data, dict), f"{block.where}: not a mapping"
    path = env.scratch / f"{block.doc.stem}_{block.line}.yaml"
    path.write_text(block.text, encoding="utf-8")
    profile_keys = {a.name for a in attrs.fields(PermissionProfile)} | {"base", "profile"}
    config_only = {a.name for a in attrs.fields(DomainAgentConfig)} - profile_keys
    try:
        if set(data) == {"databases"}:
            assert load_databases_file(path), f"{block.where}: no database aliases"
        elif set(data) == {"mcp_servers"}:
            assert load_mcp_servers(path), f"{block.where}: no MCP servers"
        elif set(data) == {"version", "models"}:
            assert read_prices(path).prices, f"{block.where}: no prices"
        elif set(data) & config_only:
            AgentConfig.from_file(path)
        else:
            load_profile_file(path)
    except RhoError as exc:
        raise AssertionError(f"{block.where}: {exc}") from exc


def render_markdown(block: Block, env: DocsEnv) -> None:
    """A Markdown block is a prompt template: parse it and render it with its required
    variables set; nothing may be left unsubstituted."""
    template = parse_template(block.text, source=block.where)
    values = {name: f"<{name}>" for name, spec in template.vars.items() if spec.required}
    rendered = render_template(template, values)
    for text in (rendered.system_prompt, rendered.initial_prompt or ""):
        assert "{{" not in text, f"{block.where}: unrendered placeholder in {text!r}"


# -- sql, text ---------------------------------------------------------------------------------

_DIALECT_NAMES = {
    "postgresql": "postgres",
    "mysql": "mysql",
    "mariadb": "mysql",
    "oracle": "oracle",
    "vertica": "vertica",
}
_ACCOUNT_STATEMENTS = {"CREATE", "ALTER", "GRANT", "REVOKE"}


def check_sql(block: Block, env: DocsEnv) -> None:
    """Account SQL for the engine its caption names. A block whose caption names a file in
    docs/sql is checked by tests/db, which executes that file on a real server: it must be
    that file, and a test there must name it. Any other block: every reading of the dialect
    lexes it (quotes and comments close), each statement is an account statement, and the
    read-only check refuses it (it is not a query)."""
    executed = re.search(r"`(docs/sql/[\w.-]+\.sql)`", block.caption)
    if executed:
        path = ROOT / executed.group(1)
        assert path.is_file(), f"{block.where}: {path.name} does not exist"
        assert path.read_text(encoding="utf-8").strip() == block.text.strip(), path.name
        tests = (t.read_text(encoding="utf-8") for t in (ROOT / "tests" / "db").glob("*.py"))
        assert any(path.name in t for t in tests), f"{block.where}: no test in tests/db runs it"
        return
    words = re.findall(r"[a-z]+", block.caption.lower())
    names = {_DIALECT_NAMES[w] for w in words if w in _DIALECT_NAMES}
    assert len(names) == 1, f"{block.where}: the caption {block.caption!r} names no one engine"
    name = names.pop()
    for rules in dialect(name).readings:
        statements: list[list[str]] = [[]]
        try:
            tokens = tokenize(block.text, rules)
        except RhoError as exc:
            raise AssertionError(f"{block.where}: {name}: {exc}") from exc
        for token in tokens:
            if token.text == ";":
                statements.append([])
            else:
                statements[-1].append(token.text)
        statements = [s for s in statements if s]
        assert statements, f"{block.where}: no statement"
        for statement in statements:
            assert statement[0] in _ACCOUNT_STATEMENTS, f"{block.where}: {' '.join(statement)}"
    assert not classify(block.text, name).read_only


def check_diagram(block: Block, env: DocsEnv) -> None:
    """A text diagram: every module file and package it names exists."""
    src = ROOT / "src"
    for path in re.findall(r"[\w/]+\.py\b", block.text):
        assert any(src.rglob(path)), f"{block.where}: {path} is not in src/"
    for package in set(re.findall(r"\brho_(?:domain|adapters|entry)\b", block.text)):
        assert (src / package / "__init__.py").is_file(), f"{block.where}: {package}"


RUNNERS: dict[str, Runner] = {
    "python": run_python,
    "bash": run_bash,
    "yaml": load_yaml,
    "markdown": render_markdown,
    "sql": check_sql,
    "text": check_diagram,
}


def runner_for(block: Block) -> Runner:
    """The block's runner; a language without one fails the docs test."""
    runner = RUNNERS.get(block.lang)
    assert runner is not None, (
        f"{block.where}: no runner for a ```{block.lang or '(no language)'} block: tag it with "
        f"one of {sorted(RUNNERS)} or add a runner to tests/docs/docs_runners.py"
    )
    return runner


def relative(path: Path) -> str:
    """``path`` relative to the repository."""
    return str(path.relative_to(ROOT))
