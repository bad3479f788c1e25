"""What a one-shot says when its run stopped short of an answer: waiting for an approval
nobody can give, stuck, out of turns or budget, cancelled, or failed; each with the command
that goes on from there (``rho-agent --resume ID ...``, its words quoted for a shell).
Imported only by a run that did not complete.
"""

from __future__ import annotations

from rho_domain.run import RunResult, RunStatus
from rho_entry.cli.render import TerminalRenderer
from rho_entry.cli.terminal_text import shell_word


def explain_stop(
    result: RunResult, renderer: TerminalRenderer, session_id: str, *, saved: bool
) -> None:
    """Say why the run of ``session_id`` stopped and the command that goes on from there:
    answering its pending calls, resuming it, or fixing the cause (``saved``: whether the
    session exists to resume). A completed run says nothing here."""
    status = result.status
    if status is RunStatus.AWAITING_APPROVAL:
        calls = "; ".join(
            f"{p.call.name} ({p.call.id}){f' in {p.working_dir}' if p.working_dir else ''}: "
            f"{p.reason}"
            for p in result.pending
        )
        named = " ".join(
            f"--approve {shell_word(f'{p.call.id}@{p.digest}')}" for p in result.pending
        )
        resume = f"rho-agent --resume {shell_word(session_id)}"
        renderer.notice(
            f"stopped: waiting for approval of {calls}. There is no terminal to ask: answer with "
            f"`{resume} {named}` (CALL@DIGEST: the approval holds for "
            f"that call only) or `--deny CALL|all [--reason TEXT]`, or run "
            f"`{resume}` on a terminal.",
            "yellow",
        )
    elif status is RunStatus.STUCK:
        renderer.notice(
            f"stopped: {result.error or 'stuck'}. Say what to do instead with "
            f'`rho-agent --resume {shell_word(session_id)} "..."`.',
            "yellow",
        )
    elif status in (RunStatus.MAX_TURNS, RunStatus.BUDGET_EXCEEDED):
        why = result.error or status.value.replace("_", " ")
        renderer.notice(
            f"stopped: {why}. Continue with `rho-agent --resume {shell_word(session_id)}`.",
            "yellow",
        )
    elif status is RunStatus.CANCELLED:
        renderer.notice(
            f"cancelled. Resume with `rho-agent --resume {shell_word(session_id)}`.", "yellow"
        )
    elif status is RunStatus.ERROR and not renderer.quiet:
        if result.error and result.error not in renderer.errors_shown:
            renderer.notice(f"failed: {result.error}", "red")
        if saved:
            renderer.notice(
                f"the session is saved: after fixing the cause, continue with "
                f"`rho-agent --resume {shell_word(session_id)}`.",
                "yellow",
            )
        else:  # the store failed before the session existed: there is nothing to resume
            renderer.notice("nothing was saved: the session could not be stored.", "yellow")
