"""What a reader of the docs has: a workspace, a config home, an endpoint, their sessions.

The endpoint is one ``LoopbackServer`` (a real socket) shared by every block. Each agent run
it serves takes two model calls, a ``list`` tool call and then a text answer, so the
script cycles through that pair.
"""

from __future__ import annotations

import asyncio
import os
import shlex
import shutil
import subprocess
import sys
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

from docs_blocks import readme_activation
from docs_cli_zygote import CliZygote
from docs_zygote import Zygote

from rho_adapters.fakes import FunctionModel, Turn
from rho_adapters.fakes.loopback import LoopbackServer
from rho_adapters.fakes.wire import call, text_reply, tool_reply
from rho_adapters.store import FileSessionStore
from rho_domain.model import ModelRequest
from rho_domain.run import RunResult
from rho_entry import Agent, AgentConfig, Session

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "cli"))  # program_zygote
import program_zygote  # found through the path just above

ANSWER = "The workspace holds README.md, app.py and notes.txt."
WORKSPACE_FILES = {
    "README.md": "# Sample service\n\nIt answers requests.\n",
    "app.py": "def main() -> None:\n    print('hi')  # TODO: log\n",
    "notes.txt": "retries live in app.py\n",
}


def fresh_path() -> str:
    """PATH as a reader's fresh shell has it: this machine's, without any directory that holds
    a ``rho-agent`` (the venv running these tests among them)."""
    return os.pathsep.join(
        d
        for d in os.environ.get("PATH", "/usr/bin:/bin").split(os.pathsep)
        if d and not (Path(d) / "rho-agent").exists()
    )


class DocsEnv:
    """A temporary workspace and config home, and the loopback endpoint (``close`` stops it)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.home = root / "home"  # $HOME
        self.config_home = root / "rho-home"  # $RHO_AGENT_HOME
        self.workspace = root / "work"
        self.scratch = root / "scratch"  # where snippets are written, outside the workspace
        # $TMPDIR: what a block makes with `tempfile` goes with the test's directory
        self.tmp = root / "tmp"
        for directory in (self.home, self.config_home, self.workspace, self.scratch, self.tmp):
            directory.mkdir(parents=True)
        for name, content in WORKSPACE_FILES.items():
            (self.workspace / name).write_text(content, encoding="utf-8")
        # the README's first command installs into `.venv`: this interpreter's venv
        (self.workspace / ".venv").symlink_to(Path(sys.prefix))
        self.shell = self._after_setup()
        self.bin = self._python_forked_from_the_sdk()
        self.server = LoopbackServer(
            [tool_reply(call("list", {"path": "."})), text_reply(ANSWER, deltas=4)], repeat=True
        ).start()
        self._zygote: Zygote | None = None
        self._cli: CliZygote | None = None

    def fresh_config_home(self, name: str) -> Path:
        """Point ``$RHO_AGENT_HOME`` at a new, empty directory (each block gets its own, so
        `latest` means the block's own last session)."""
        self.config_home = self.root / "rho-homes" / name
        self.config_home.mkdir(parents=True)
        return self.config_home

    def close(self) -> None:
        """Stop the endpoint (and the Python that runs the blocks)."""
        if self._zygote is not None:
            self._zygote.close()
        if self._cli is not None:
            self._cli.close()
        self.server.stop()

    def _after_setup(self) -> dict[str, str]:
        """PATH (and VIRTUAL_ENV) of a reader's shell after the README's first command: a
        fresh shell has no ``rho-agent`` on PATH (no directory holding one: this suite's venv
        is not the reader's), and only the README's own activation step puts it there. A
        README that does not say how leaves it off, and every later block fails as it would
        for the reader (``rho-agent: command not found``)."""
        fresh = fresh_path()
        activation = readme_activation()
        if activation is None:
            return {"PATH": fresh}
        done = subprocess.run(
            ["bash", "-c", f'{activation} && printf "%s\\0%s" "$PATH" "${{VIRTUAL_ENV:-}}"'],
            cwd=self.workspace,
            env={"PATH": fresh, "HOME": str(self.home)},
            capture_output=True,
            text=True,
            check=True,
        )
        path, virtual_env = done.stdout.split("\0")
        return {"PATH": path, "VIRTUAL_ENV": virtual_env}

    def _python_forked_from_the_sdk(self) -> Path | None:
        """A directory whose ``python`` stands for the reader's (``shell``'s: this venv's)
        and runs ``python SCRIPT ...`` forked from the zygote that has imported the MCP SDK
        (``program_zygote``'s ``mcp``; the SDK's import is about 1.8 s of CPU, and a run of
        the docs started docs/mcp.md's server four times). Anything else (an option first,
        no argument) is the interpreter itself. None when the reader's ``python`` is not
        this venv's: the blocks then meet whatever the reader's shell has."""
        found = shutil.which("python", path=self.shell["PATH"])
        if found is None or Path(found).parent.resolve() != Path(sys.executable).parent.resolve():
            return None
        client = program_zygote.command("mcp", [sys.executable, "SCRIPT"])[:-1]
        shim = self.root / "bin" / "python"
        shim.parent.mkdir()
        shim.write_text(
            "#!/bin/bash\n"
            f'case "${{1:--}}" in -*) exec {shlex.quote(sys.executable)} "$@";; esac\n'
            f'exec {shlex.join(client)} "$@"\n',
            encoding="utf-8",
        )
        shim.chmod(0o755)
        return shim.parent

    @property
    def environ(self) -> dict[str, str]:
        """A reader's environment: their shell after the README's setup (``shell``), an
        endpoint and a key, no settings leaking in from the machine running the tests."""
        # PYTHONPATH is kept: a checkout that puts its own src first must run its own code
        kept = {k: os.environ[k] for k in ("PYTHONPATH",) if k in os.environ}
        return {
            **kept,
            **self.shell,
            **({"PATH": f"{self.bin}{os.pathsep}{self.shell['PATH']}"} if self.bin else {}),
            "HOME": str(self.home),
            "RHO_AGENT_HOME": str(self.config_home),
            "OPENAI_BASE_URL": self.server.base_url,
            "OPENAI_API_KEY": "sk-docs-test",
            "NO_COLOR": "1",
            "LANG": "C.UTF-8",
            "PYTHONIOENCODING": "utf-8",
            "TMPDIR": str(self.tmp),
            # the sources under test (a worktree's src), not whatever the venv installed
            **({"PYTHONPATH": os.environ["PYTHONPATH"]} if os.environ.get("PYTHONPATH") else {}),
        }

    def run(
        self, argv: list[str], *, stdin: str = "", timeout: float = 60
    ) -> subprocess.CompletedProcess[str]:
        """Run ``argv`` in the workspace with the reader's environment."""
        return self._spawn(argv, self.environ, stdin, timeout)

    def _spawn(
        self, argv: list[str], env: dict[str, str], stdin: str, timeout: float
    ) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            argv,
            cwd=self.workspace,
            env=env,
            input=stdin,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )

    @property
    def shell_environ(self) -> dict[str, str]:
        """``environ`` for a block's shell: its ``rho-agent`` commands fork from a Python that
        has imported the CLI (``docs_cli_zygote``), started on first use."""
        if self._cli is None:
            self._cli = CliZygote(self.scratch, self.environ)
        return {**self.environ, **self._cli.shell_env()}

    def run_shell(
        self, command: str, *, stdin: str = "", timeout: float = 60
    ) -> subprocess.CompletedProcess[str]:
        """``bash -o pipefail -c COMMAND`` as ``run`` would, with ``shell_environ``."""
        return self._spawn(
            ["bash", "-o", "pipefail", "-c", command], self.shell_environ, stdin, timeout
        )

    def run_python(
        self, argv: list[str], *, stdin: str = "", timeout: float = 60, sdk: bool = False
    ) -> subprocess.CompletedProcess[str]:
        """Run ``[python, ...]`` as ``run`` would, in a process forked from one that has
        imported the library already (``docs_zygote``), started on first use; with ``sdk``
        (a program written with the MCP SDK), from the one that has imported the SDK."""
        if sdk:
            return program_zygote.run(
                "mcp",
                argv,
                timeout=timeout,
                input=stdin,
                cwd=self.workspace,
                env=self.environ,
                text=True,
            )
        if self._zygote is None:
            self._zygote = Zygote(self.workspace, self.environ)
        return self._zygote.run(
            argv,
            cwd=self.workspace,
            env=self.environ,
            stdin=stdin,
            scratch=self.scratch,
            timeout=timeout,
        )


