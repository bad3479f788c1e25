"""``rho-agent queue``: durable runs from the command line, on any host.

    rho-agent queue enqueue PROMPT [--session ID]      prints the run id
    rho-agent queue status RUN                         queued, running, awaiting_approval...
    rho-agent queue wait RUN [--timeout S]             exits 0 once it settles
    rho-agent queue approve RUN CALL@DIGEST|all [--always]  prints the continuing run's id
    rho-agent queue deny RUN CALL|all [--reason TEXT]
    rho-agent queue cancel RUN                         cancelled RUN' / cancel requested RUN'

Every command takes ``--durable-db URL`` (a SQLite path or a PostgreSQL URL) and ``--queue
NAME``; ``approve`` and ``deny all`` read the waiting calls from ``--store`` (a directory
or a ``postgresql://`` URL, as the workers'; default: ``$RHO_AGENT_STORE``, else the CLI's
sessions directory). An approval names its call with the digest it was shown
(``CALL@DIGEST``, ``rho_domain.call_digest``): a call changed since is refused, here and by
the worker, and a CALL without one is refused with the call as it waits now and its digest.
``all`` approves whatever waits when this command reads it, unseen, as ``-y``. ``--always``:
the tools of the approved calls run without asking for the rest of the run, in every
continuation of it (``RunQueue.answer``). ``cancel`` stops the run's session's run on the
queue (RUN, or the continuation an answer queued, RUN'): one no worker took never runs; one a
worker took ends ``cancelled`` (the queue records it, and the session's stop signal is asked
for through ``--store``). Workers (``rho-agent worker``) run what is enqueued.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from typing import TYPE_CHECKING

from rho_domain.errors import RhoError
from rho_domain.messages import ToolCall
from rho_entry.cli import exit_codes
from rho_entry.cli.answers import split_call_ref
from rho_entry.cli.terminal_text import shell_word, visible
from rho_entry.usage import UsageParser

if TYPE_CHECKING:
    from rho_adapters.durable.run_queue import DbosRunQueue
    from rho_domain.state import State
    from rho_entry.config.store_faces import Operator


def build_parser() -> argparse.ArgumentParser:
    """The queue commands and their flags."""
    parser = UsageParser(prog="rho-agent queue", description="Durable runs.")
    parser.add_argument("--durable-db", required=True, metavar="URL", help="SQLite path or URL")
    parser.add_argument("--queue", default="rho-runs", help="the queue (default rho-runs)")
    parser.add_argument(
        "--store",
        metavar="URL",
        help="the shared session store (for `all` and `cancel`; as rho-agent --store)",
    )
    commands = parser.add_subparsers(dest="command", required=True)
    enqueue = commands.add_parser("enqueue", help="put a prompt on the queue")
    enqueue.add_argument("prompt")
    enqueue.add_argument("--session", help="continue this session (default: a new one)")
    shown = {"status": "print a run's status", "wait": "wait for a run to settle, print its status"}
    for name, text in shown.items():
        command = commands.add_parser(name, help=text, description=text)
        command.add_argument("run", help="the run's id (the first word enqueue printed)")
        command.add_argument(
            "--timeout", type=float, default=600.0, metavar="S", help="longest wait (600 s)"
        )
    cancel = commands.add_parser(
        "cancel", help="cancel a run queued or running", description="cancel a run"
    )
    cancel.add_argument("run", help="the run's id (or an earlier run of its session)")
    for name in ("approve", "deny"):
        command = commands.add_parser(name, help=f"{name} a waiting call (or all)")
        command.add_argument("run")
        command.add_argument(
            "calls",
            nargs="+",
            metavar="CALL@DIGEST|all" if name == "approve" else "CALL|all",
            help="a call as shown with its digest (rho_domain.call_digest), or all"
            if name == "approve"
            else "a waiting call's id, or all",
        )
        if name == "approve":
            command.add_argument(
                "--always",
                action="store_true",
                help="the approved calls' tools run without asking for the rest of the run",
            )
        else:
            command.add_argument("--reason", default="", help="why the calls are rejected")
    return parser


def main(argv: list[str]) -> int:
    """Run one queue command; the exit code."""
    args = build_parser().parse_args(argv)
    try:
        return asyncio.run(_command(args))
    except (RhoError, TimeoutError) as exc:
        sys.stderr.write(f"rho-agent queue: {visible(str(exc))}\n")  # quotes traces
        return exit_codes.USAGE


async def _command(args: argparse.Namespace) -> int:
    from rho_entry.durable.queueing import enqueue_prompt, open_queue

    queue = open_queue(args.durable_db, queue=args.queue)
    try:
        if args.command == "enqueue":
            run = await enqueue_prompt(queue, args.prompt, session_id=args.session)
            print(f"{run.run_id} {run.session_id}")
        elif args.command == "status":
            print(visible(await queue.status(args.run) or "unknown"))  # the queue is data
        elif args.command == "wait":
            print(visible(await queue.wait(args.run, args.timeout)))
        elif args.command == "cancel":
            print(await _cancel(queue, args.run, args.store))
        else:
            print(await _answer(queue, args))
    finally:
        queue.close()
    return exit_codes.OK


async def _answer(queue: DbosRunQueue, args: argparse.Namespace) -> str:
    """Answer the calls named (``all``: every call the run's session waits for); the id of
    the continuing run. An approval names its call with the digest it was shown
    (``CALL@DIGEST``), checked here against the trace and again by the worker; ``all``
    approves whatever waits now, as read here (as ``-y`` does)."""
    approved = args.command == "approve"
    always = approved and args.always
    refs = [c for c in args.calls if c != "all"]
    held: dict[str, ToolCall] = {}
    state = None
    if approved or len(refs) < len(args.calls) or any("@" in ref for ref in refs):
        state = await _waiting(queue, args.run, args.store)
        held = {c.id: c for c in state.awaiting_decision()}
    given = dict(split_call_ref(ref, held) for ref in refs)
    calls = list(held) if "all" in args.calls else list(given)
    if approved and (unknown := [c for c in calls if c not in held]):
        waiting = ", ".join(f"{c} ({t.name})" for c, t in held.items()) or "nothing"
        raise RhoError(
            f"run {args.run} does not wait for {', '.join(unknown)} (it waits for: {waiting})"
        )
    digests: dict[str, str] = {}
    if approved and state is not None:
        for call_id in calls:
            call = held[call_id]
            digests[call_id] = state.approval_digest(call)
            if call_id in given and not given[call_id]:
                shown = visible(state.shown_call(call), newlines=False)
                raise RhoError(
                    f"approve {call_id}: name the call with the digest you were shown, so the "
                    f"approval holds for that call only; it waits now as {shown}: "
                    f"rho-agent queue ... approve {shell_word(args.run)} "
                    f"{shell_word(f'{call_id}@{digests[call_id]}')}"
                )
            if call_id in given:
                state.check_digest(call, given[call_id])
    reasons = {} if approved else dict.fromkeys(calls, args.reason)
    return await queue.answer(
        args.run,
        dict.fromkeys(calls, approved),
        reasons=reasons,
        always=sorted({held[c].name for c in calls}) if always else (),
        digests=digests,
    )


async def _cancel(queue: DbosRunQueue, run_id: str, store: str | None) -> str:
    """Cancel the run of ``run_id``'s session on the queue: ``cancelled RUN'`` (it never
    runs) or ``cancel requested RUN'`` (a worker took it; it ends cancelled)."""
    from rho_entry.durable.queueing import cancel_session_run

    session_id = await queue.session_of(run_id)
    if session_id is None:
        raise RhoError(f"no durable run {run_id} in this queue")
    operator = _operator(store)
    try:
        cancelled = await cancel_session_run(queue, session_id, control=operator.sessions)
    finally:
        await operator.aclose()  # a PostgreSQL catalog's share of the pool
    return f"{'cancel requested' if cancelled.taken else 'cancelled'} {cancelled.run_id}"


async def _waiting(queue: DbosRunQueue, run_id: str, store: str | None) -> State:
    """The run's session as its trace has it (the calls it waits for, their digests)."""
    from rho_domain.state import State

    session_id = await queue.session_of(run_id)
    if session_id is None:
        raise RhoError(f"no durable run {run_id} in this queue")
    operator = _operator(store)
    try:
        _, events = await operator.sessions.recording(session_id)
    finally:
        await operator.aclose()  # a PostgreSQL catalog's share of the pool
    return State.from_events(events)


def _operator(store: str | None) -> Operator:
    """The shared session store's catalog and control (``--store``, else as the CLI's)."""
    from rho_entry.config.settings import environment
    from rho_entry.config.stores import choose_operator, store_setting

    env = environment()
    where, origin = store_setting(store, env)
    return choose_operator(where, env, origin=origin)
