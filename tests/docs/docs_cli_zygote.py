"""``rho-agent`` for the docs' bash blocks, forked from a Python that has imported the CLI.

A bash block's ``rho-agent ...`` is the console script the README's activation puts on PATH:
``main()`` of ``rho_entry.cli`` in a new interpreter, about 0.3 s of CPU before it does
anything (the interpreter, the CLI's imports), 42 commands a run. Here the commands still
run in a process of their own with the shell's standard streams, working directory,
environment and arguments, and exit as the console script exits (``sys.exit(main())``, then
the interpreter's end: ``atexit``, flushes, non-daemon threads); what they do not pay is
the start. ``SHELL_FUNCTION`` is how the block's shell reaches it: a function named
``rho-agent`` that first checks the PATH has a ``rho-agent`` (a reader's shell without the
README's activation says ``command not found``, exit 127), then runs ``docs_cli_client.py``,
which hands its streams (``SCM_RIGHTS``), directory, environment and arguments to this
process and exits with the command's status. ``exec rho-agent`` (the servers the runner
starts and signals) and any program that runs ``rho-agent`` by path still run the console
script itself.

Run as a program: ``python docs_cli_zygote.py SOCKET``; it serves until ``CliZygote.close``
(SIGTERM) or until the process that started it ends. Its plumbing (the socket, the keepers,
the fork, a program's start and end) is ``program_zygote``'s: ``tests/cli/zygote_serve.py``.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
CLIENT = HERE / "docs_cli_client.py"

# What the commands import before they do anything (the CLI, a run's path: the facade and
# its wiring, the local executor, the file store, the loop; the listing, monitor, export and
# stats commands), loaded once and shared by every fork. A command imports the rest itself.
PRELOAD = (
    "asyncio",
    "httpx",
    "yaml",
    "rho_entry.cli",
    "rho_entry.cli.main",
    "rho_entry.cli.app",
    "rho_entry.cli.parser",
    "rho_entry.cli.pipes",
    "rho_entry.cli.render",
    "rho_entry.cli.monitor",
    "rho_entry.cli.export",
    "rho_entry.cli.stats",
    "rho_entry.cli.sessions",
    "rho_entry.agent",
    "rho_entry.facade",
    "rho_entry.wiring",
    "rho_entry.otel",
    "rho_entry.seed_api.tools",
    "rho_entry.config.stores",
    "rho_entry.config.config_files",
    "rho_entry.config.prices",
    "rho_entry.config.prompts",
    "rho_adapters.model",
    "rho_adapters.local.executor",
    "rho_adapters.store.files",
    "rho_domain.loop.session",
    # what a run imports once it starts (its tools, system prompt, hooks, the store's
    # signals): about 50 ms of each command's CPU when each fork imported it
    "rho_domain.tools.factory",
    "rho_entry.given_ports",
    "rho_entry.seed_api.state",
    "rho_entry.config.system_prompt",
    "rho_entry.config.prompts.facts",
    "rho_entry.config.hook_refs",
    "rho_entry.config.mcp_servers",
    "rho_entry.cli.log_lines",
    "rho_adapters.clock",
    "rho_adapters.model.demo",
    "rho_adapters.model.proxies",
    "rho_adapters.local.spreadsheet",
    "rho_adapters.local.line_search",
    "rho_adapters.store.cancel_watch",
    "rho_adapters.store.signals",
    "encodings.utf_8_sig",
)

# The function a block's shell gets (BASH_FUNC_rho-agent%% in its environment).
SHELL_FUNCTION = (
    "() { if ! type -P rho-agent >/dev/null; then "
    'echo "bash: rho-agent: command not found" >&2; return 127; fi; '
    '"$RHO_DOCS_PYTHON" -I -S "$RHO_DOCS_CLIENT" "$@"; }'
)


class CliZygote:
    """The forking Python for ``rho-agent`` commands (``close`` stops it)."""

    def __init__(self, run_dir: Path, env: dict[str, str]) -> None:
        self.socket_path = run_dir / "rho-agent.sock"
        with (run_dir / "rho-agent-zygote.log").open("wb") as log:  # not a pipe: forks hold it
            self.process = subprocess.Popen(
                [sys.executable, __file__, str(self.socket_path)],
                cwd=run_dir,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=log,
            )
        deadline = time.monotonic() + 60
        while not self.socket_path.exists():  # it binds once the CLI is imported
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.process.kill()
                self.process.wait()
                said = (self.socket_path.parent / "rho-agent-zygote.log").read_text()
                raise AssertionError(f"the docs CLI zygote did not start: {said}")
            time.sleep(0.02)

    def shell_env(self) -> dict[str, str]:
        """What a block's shell needs in its environment to run ``rho-agent`` through here."""
        return {
            "BASH_FUNC_rho-agent%%": SHELL_FUNCTION,
            "RHO_DOCS_PYTHON": sys.executable,
            "RHO_DOCS_CLIENT": str(CLIENT),
            "RHO_DOCS_CLI_SOCKET": str(self.socket_path),
        }

    def close(self) -> None:
        """Stop the zygote (commands still running end with their shells)."""
        self.process.terminate()
        self.process.wait(10)


# -- the zygote (its plumbing is program_zygote's: tests/cli/zygote_serve.py) ------------------


def main() -> None:
    # this file's directory goes (the command sees what the console script sees), and
    # tests/cli, where the plumbing is, stands there for the import only
    sys.path[0] = str(HERE.parent / "cli")
    import zygote_serve

    sys.path.pop(0)
    zygote_serve.preload(PRELOAD)
    conn, request, fds = zygote_serve.serve(sys.argv[1])
    zygote_serve.become(conn, request, fds)
    sys.argv = ["rho-agent", *request["argv"]]
    from rho_entry.cli import main as rho_agent

    try:
        code = rho_agent()  # as the console script: sys.exit(main())
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    zygote_serve.end(code)


if __name__ == "__main__":
    main()