class LiveSession:
    """A session that a process is driving right now, as ``rho-agent monitor`` sees one: it
    runs in a thread of this process with the file store, and its model call waits until the
    session is cancelled."""

    PROMPT = "a long investigation"

    def __init__(self, env: DocsEnv, session_id: str) -> None:
        self.env = env
        self.session_id = session_id
        self.result: RunResult | None = None
        self._started = threading.Event()
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix=f"live-{session_id}")
        self._future: Future[None] | None = None

    def start(self) -> LiveSession:
        """Start driving; returns once the run has started (its model call is waiting)."""
        self._future = self._pool.submit(asyncio.run, self._drive())
        while not self._started.wait(0.05):
            if self._future.done():
                self._future.result()  # raises what stopped it
                raise RuntimeError(f"session {self.session_id} ended before its model call")
        return self

    @property
    def running(self) -> bool:
        """True until the run has ended."""
        return self._future is not None and not self._future.done()

    def join(self, timeout: float = 20) -> RunResult:
        """Wait for the run to end (it ends when cancelled) and return its result."""
        assert self._future is not None, "start() first"
        self._future.result(timeout)
        self._pool.shutdown()
        assert self.result is not None
        return self.result

    async def _drive(self) -> None:
        async def waits(request: ModelRequest) -> Turn:
            self._started.set()
            await asyncio.sleep(120)
            return Turn(text="too late")

        agent = Agent(AgentConfig(model="docs-model", working_dir=str(self.env.workspace)))
        store = FileSessionStore(self.env.config_home / "sessions")
        async with Session(
            agent, model=FunctionModel(waits), store=store, session_id=self.session_id
        ) as session:
            self.result = await session.run(prompt=self.PROMPT)
