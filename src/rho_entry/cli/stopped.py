"""What a one-shot says when its run stopped short of an answer: waiting for an approval
nobody can give, stuck, out of turns or budget, cancelled, or failed; each with the command
that goes on from there (``rho-agent --resume ID ...``, its words quoted for a shell).
Imported only by a run that did not complete (or stopped on a rejection).

The command carries the flags a resume is refused without (``resume_flags``): a session that
ran under ``--profile developer`` is refused as ``--resume ID --approve ...`` ('pass --profile
developer explicitly'), so the exit-4 line's command, pasted, failed with exit 1. So does the
command a failed run's error names: the store's, after a full disk, knows no profile
(``tell_stop``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import attrs

from rho_domain.permissions import PermissionProfile, builtin_as_made
from rho_domain.run import RunResult, RunStatus, spelled_whole
from rho_entry.cli.render import TerminalRenderer
from rho_entry.cli.terminal_text import shell_word

if TYPE_CHECKING:
    from rho_domain.messages import ToolResultMessage
    from rho_entry.cli.json_render import JsonRenderer
    from rho_entry.session import Session


def tell_stop(
    result: RunResult,
    renderer: TerminalRenderer | JsonRenderer,
    session: Session,
    *,
    code: int,
    rejected: ToolResultMessage | None,
) -> None:
    """Finish the output of a one-shot whose run did not complete (or stopped on the
    ``rejected`` call): the result (``--json``: with ``code``), then, on a terminal, why and
    the command that goes on. A ``rho-agent --resume ID`` the error names (the store's fix
    after a full disk: the adapter knows no profile) is given the flags it is refused
    without; before, ``--json``'s error named the bare command, which a session run under
    ``--profile developer`` refuses."""
    again = resume_flags(session.agent.profile, session.agent.config.backend)
    bare = f"`rho-agent --resume {spelled_whole(session.id)}`"
    if again and result.error is not None and bare in result.error:
        whole = f"`rho-agent --resume {shell_word(spelled_whole(session.id))}{again}`"
        result = attrs.evolve(result, error=result.error.replace(bare, whole))
    if not isinstance(renderer, TerminalRenderer):  # --json
        renderer.finish(result, exit_code=code)
        return
    renderer.finish(result)
    explain_stop(result, renderer, session.id, saved=session.journal.created, again=again)
    if rejected is not None:
        renderer.notice(
            f"stopped: you rejected {rejected.tool_name} ({rejected.call_id}); the model "
            f"has not answered since. Say what to do instead: `rho-agent --resume "
            f'{shell_word(session.id)}{again} "..."`.',
            "yellow",
        )


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
    resume = f"rho-agent --resume {shell_word(spelled_whole(session_id))}{again}"
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
