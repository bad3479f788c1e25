"""Approval at the terminal: ``[y]es / [N]o / [a]lways for this tool``, default no.

What is approved is what runs: the prompt shows the call's full arguments (a bash command
verbatim and whole, however long; each further line of a multi-line command marked ``>``),
with every control or invisible character shown as an escape (``terminal_text.visible``), so a
command cannot redraw the prompt to hide part of itself.

The answer is read from stdin without blocking the event loop (``loop.add_reader``), so Ctrl+C
at the prompt is delivered at once: the session's cancellation cancels ``decide`` and the turn
ends. End of input counts as no, as the Approver contract requires.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from typing import Protocol

from rho_domain.ports.approver import ApprovalAnswer, ApprovalRequest, Approver
from rho_entry.cli.render import Style, signature
from rho_entry.cli.terminal_text import hidden_count, visible

YES = frozenset({"y", "yes"})
NO = frozenset({"", "n", "no"})
ALWAYS = frozenset({"a", "always"})


class _Notices(Protocol):
    def notice(self, text: str, *styles: str) -> None: ...


class TerminalApprover(Approver):
    """Asks on the terminal. With ``auto`` on (``-y``, ``/approve on``) it approves without
    asking, and says so."""

    def __init__(
        self, notices: _Notices, *, style: Style, auto: bool = False, fd: int | None = None
    ) -> None:
        self.notices, self.style, self.auto = notices, style, auto
        self.fd = sys.stdin.fileno() if fd is None else fd

    async def decide(self, request: ApprovalRequest) -> ApprovalAnswer:
        """See ``Approver.decide``."""
        call = request.call
        if self.auto:
            self.notices.notice(visible(f"✓ auto-approved: {signature(call)}"), "dim")
            return ApprovalAnswer(approved=True)
        self.notices.notice(
            visible(f"? approve {call.name}: {request.reason}", newlines=False), "yellow", "bold"
        )
        for line in prompt_lines(request):
            self.notices.notice(line)
        while True:
            sys.stderr.write(
                self.style("  [y]es / [N]o / [a]lways for this tool: ", "yellow", "bold")
            )
            sys.stderr.flush()
            answer = await read_line(self.fd)
            if answer is None:  # end of input: nobody can approve
                sys.stderr.write("\n")
                return ApprovalAnswer(approved=False, note="end of input")
            choice = answer.strip().lower()
            if choice in YES:
                return ApprovalAnswer(approved=True)
            if choice in ALWAYS:
                self.notices.notice(always_said(call.name), "dim")
                return ApprovalAnswer(approved=True, always=True)
            if choice in NO:
                return ApprovalAnswer(approved=False)
            self.notices.notice("  answer y, n (the default) or a")


def always_said(tool: str) -> str:
    """What "always" allows, said when it is answered: not every later call (a destructive
    one, or one that may run a file the session wrote, asks again: ``approval.decide``,
    ``shell.destructive_session``), and only in this process (never inherited by ``--resume``).
    It said 'approved for the rest of this session', and the next ``make`` asked."""
    return (
        f"  {tool} approved while this process runs; a call that could destroy something, "
        "or run a file this session wrote, still asks"
    )


def prompt_lines(request: ApprovalRequest) -> list[str]:
    """The arguments as the prompt shows them, in full and escaped (see the module docstring):
    a bash command as ``$ command`` (continuation lines ``> ...``), anything else as indented
    JSON; then how many characters were shown as escapes, if any were."""
    text = _arguments(request)
    lines = [f"    {line}" for line in visible(text).split("\n")]
    if hidden := hidden_count(text):
        lines.append(
            f"    ({hidden} control or invisible character{'s' if hidden != 1 else ''} "
            "shown as escapes such as \\x1b or \\u202e: the terminal would have obeyed them)"
        )
    return lines


def _arguments(request: ApprovalRequest) -> str:
    """The full arguments: a bash command verbatim, anything else as indented JSON."""
    arguments = dict(request.arguments)
    command = arguments.get("command")
    if request.call.name == "bash" and isinstance(command, str):
        extra = {k: v for k, v in arguments.items() if k != "command"}
        text = "$ " + command.replace("\n", "\n> ")
        return text + (f"\n{json.dumps(extra)}" if extra else "")
    if not arguments:
        return request.call.arguments or "{}"
    return json.dumps(arguments, indent=2, ensure_ascii=False)


async def read_line(fd: int) -> str | None:
    """One line from ``fd`` without blocking the loop; None at end of input.

    On a terminal in canonical mode the fd is readable only once Enter is pressed. Reads
    stop at the newline, so nothing typed after it is swallowed.
    """
    loop = asyncio.get_running_loop()
    done: asyncio.Future[str | None] = loop.create_future()
    buffer = bytearray()

    def readable() -> None:
        try:
            byte = os.read(fd, 1)  # one byte at a time: never consume the next line
        except BlockingIOError:
            return
        except OSError:
            byte = b""
        if not byte:
            if not done.done():
                done.set_result(buffer.decode(errors="replace") if buffer else None)
            return
        if byte == b"\n":
            if not done.done():
                done.set_result(buffer.decode(errors="replace"))
            return
        buffer.extend(byte)

    loop.add_reader(fd, readable)
    try:
        return await done
    finally:
        loop.remove_reader(fd)
