"""The interactive REPL: the session's turns, approvals, leaving.

Ctrl+C during a turn cancels that turn only; the session stays usable. Ctrl+C twice at an
empty prompt, Ctrl+D, ``/exit`` or ``exit`` leave, printing the session id to resume. A line
ending in a backslash continues on the next line; a line of three double quotes opens a block
closed by another. SIGTERM, or the terminal hanging up (SIGHUP: the window closed, ssh
dropped), leaves too, with exit code 130: a turn that runs is cancelled and ends in the trace,
the history is saved and the session closed (both used to kill the REPL where it stood). The
slash commands are ``rho_entry.cli.repl_commands``'s, acting through ``ReplHost``'s members;
readline's history and the signals that end the REPL are ``repl_terminal``'s.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import sys
from collections.abc import Coroutine
from typing import TYPE_CHECKING, Any, TypeVar

import attrs

from rho_domain.errors import RhoError
from rho_domain.ports.store import SessionStore
from rho_domain.profile_grants import label
from rho_domain.run import RunResult
from rho_entry.cli import exit_codes
from rho_entry.cli.approval import TerminalApprover
from rho_entry.cli.interrupts import interruptible
from rho_entry.cli.launch import Launch
from rho_entry.cli.render import TerminalRenderer
from rho_entry.cli.repl_commands import SlashCommands
from rho_entry.cli.repl_terminal import Ended, leave_on_signals, save_history, setup_readline
from rho_entry.cli.running import make_renderer, open_session, result_code
from rho_entry.cli.terminal_text import as_run, shell_word
from rho_entry.config.settings import endpoint_label, environment

if TYPE_CHECKING:
    from rho_entry.facade import Session

T = TypeVar("T")


def run_repl(launch: Launch, store: SessionStore) -> int:
    """Run the interactive REPL for ``launch`` until the user leaves; returns the exit code."""
    history = setup_readline(launch.settings.config_dir / "history")
    loop = asyncio.new_event_loop()
    saved = leave_on_signals()
    try:
        try:
            repl = Repl(launch, store, loop)
        except Ended:  # while the session opens
            return exit_codes.cancelled()
        try:
            return repl.main()
        finally:
            for signum in saved:  # the close is short and must end: the lock, the meta
                signal.signal(signum, signal.SIG_IGN)
            with contextlib.suppress(Exception):
                loop.run_until_complete(repl.session.close())
    finally:
        loop.close()
        if history is not None:
            save_history(history)
        for signum, before in saved.items():
            signal.signal(signum, before)


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
        self.commands = SlashCommands(self)
        self.session: Session = self.await_result(
            open_session(self.launch, store, self.renderer, self.approver)
        )
        if self.session.agent.config.backend == "local" and self.launch.transfers is not None:
            # The workspace keeps the uploads; a later /new or /resume must not overwrite
            # what the agent changed since (a sandbox is new for each session: upload again).
            self.launch = attrs.evolve(
                self.launch, transfers=attrs.evolve(self.launch.transfers, uploads=())
            )

    def await_result(self, coro: Coroutine[Any, Any, T]) -> T:
        """Run ``coro`` on the REPL's event loop to its end."""
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
        try:
            self.answer_pending()
            self.read_and_run()
        except Ended:
            self.goodbye()
            return exit_codes.cancelled()
        self.goodbye()
        return 0

    def read_and_run(self) -> None:
        """Read lines and run them until the user leaves."""
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
                if not self.commands.command(stripped):
                    break
                continue
            try:
                self.turn(text)
            except KeyboardInterrupt:  # between turns' signal handlers: still only this turn
                self.say("turn interrupted; the session is still here.", "yellow")

    def answer_pending(self) -> None:
        """A resumed session's calls waiting for approval are shown and asked first, so a
        new line cannot discard them unseen."""
        waiting = self.session.state.awaiting_decision()
        if not waiting:
            return
        self.say(f"{len(waiting)} tool call(s) of this session wait for approval:", "yellow")
        reasons = self.session.state.approval_reasons
        for call in waiting:
            shown = f"{call.name} {as_run(call.arguments)}"
            self.say(f"  {call.id}  {shown}  ({reasons.get(call.id, '')})")
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
        """Run one prompt (None: continue pending approvals); Ctrl+C cancels only this turn,
        SIGTERM or SIGHUP cancels it and then leaves (``Ended``)."""
        ending = self.await_result(self._turn(prompt))
        if ending is not None:
            raise Ended(ending)

    async def _turn(self, prompt: str | None) -> signal.Signals | None:
        with interruptible(self.session, lambda text: self.say(text, "yellow")) as heard:
            result: RunResult | None
            try:
                result = await self.session.run(prompt)
            except asyncio.CancelledError:
                result = self.session.last_result
        if result is None:
            return heard.ending
        self.renderer.finish(result)
        status = result.status.value
        if status == "cancelled":
            if heard.ending is None:
                self.say("turn cancelled; the session is still here.", "yellow")
        elif status == "error":
            self.say(f"failed (exit code would be {result_code(result)}): {result.error}", "red")
        elif status != "completed":
            self.say(f"stopped: {result.error or status.replace('_', ' ')}", "yellow")
        return heard.ending

    def switch(self, *, resume: str, overrides: dict[str, Any]) -> None:
        """Reopen a session (this one with new settings, or another) through the store."""
        if not self.session.state.messages and resume == self.session.id:
            config = attrs.evolve(self.session.agent.config, **overrides)
            launch = attrs.evolve(
                self.launch, settings=attrs.evolve(self.launch.settings, config=config)
            )
            self.await_result(self.session.close())
            self.session = self.await_result(
                open_session(launch, self.store, self.renderer, self.approver)
            )
            return
        launch = attrs.evolve(
            self.launch, resume=resume, overrides={**self.launch.overrides, **overrides}
        )
        opening = open_session(launch, self.store, self.renderer, self.approver)
        if resume != self.session.id:
            new = self.await_result(opening)  # open first: a bad id leaves this session in place
            self.await_result(self.session.close())
            self.session = new
        else:
            self.await_result(self.session.close())  # release the lock before reopening it
            try:
                self.session = self.await_result(opening)
            except RhoError:
                back = attrs.evolve(self.launch, resume=self.session.id)
                self.session = self.await_result(
                    open_session(back, self.store, self.renderer, self.approver)
                )
                raise
        count = len(self.session.state.messages)
        self.say(f"session {self.session.id} ({count} messages)", "dim")
        self.answer_pending()

    def goodbye(self) -> None:
        """Say how to resume the session, if it has anything to resume."""
        if self.session.state.messages:
            from rho_entry.cli.stopped import resume_flags  # what --resume is refused without

            again = resume_flags(self.session.agent.profile, self.session.agent.config.backend)
            self.say(
                f"session {self.session.id} saved · resume with: rho-agent --resume "
                f"{shell_word(self.session.id)}{again}",
                "dim",
            )
