"""Answering pending approvals from the command line: ``--approve CALL@DIGEST|all
[--always]``, ``--deny CALL|all [--reason TEXT]`` with ``--resume ID``, and ``--resume ID -y``
without a terminal. ``--always``: the approved calls' tools run without asking for the rest of
the run, as the terminal's "always" answer (and a durable run's, ``rho-agent queue approve
--always``).

A CALL is a tool call's id, or a unique prefix of one; ``all`` is every call still waiting.
An approval names its call with the digest it was shown with (``rho_domain.call_digest``, in
the exit-4 message, ``--json``'s ``pending``, a server's ``pending_approvals``): the call is
read from the session's trace, which whoever can write the session directory could have
changed since it was shown, so a call held now with another digest is refused
(``CallChanged``), nothing answered. A CALL without a digest is refused with the call as it
waits now and its digest, to read and answer. ``all`` approves whatever waits when this
process reads it, unseen, as ``-y`` does. A denial needs no digest (it runs nothing; one given
is checked).
The answers are recorded in the session (``Session.resolve_approval``) and the run continues
at once, in this process, as a one-shot run; calls left unanswered are asked on a terminal,
or stop the run again with exit code 4.
"""

from __future__ import annotations

import argparse
from collections.abc import Collection, Sequence
from typing import TYPE_CHECKING

import attrs

from rho_domain.errors import ConfigError
from rho_domain.messages import ToolCall
from rho_domain.run import spelled_whole
from rho_domain.value_methods import value_eq, value_hash, value_repr
from rho_entry.cli.terminal_text import as_run, shell_word, visible
from rho_entry.runtime.handle_values import nothing_to_continue

if TYPE_CHECKING:
    from rho_entry.facade import Session

ALL = "all"


@attrs.frozen(kw_only=True)
class Answers:
    """What the flags answer: call references to approve and to deny, and the reason."""

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    approve: tuple[str, ...] = ()
    deny: tuple[str, ...] = ()
    reason: str = ""
    always: bool = False  # the approved calls' tools, for the rest of the run

    @property
    def given(self) -> bool:
        """True when at least one call is answered."""
        return bool(self.approve or self.deny)


def answers_from_args(args: argparse.Namespace) -> Answers:
    """The answers of the flags; ConfigError when they are used without ``--resume``."""
    answers = Answers(
        approve=tuple(getattr(args, "approve", None) or ()),
        deny=tuple(getattr(args, "deny", None) or ()),
        reason=getattr(args, "reason", None) or "",
        always=bool(getattr(args, "always", False)),
    )
    for flag, refs in (("--approve", answers.approve), ("--deny", answers.deny)):
        if any(not ref.strip() for ref in refs):
            # a blank CALL (``--deny "$CALL"``, CALL unset) was a prefix of every id: the one
            # call waiting was answered without being named
            raise ConfigError(
                f"{flag} '': names no call; give a CALL as listed by --resume ID, or all"
            )
    if answers.always and not answers.approve:
        raise ConfigError("--always goes with --approve: it allows the approved calls' tools")
    if answers.reason and not answers.deny:
        raise ConfigError("--reason goes with --deny: it tells the model why a call was rejected")
    if answers.given and not getattr(args, "resume", None):
        raise ConfigError("--approve and --deny answer a saved session: add --resume ID")
    return answers


def apply_answers(session: Session, answers: Answers, *, auto_approve: bool) -> None:
    """Record ``answers`` in ``session`` before it continues without a new prompt.

    With nothing waiting and no answer given, a conversation the model has not answered (a
    tool's result last: the run failed before its model call) continues as it is.

    Raises ConfigError when nothing waits for approval and the model has answered (there is
    nothing to continue) or answers were given, when a CALL matches no waiting call (the
    waiting ones are listed), or when one call is both approved and denied.
    """
    waiting = session.state.awaiting_decision()
    if not waiting and not answers.given and not nothing_to_continue(session.state):
        return
    if not waiting:
        raise ConfigError(
            f"session {session.id} has no tool call waiting for approval; "
            f'give a task to continue it: {_resume(session)} "..."'
        )
    approved = _select(waiting, answers.approve, "--approve")
    denied = _select(waiting, answers.deny, "--deny")
    if both := [c.id for c, _ in approved if c in {d for d, _ in denied}]:
        raise ConfigError(f"{', '.join(both)}: both approved and denied; choose one")
    for call, digest in approved:  # every one checked before any is answered
        if digest == "":
            raise ConfigError(_name_it(session, call))
        if digest is not None:
            # of the call run where this session runs it, not where it was asked about
            session.state.check_digest(call, digest, place=session.executor.working_dir)
    for call, digest in approved:
        session.resolve_approval(call.id, True, always=answers.always, digest=digest)
    for call, digest in denied:
        session.resolve_approval(call.id, False, reason=answers.reason, digest=digest or None)
    if not answers.given and not auto_approve:
        raise ConfigError(describe_waiting(session))


