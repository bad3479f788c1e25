"""The ``BaseInstalledAgent`` subclass, built when asked for: Harbor is imported here only.

Both generations of Harbor's installed-agent interface are implemented: older releases read
``_install_agent_template_path`` (a script they render and run) and call
``create_run_agent_commands(instruction)`` from their own ``run``; newer ones call
``install(environment)`` and leave ``run(instruction, environment, context)`` abstract. Every
release calls ``populate_context_post_run(context)`` after the run.

Agent kwargs (``--agent-kwarg``): ``install_spec`` (else ``$RHO_AGENT_INSTALL_SPEC``) and
``max_turns``.
"""

from __future__ import annotations

import functools
import os
import shlex
import sys
from pathlib import Path
from typing import Any

from rho_adapters.extras import install_command, missing_extra
from rho_domain.errors import ConfigError, MissingExtra
from rho_entry.evals import harbor_commands as harbor


class HarborNeedsNewerPython(MissingExtra):
    """Harbor cannot be installed on this Python at all: the extra alone would install
    nothing (its marker skips Harbor below 3.12), so the message starts with the Python."""

    def __init__(self, running: tuple[int, int]) -> None:
        ConfigError.__init__(
            self,
            f"the Harbor adapter needs Harbor, which needs Python >= 3.12, and this is Python "
            f"{running[0]}.{running[1]}: make a Python 3.12 venv and install rho-agent there, "
            "e.g. `python3.12 -m venv .venv-harbor && .venv-harbor/bin/"
            f"{install_command('harbor')}` (no python3.12? `uv python install 3.12`, or your "
            "distribution's python3.12 package)",
        )
        self.package = "harbor"
        self.extra = "harbor"


def missing_harbor(running: tuple[int, int]) -> MissingExtra:
    """The error for a Python without Harbor: on 3.12 and later, the extra to install;
    before, that a newer Python is needed first, and how to get one."""
    if running < (3, 12):
        return HarborNeedsNewerPython(running)
    return missing_extra("harbor", "harbor", "the Harbor adapter")


@functools.cache
def agent_class() -> type[Any]:
    """``RhoAgent``; MissingExtra (naming the ``harbor`` extra) when Harbor is not installed."""
    try:
        from harbor.agents.installed import base
    except ImportError as exc:
        raise missing_harbor(sys.version_info[:2]) from exc

    class RhoAgent(base.BaseInstalledAgent):  # type: ignore[misc]
        """rho-agent in a Harbor task container, with the ``eval`` profile."""

        SUPPORTS_ATIF = True

        def __init__(
            self,
            *args: Any,
            install_spec: str | None = None,
            max_turns: int | str | None = None,
            **kwargs: Any,
        ) -> None:
            super().__init__(*args, **kwargs)
            self._spec = install_spec or os.environ.get(harbor.SPEC_VARIABLE, "")
            self._max_turns = int(max_turns) if max_turns is not None else None
            harbor.install_script(self._spec)  # a bad spec fails here, before any container

        @staticmethod
        def name() -> str:
            return "rho-agent"

        @property
        def _install_agent_template_path(self) -> Path:
            path = Path(self.logs_dir) / "install-rho-agent.sh"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(harbor.install_script(self._spec), encoding="utf-8")
            return path

        def _commands(self, instruction: str) -> tuple[str, str]:
            return harbor.run_commands(
                instruction, model_name=self.model_name, max_turns=self._max_turns
            )

        def create_run_agent_commands(self, instruction: str) -> list[Any]:
            env = harbor.forwarded_env(os.environ)
            return [base.ExecInput(command=c, env=env) for c in self._commands(instruction)]

        async def install(self, environment: Any) -> None:
            script = shlex.quote(harbor.install_script(self._spec))
            await self.exec_as_root(environment, f"bash -c {script}")

        def populate_context_post_run(self, context: Any) -> None:
            usage = harbor.usage_from_logs(Path(self.logs_dir))
            context.n_input_tokens = usage.input_tokens
            context.n_output_tokens = usage.output_tokens
            context.n_cache_tokens = usage.cached_tokens
            context.cost_usd = usage.cost_usd

    if getattr(base.BaseInstalledAgent.run, "__isabstractmethod__", False):

        async def run(self: Any, instruction: str, environment: Any, context: Any) -> None:
            env = harbor.forwarded_env(os.environ)
            for command in self._commands(self.render_instruction(instruction)):
                await self.exec_as_agent(environment, command, env=env)

        RhoAgent.run = run
        RhoAgent.__abstractmethods__ = frozenset(RhoAgent.__abstractmethods__ - {"run"})
    return RhoAgent
