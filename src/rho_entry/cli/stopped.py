"""What a one-shot says when its run stopped short of an answer: waiting for an approval
nobody can give, stuck, out of turns or budget, cancelled, or failed; each with the command
that goes on from there (``rho-agent --resume ID ...``, its words quoted for a shell).
Imported only by a run that did not complete (or stopped on a rejection).

The command carries the flags a resume is refused without (``resume_flags``): a session that
ran under ``--profile developer`` is refused as ``--resume ID --approve ...`` ('pass --profile
developer explicitly'), so the exit-4 line's command, pasted, failed with exit 1.
"""

from __future__ import annotations

from rho_domain.permissions import PermissionProfile, builtin_as_made
from rho_domain.run import RunResult, RunStatus
from rho_entry.cli.render import TerminalRenderer
from rho_entry.cli.terminal_text import shell_word


def resume_flags(profile: PermissionProfile, backend: str) -> str:
    """The flags (each after a space) ``rho-agent --resume`` needs again for a session run
    under ``profile`` on ``backend``: a stored profile above readonly and a stored backend
    other than local are refused unless given (README: "A session directory is data")."""
    words = []
    if not (profile.name == "readonly" and builtin_as_made(profile)):
        words.append(f" --profile {shell_word(profile.name)}")
    if backend != "local":
        words.append(f" --backend {shell_word(backend)}")
    return "".join(words)


def explain_stop(
    result: RunResult,
    renderer: TerminalRenderer,
    session_id: str,
    *,
    saved: bool,
    again: str = "",
) -> None:
    """Say why the run of ``session_id`` stopped and the command that goes on from there:
    answering its pending calls, resuming it, or fixing the cause (``saved``: whether the
    session exists to resume; ``again``: ``resume_flags``). A completed run says nothing
    here."""
    status = result.status
    resume = f"rho-agent --resume {shell_word(session_id)}{again}"
    if status is RunStatus.AWAITING_APPROVAL:
        calls = "; ".join(
            f"{p.call.name} ({p.call.id}){f' in {p.working_dir}' if p.working_dir else ''}: "
            f"{p.reason}"
            for p in result.pending
        )
        named = " ".join(
            f"--approve {shell_word(f'{p.call.id}@{p.digest}')}" for p in result.pending
        )
        renderer.notice(
            f"stopped: waiting for approval of {calls}. There is no terminal to ask: answer with "
            f"`{resume} {named}` (CALL@DIGEST: the approval holds for "
            f"that call only) or `--deny CALL|all [--reason TEXT]`, or run "
            f"`{resume}` on a terminal.",
            "yellow",
        )
    elif status is RunStatus.STUCK:
        renderer.notice(
            f'stopped: {result.error or "stuck"}. Say what to do instead with `{resume} "..."`.',
            "yellow",
        )
    elif status in (RunStatus.MAX_TURNS, RunStatus.BUDGET_EXCEEDED):
        why = result.error or status.value.replace("_", " ")
        renderer.notice(
            f"stopped: {why}. Continue with `{resume}`.",
            "yellow",
        )
    elif status is RunStatus.CANCELLED:
        renderer.notice(f"cancelled. Resume with `{resume}`.", "yellow")
    elif status is RunStatus.ERROR and not renderer.quiet:
        if result.error and result.error not in renderer.errors_shown:
            renderer.notice(f"failed: {result.error}", "red")
        if saved:
            renderer.notice(
                f"the session is saved: after fixing the cause, continue with `{resume}`.",
                "yellow",
            )
        else:  # the store failed before the session existed: there is nothing to resume
            renderer.notice("nothing was saved: the session could not be stored.", "yellow")