def describe_waiting(session: Session) -> str:
    """What waits, and the commands that answer it."""
    lines = [f"session {session.id} waits for approval of:"]
    reasons = session.state.approval_reasons
    waiting = session.state.awaiting_decision()
    lines += [
        visible(
            f"  {shell_word(f'{c.id}@{session.state.approval_digest(c)}')}  "
            f"{c.name} {as_run(c.arguments)}{_where(session, c)}: "
            f"{reasons.get(c.id, 'waiting')}",
            newlines=False,
        )
        for c in waiting
    ]
    lines.append(
        f"answer with: {_resume(session)} --approve CALL@DIGEST|all "
        "[--always] "
        "(CALL@DIGEST as listed: the approval holds for that call only), "
        "or --deny CALL|all [--reason TEXT]"
    )
    return "\n".join(lines)


def _resume(session: Session) -> str:
    """``rho-agent --resume ID`` with the flags it is refused without (``resume_flags``)."""
    from rho_entry.cli.stopped import resume_flags

    again = resume_flags(session.agent.profile, session.agent.config.backend)
    return f"rho-agent --resume {shell_word(spelled_whole(session.id))}{again}"


def _where(session: Session, call: ToolCall) -> str:
    """`` in DIR``: where ``call`` was asked about to run (its digest covers it), or ""."""
    place = session.state.asked_places.get(call.id, "")
    return f" in {place}" if place else ""


def split_call_ref(ref: str, ids: Collection[str] = ()) -> tuple[str, str]:
    """A ``CALL@DIGEST`` reference as its call and its digest ("" for none). A call id may
    hold an ``@`` (a server writes its own ids) and a digest never does, so the split is at
    the last ``@``; a reference that is the whole id of a call in ``ids`` names no digest."""
    if ref in ids:
        return ref, ""
    name, at, digest = ref.rpartition("@")
    return (name, digest) if at else (ref, "")


def _name_it(session: Session, call: ToolCall) -> str:
    """The refusal of an approval that names no digest: the call as it waits now."""
    digest = session.state.approval_digest(call)
    shown = visible(session.state.shown_call(call), newlines=False)
    return (
        f"--approve {call.id}: name the call with the digest you were shown, so that the "
        f"approval holds for that call only; it waits now as {shown}: "
        f"{_resume(session)} --approve {shell_word(f'{call.id}@{digest}')}"
    )


def _select(
    waiting: Sequence[ToolCall], refs: Sequence[str], flag: str
) -> list[tuple[ToolCall, str | None]]:
    """The calls ``refs`` name, each with the digest given after ``@`` ("" for none; None
    for ``all``, which names no call)."""
    chosen: list[tuple[ToolCall, str | None]] = []
    ids = {c.id for c in waiting}
    for ref in refs:
        name, digest = split_call_ref(ref, ids)
        if ref == ALL:
            matches = list(waiting)
        else:
            matches = [c for c in waiting if c.id == name] or [
                c for c in waiting if c.id.startswith(name)
            ]
        if len(matches) != 1 and ref != ALL:
            known = ", ".join(f"{c.id} ({c.name})" for c in waiting)
            what = "matches several" if matches else "matches no"
            raise ConfigError(f"{flag} {ref}: {what} call waiting for approval (waiting: {known})")
        given = None if ref == ALL else digest
        chosen += [(c, given) for c in matches if c not in {d for d, _ in chosen}]
    return chosen
