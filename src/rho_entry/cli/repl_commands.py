"""The REPL's slash commands: ``/help``, ``/approve``, ``/compact``, ``/usage``, ``/sessions``,
``/resume``, ``/profile`` (``/mode``), ``/clear``.

``SlashCommands.command`` runs one line that starts with ``/`` and answers False for
``/exit`` and ``/quit`` (leave the REPL), True otherwise; an unknown command and a command's
``RhoError`` or ``ModelError`` are said in red and the REPL goes on. The commands act on the
REPL through ``ReplHost``: its session, store and renderer, and ``switch`` to reopen a session.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Coroutine
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

import attrs

from rho_domain.compaction import CompactResult
from rho_domain.errors import ModelError, RhoError
from rho_domain.loop.compaction_run import NOTHING_TO_COMPACT
from rho_domain.ports.store import SessionStore
from rho_entry.cli.approval import TerminalApprover
from rho_entry.cli.interrupts import interruptible
from rho_entry.cli.launch import Launch
from rho_entry.cli.render import TerminalRenderer
from rho_entry.cli.running import open_session
from rho_entry.cli.sessions import format_sessions

if TYPE_CHECKING:
    from rho_entry.facade import Session

T = TypeVar("T")

HELP = """\
commands:
  /help                      this help
  /approve [on|off]          approve tool calls without asking (off: ask again)
  /compact [instructions]    summarise older history now (optional focus)
  /usage                     tokens and cost of this session
  /sessions                  saved sessions, newest first
  /resume ID                 switch to a saved session (id, prefix or latest)
  /profile [NAME]            show the profile, or switch this session to another (/mode)
  /clear                     start a new conversation (the current one stays saved)
  /exit                      leave (also: exit, quit, Ctrl+D, Ctrl+C twice)
input: Enter sends; end a line with \\ to continue it; \"\"\" starts and ends a block."""


class ReplHost(Protocol):
    """What the commands read and change of the REPL (``rho_entry.cli.repl.Repl``)."""

    session: Session
    launch: Launch
    store: SessionStore
    renderer: TerminalRenderer
    approver: TerminalApprover

    def await_result(self, coro: Coroutine[Any, Any, T]) -> T:
        """Run ``coro`` on the REPL's event loop to its end."""
        ...

    def say(self, text: str, *styles: str) -> None:
        """Print a notice (stderr) with optional styles."""
        ...

    def switch(self, *, resume: str, overrides: dict[str, Any]) -> None:
        """Reopen a session (this one with new settings, or another) through the store."""
        ...

    def goodbye(self) -> None:
        """Say how to resume the session, if it has anything to resume."""
        ...


class SlashCommands:
    """The slash commands of one REPL; ``cmd_<name>`` runs ``/<name>``."""

    def __init__(self, repl: ReplHost) -> None:
        self.repl = repl

    def command(self, line: str) -> bool:
        """Run a slash command; False means leave the REPL."""
        name, _, rest = line.partition(" ")
        rest = rest.strip()
        handler = getattr(self, f"cmd_{name[1:].lower()}", None)
        if name in ("/exit", "/quit"):
            return False
        if handler is None:
            self.repl.say(f"unknown command {name}; /help lists the commands", "red")
            return True
        try:
            handler(rest)
        except (RhoError, ModelError) as exc:
            self.repl.say(f"{name}: {exc}", "red")
        return True

    def cmd_help(self, _: str) -> None:
        """/help: list the commands."""
        self.repl.say(HELP)

    def cmd_approve(self, arg: str) -> None:
        """/approve [on|off]: approve tool calls without asking, or ask again."""
        if arg not in ("", "on", "off"):
            self.repl.say("usage: /approve [on|off]", "red")
            return
        self.repl.approver.auto = arg != "off"
        state = (
            "on: tool calls run without asking" if self.repl.approver.auto else "off: I will ask"
        )
        self.repl.say(f"auto-approve {state}", "yellow")

    def cmd_compact(self, arg: str) -> None:
        """/compact [instructions]: summarise older history now."""

        async def compact() -> CompactResult:
            with interruptible(self.repl.session, lambda text: self.repl.say(text, "yellow")):
                return await self.repl.session.compact(arg)

        try:
            result = self.repl.await_result(compact())
        except asyncio.CancelledError:
            self.repl.say("compaction cancelled; history unchanged", "yellow")
            return
        except ModelError:
            return  # its error event was shown (Session.compact records why)
        if not result.summary and result.note in ("", NOTHING_TO_COMPACT):
            # a rejected summary was shown as its error event
            self.repl.say(result.note or "nothing to compact yet", "dim")

    def cmd_usage(self, _: str) -> None:
        """/usage: context estimate, tokens and cost of this session."""
        state, agent = self.repl.session.state, self.repl.session.agent
        usage = state.usage
        cost = f" · ${usage.cost_usd:.4f}" if usage.cost_usd else ""
        self.repl.say(
            f"context ~{state.estimated_context_tokens(agent.system_prompt):,} tokens of "
            f"{agent.config.context_window:,} · session in {usage.input_tokens:,} / out "
            f"{usage.output_tokens:,}{cost} · {len(state.messages)} messages"
        )

    def cmd_sessions(self, _: str) -> None:
        """/sessions: saved sessions, newest first."""
        lines = format_sessions(self.repl.await_result(self.repl.store.list(limit=20)))
        self.repl.say("\n".join(lines) if lines else "no saved sessions")

    def cmd_resume(self, arg: str) -> None:
        """/resume ID: switch to a saved session."""
        if not arg:
            self.cmd_sessions("")
            self.repl.say("/resume ID (a prefix or `latest` works too)", "dim")
            return
        self.repl.switch(resume=arg, overrides={})

    def cmd_profile(self, arg: str) -> None:
        """/profile [NAME]: show the profile, or switch this session to another."""
        from rho_entry.config.prompts.facts import profile_facts

        if arg:
            from rho_entry.config.config_files import resolve_profile

            profile = resolve_profile(arg, config_dir=self.repl.launch.settings.config_dir)
            self.repl.switch(resume=self.repl.session.id, overrides={"profile": profile})
        agent = self.repl.session.agent
        facts = profile_facts(
            agent.profile, tools=agent.registry.names, databases=tuple(agent.config.databases)
        )
        self.repl.say(f"profile {facts['profile_name']}: {facts['profile_description']}", "bold")
        self.repl.say(facts["capabilities"])
        self.repl.say(f"tools: {facts['tools']}", "dim")

    cmd_mode = cmd_profile

    def cmd_clear(self, _: str) -> None:
        """/clear: start a new conversation (the current one stays saved)."""
        repl = self.repl
        repl.goodbye()
        repl.await_result(repl.session.close())
        launch = attrs.evolve(repl.launch, resume=None)
        repl.session = repl.await_result(
            open_session(launch, repl.store, repl.renderer, repl.approver)
        )
        sys.stderr.write("\x1b[2J\x1b[H" if repl.renderer.style.enabled else "")
        repl.say("new conversation", "dim")
