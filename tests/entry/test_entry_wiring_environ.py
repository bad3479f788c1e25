"""The environment the wiring is given reaches every adapter it builds; nothing below the
wiring reads ``os.environ`` (issue 25, item 8).

``build_ports(environ=...)`` used to pass its mapping to the model and the databases only:
``build_executor`` and ``build_daytona_executor`` read ``os.environ`` themselves, so a service
building sessions for several users leaked its own variables into their commands.
"""

from __future__ import annotations

import ast
import os
from pathlib import Path

import pytest

from rho_adapters.daytona import DaytonaExecutor
from rho_adapters.fakes import FakeClock, ScriptedModel
from rho_adapters.local import LocalExecutor
from rho_adapters.local.line_search import ProcessLineSearcher
from rho_domain.agent import Agent
from rho_domain.config import AgentConfig
from rho_domain.errors import ConfigError, RhoError
from rho_domain.permissions import builtin_profile
from rho_domain.ports.executor import Command
from rho_domain.tools.registry import ToolRegistry
from rho_entry import wiring

SRC = Path(__file__).resolve().parents[2] / "src"
# A fake of a remote machine: its commands get the environment that machine would have.
# (tls_context read SSL_CERT_FILE/SSL_CERT_DIR from the process until corners22: they are
# carried in ProxyRoutes.trust, from the wiring's environ.)
MAY_READ_OS_ENVIRON = {
    "rho_adapters/fakes/daytona.py",
    "rho_adapters/fakes/daytona_process.py",
}


def _agent(tmp_path: Path, profile: str, **config: object) -> Agent:
    return Agent(
        config=AgentConfig(working_dir=str(tmp_path), profile=profile, **config),  # type: ignore[arg-type]
        profile=builtin_profile(profile),
        registry=ToolRegistry(),
        system_prompt="",
    )


def _reads_os_environ(path: Path) -> list[int]:
    """Lines of ``path`` that read the process environment (``os.environ``, ``os.getenv``,
    ``os.environb``, ``from os import environ``...)."""
    text = path.read_text(encoding="utf-8")
    names = {"environ", "environb", "getenv", "getenvb", "putenv"}
    # a file that spells none of the names cannot read them (ASCII text only: Python takes
    # identifiers NFKC-normalised, so os.environ spelt with a fullwidth e is os.environ);
    # parsing every module of the two packages cost 0.6-0.8 s of CPU, nearly all of it on
    # files that name none of them
    if text.isascii() and not any(name in text for name in ("environ", "getenv", "putenv")):
        return []
    tree = ast.parse(text)
    lines = []
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Attribute)
            and node.attr in names
            and isinstance(node.value, ast.Name)
            and node.value.id == "os"
        ):
            lines.append(node.lineno)
        elif isinstance(node, ast.ImportFrom) and node.module == "os":
            lines.extend(node.lineno for a in node.names if a.name in names)
    return lines


def test_nothing_below_the_wiring_reads_the_process_environment() -> None:
    found = [
        f"{path.relative_to(SRC)}:{line}"
        for package in ("rho_domain", "rho_adapters")
        for path in sorted((SRC / package).rglob("*.py"))
        if path.relative_to(SRC).as_posix() not in MAY_READ_OS_ENVIRON
        for line in _reads_os_environ(path)
    ]
    assert found == []


def test_the_check_sees_each_spelling(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text("import os\nfrom os import getenv\nx = os.environ.get('A')\n")
    assert _reads_os_environ(module) == [2, 3]
    module.write_text("import os\nx = os.\uff45nviron.get('A')\n")  # a fullwidth e
    assert _reads_os_environ(module) == [2]


async def test_unrestricted_commands_start_in_the_given_environment(tmp_path: Path) -> None:
    assert "RHO_WIRING_MARK" not in os.environ
    env = {"PATH": os.environ["PATH"], "RHO_WIRING_MARK": "given", "RHO_AGENT_HOME": "/nowhere"}
    ports = wiring.build_ports(
        _agent(tmp_path, "developer"), model=ScriptedModel([]), clock=FakeClock(), environ=env
    )
    try:
        assert isinstance(ports.executor, LocalExecutor)
        done = await ports.executor.run(Command(shell="echo ${RHO_WIRING_MARK:-unset}; echo $HOME"))
        assert done.output.splitlines()[0] == "given"
        # the process's own HOME is not there: the given mapping has none
        assert done.output.splitlines()[1] == ""
    finally:
        await ports.executor.aclose()


async def test_the_config_directory_hidden_from_tools_is_the_given_environments(
    tmp_path: Path,
) -> None:
    """The agent's own configuration (``$RHO_AGENT_HOME``, databases.yaml) is never read by a
    tool: the home the given environment names, not the process's."""
    work = tmp_path / "work"
    home = work / "conf"  # inside the workspace, so only the secret rule keeps it out
    home.mkdir(parents=True)
    (home / "databases.yaml").write_text("secret: hunter2\n")
    (work / "notes.txt").write_text("legit\n")
    env = {"PATH": os.environ["PATH"], "RHO_AGENT_HOME": str(home)}
    ports = wiring.build_ports(
        _agent(work, "readonly"), model=ScriptedModel([]), clock=FakeClock(), environ=env
    )
    # the output schema's patterns (a client's) are judged in a killable worker, off the loop
    assert isinstance(ports.line_searcher, ProcessLineSearcher)
    try:
        assert await ports.executor.read("notes.txt") == b"legit\n"
        with pytest.raises(RhoError, match="conf"):
            await ports.executor.read("conf/databases.yaml")
    finally:
        await ports.executor.aclose()


def test_daytona_settings_come_from_the_given_environment(tmp_path: Path) -> None:
    assert "DAYTONA_API_KEY" not in os.environ
    env = {"DAYTONA_API_KEY": "k", "DAYTONA_API_URL": "https://daytona.example/api"}
    ports = wiring.build_ports(
        _agent(tmp_path, "readonly", backend="daytona"),
        model=ScriptedModel([]),
        clock=FakeClock(),
        environ=env,
    )
    assert isinstance(ports.executor, DaytonaExecutor)
    assert ports.executor.settings.api_url == "https://daytona.example/api"
    with pytest.raises(ConfigError, match="DAYTONA_API_KEY"):
        wiring.build_ports(
            _agent(tmp_path, "readonly", backend="daytona"),
            model=ScriptedModel([]),
            clock=FakeClock(),
            environ={"PATH": os.environ["PATH"]},
        )


@pytest.mark.parametrize(
    ("workspace", "readable"),
    [
        ("", False),  # the config directory below the workspace: a secret
        ("cfg/rho-agent", True),  # the workspace is the config directory
        ("cfg/rho-agent/project", True),  # the workspace is inside it
        ("cfg/rho-agent-other", False),  # a sibling whose name starts alike is not inside
    ],
)
async def test_the_config_directory_is_a_secret_unless_the_workspace_is_in_it(
    tmp_path: Path, workspace: str, readable: bool
) -> None:
    home = tmp_path / "cfg" / "rho-agent"
    (home / "project").mkdir(parents=True)
    (home / "databases.yaml").write_text("secret: 1\n")
    (tmp_path / "cfg" / "rho-agent-other").mkdir()
    root = tmp_path / workspace
    executor = wiring.build_executor(
        _agent(root, "readonly").config,
        builtin_profile("readonly"),
        None,
        environ={"RHO_AGENT_HOME": str(home)},
    )
    assert isinstance(executor, LocalExecutor)
    refused = executor.policy.refusal(str(home / "databases.yaml"))
    assert (refused is None) is readable, refused
