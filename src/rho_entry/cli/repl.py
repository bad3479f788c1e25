"""The interactive REPL: readline editing and history, slash commands, approvals.

Ctrl+C during a turn cancels that turn only; the session stays usable. Ctrl+C twice at an
empty prompt, Ctrl+D, ``/exit`` or ``exit`` leave, printing the session id to resume. A line
ending in a backslash continues on the next line; a line of three double quotes opens a block
closed by another.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
from collections.abc import Coroutine
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import attrs

from rho_domain.compaction import CompactResult
from rho_domain.errors import ModelError, RhoError
from rho_domain.ports.store import SessionStore
from rho_domain.profile_grants import label
from rho_domain.run import RunResult
from rho_entry.cli.approval import TerminalApprover
from rho_entry.cli.launch import Launch
from rho_entry.cli.render import TerminalRenderer
from rho_entry.cli.running import interruptible, make_renderer, open_session, result_code
from rho_entry.cli.sessions import format_sessions
from rho_entry.config.settings import endpoint_label, environment

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


def run_repl(launch: Launch, store: SessionStore) -> int:
    """Run the interactive REPL for ``launch`` until the user leaves; returns the exit code."""
    history = _setup_readline(launch.settings.config_dir / "history")
    loop = asyncio.new_event_loop()
    repl = Repl(launch, store, loop)
    try:
        return repl.main()
    finally:
        with contextlib.suppress(Exception):
            loop.run_until_complete(repl.session.close())
        loop.close()
        if history is not None:
            _save_history(history)


class Repl:
    """The REPL's state: one session at a time, its renderer and approver."""

    def __init__(
        self, launch: Launch, store: SessionStore, loop: asyncio.AbstractEventLoop
    ) -> None:
        self.loop, self.store = loop, store
        # Auto-approval lives in the approver, so that /approve off can take it back.
        auto = launch.settings.config.auto_approve
        config = attrs.evolve(launch.settings.config, auto_approve=False)
        self.launch = attrs.evolve(
            launch,
            settings=attrs.evolve(launch.settings, config=config),
            overrides={**launch.overrides, "auto_approve": False},
        )
        renderer = make_renderer(self.launch)
        assert isinstance(renderer, TerminalRenderer)  # --json is refused for the REPL
        self.renderer = renderer
        self.approver = TerminalApprover(renderer, style=renderer.style, auto=auto)
        self.session: Session = self._await(
            open_session(self.launch, store, self.renderer, self.approver)
        )
        if self.session.agent.config.backend == "local" and self.launch.transfers is not None:
            # The workspace keeps the uploads; a later /new or /resume must not overwrite
            # what the agent changed since (a sandbox is new for each session: upload again).
            self.launch = attrs.evolve(
                self.launch, transfers=attrs.evolve(self.launch.transfers, uploads=())
            )

    def _await(self, coro: Coroutine[Any, Any, T]) -> T:
        return self.loop.run_until_complete(coro)

    def main(self) -> int:
        """Read and run lines until the user leaves; returns the exit code."""
        config = self.session.agent.config
        resumed = "resumed " if self.launch.resume else ""
        self.say(
            f"rho-agent · {config.model} · {endpoint_label(config, environment())} · "
            f"profile {label(self.session.agent.profile)} · "
            f"{config.working_dir or '.'} · {resumed}session {self.session.id}",
            "bold",
        )
        self.say("/help for commands · Ctrl+C cancels a turn · Ctrl+D exits", "dim")
        self.answer_pending()
        interrupted = False
        while True:
            try:
                text = self.read_input()
            except EOFError:
                sys.stderr.write("\n")
                break
            except KeyboardInterrupt:
                if interrupted:
                    break
                interrupted = True
                try:  # a second Ctrl+C may land while this is printed, outside input()
                    sys.stderr.write("\n")
                    self.say("(Ctrl+C again or Ctrl+D to exit)", "dim")
                except KeyboardInterrupt:
                    break
                continue
            interrupted = False
            stripped = text.strip()
            if not stripped:
                continue
            if stripped.lower() in ("exit", "quit"):
                break
            if stripped.startswith("/"):
                if not self.command(stripped):
                    break
                continue
            try:
                self.turn(text)
            except KeyboardInterrupt:  # between turns' signal handlers: still only this turn
                self.say("turn interrupted; the session is still here.", "yellow")
        self.goodbye()
        return 0

    def answer_pending(self) -> None:
        """A resumed session's calls waiting for approval are shown and asked first, so a
        new line cannot discard them unseen."""
        waiting = self.session.state.awaiting_decision()
        if not waiting:
            return
        self.say(f"{len(waiting)} tool call(s) of this session wait for approval:", "yellow")
        reasons = self.session.state.approval_reasons
        for call in waiting:
            self.say(f"  {call.id}  {call.name} {call.arguments}  ({reasons.get(call.id, '')})")
        try:
            self.turn(None)
        except KeyboardInterrupt:
            self.say("turn interrupted; the session is still here.", "yellow")

    def say(self, text: str, *styles: str) -> None:
        """Print a notice (stderr) with optional styles."""
        self.renderer.notice(text, *styles)

    def read_input(self) -> str:
        """Read one input: a line, lines ending in a backslash, or a triple-quoted block."""
        line = input("> ")
        if line.strip() == '"""':
            lines = []
            while (more := input(". ")).strip() != '"""':
                lines.append(more)
            return "\n".join(lines)
        lines = []
        while line.endswith("\\"):
            lines.append(line[:-1])
            line = input(". ")
        lines.append(line)
        return "\n".join(lines)

    def turn(self, prompt: str | None) -> None:
        """Run one prompt (None: continue pending approvals); Ctrl+C cancels only this turn."""
        self._await(self._turn(prompt))

    async def _turn(self, prompt: str | None) -> None:
        with interruptible(self.session, lambda text: self.say(text, "yellow")):
            result: RunResult | None
            try:
                result = await self.session.run(prompt)
            except asyncio.CancelledError:
                result = self.session.last_result
        if result is None:
            return
        self.renderer.finish(result)
        status = result.status.value
        if status == "cancelled":
            self.say("turn cancelled; the session is still here.", "yellow")
        elif status == "error":
            self.say(f"failed (exit code would be {result_code(result)}): {result.error}", "red")
        elif status != "completed":
            self.say(f"stopped: {result.error or status.replace('_', ' ')}", "yellow")

    # ------------------------------------------------------------------ slash commands

    def command(self, line: str) -> bool:
        """Run a slash command; False means leave the REPL."""
        name, _, rest = line.partition(" ")
        rest = rest.strip()
        handler = getattr(self, f"cmd_{name[1:].lower()}", None)
        if name in ("/exit", "/quit"):
            return False
        if handler is None:
            self.say(f"unknown command {name}; /help lists the commands", "red")
            return True
        try:
            handler(rest)
        except (RhoError, ModelError) as exc:
            self.say(f"{name}: {exc}", "red")
        return True

    def cmd_help(self, _: str) -> None:
        """/help: list the commands."""
        self.say(HELP)

    def cmd_approve(self, arg: str) -> None:
        """/approve [on|off]: approve tool calls without asking, or ask again."""
        if arg not in ("", "on", "off"):
            self.say("usage: /approve [on|off]", "red")
            return
        self.approver.auto = arg != "off"
        state = "on: tool calls run without asking" if self.approver.auto else "off: I will ask"
        self.say(f"auto-approve {state}", "yellow")

    def cmd_compact(self, arg: str) -> None:
        """/compact [instructions]: summarise older history now."""

        async def compact() -> CompactResult:
            with interruptible(self.session, lambda text: self.say(text, "yellow")):
                return await self.session.compact(arg)

        try:
            result = self._await(compact())
        except asyncio.CancelledError:
            self.say("compaction cancelled; history unchanged", "yellow")
            return
        if not result.summary:
            self.say(result.note or "nothing to compact yet", "dim")

    def cmd_usage(self, _: str) -> None:
        """/usage: context estimate, tokens and cost of this session."""
        state, agent = self.session.state, self.session.agent
        usage = state.usage
        cost = f" · ${usage.cost_usd:.4f}" if usage.cost_usd else ""
        self.say(
            f"context ~{state.estimated_context_tokens(agent.system_prompt):,} tokens of "
            f"{agent.config.context_window:,} · session in {usage.input_tokens:,} / out "
            f"{usage.output_tokens:,}{cost} · {len(state.messages)} messages"
        )

    def cmd_sessions(self, _: str) -> None:
        """/sessions: saved sessions, newest first."""
        lines = format_sessions(self._await(self.store.list(limit=20)))
        self.say("\n".join(lines) if lines else "no saved sessions")

    def cmd_resume(self, arg: str) -> None:
        """/resume ID: switch to a saved session."""
        if not arg:
            self.cmd_sessions("")
            self.say("/resume ID (a prefix or `latest` works too)", "dim")
            return
        self._switch(resume=arg, overrides={})

    def cmd_profile(self, arg: str) -> None:
        """/profile [NAME]: show the profile, or switch this session to another."""
        from rho_entry.config.prompts.facts import profile_facts

        if arg:
            from rho_entry.config.config_files import resolve_profile

            profile = resolve_profile(arg, config_dir=self.launch.settings.config_dir)
            self._switch(resume=self.session.id, overrides={"profile": profile})
        agent = self.session.agent
        facts = profile_facts(
            agent.profile, tools=agent.registry.names, databases=tuple(agent.config.databases)
        )
        self.say(f"profile {facts['profile_name']}: {facts['profile_description']}", "bold")
        self.say(facts["capabilities"])
        self.say(f"tools: {facts['tools']}", "dim")

    cmd_mode = cmd_profile

    def cmd_clear(self, _: str) -> None:
        """/clear: start a new conversation (the current one stays saved)."""
        self.goodbye()
        self._await(self.session.close())
        launch = attrs.evolve(self.launch, resume=None)
        self.session = self._await(open_session(launch, self.store, self.renderer, self.approver))
        sys.stderr.write("\x1b[2J\x1b[H" if self.renderer.style.enabled else "")
        self.say("new conversation", "dim")

    def _switch(self, *, resume: str, overrides: dict[str, Any]) -> None:
        """Reopen a session (this one with new settings, or another) through the store."""
        if not self.session.state.messages and resume == self.session.id:
            config = attrs.evolve(self.session.agent.config, **overrides)
            launch = attrs.evolve(
                self.launch, settings=attrs.evolve(self.launch.settings, config=config)
            )
            self._await(self.session.close())
            self.session = self._await(
                open_session(launch, self.store, self.renderer, self.approver)
            )
            return
        launch = attrs.evolve(
            self.launch, resume=resume, overrides={**self.launch.overrides, **overrides}
        )
        opening = open_session(launch, self.store, self.renderer, self.approver)
        if resume != self.session.id:
            new = self._await(opening)  # open first: a bad id leaves this session in place
            self._await(self.session.close())
            self.session = new
        else:
            self._await(self.session.close())  # release the lock before reopening it
            try:
                self.session = self._await(opening)
            except RhoError:
                back = attrs.evolve(self.launch, resume=self.session.id)
                self.session = self._await(
                    open_session(back, self.store, self.renderer, self.approver)
                )
                raise
        count = len(self.session.state.messages)
        self.say(f"session {self.session.id} ({count} messages)", "dim")
        self.answer_pending()

    def goodbye(self) -> None:
        """Say how to resume the session, if it has anything to resume."""
        if self.session.state.messages:
            self.say(
                f"session {self.session.id} saved · resume with: rho-agent --resume "
                f"{self.session.id}",
                "dim",
            )


def _setup_readline(path: Path) -> Any:
    try:
        import readline
    except ImportError:  # not on every platform: plain input() still works
        return None
    readline.set_history_length(2000)
    with contextlib.suppress(OSError):
        readline.read_history_file(path)
    return (readline, path)


def _save_history(history: Any) -> None:
    readline, path = history
    with contextlib.suppress(OSError):
        path.parent.mkdir(parents=True, exist_ok=True)
        readline.write_history_file(path)
