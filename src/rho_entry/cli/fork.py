"""``rho-agent fork ID [--at TURN] [-m MODEL] ["task"]``: a new session from a point in the past.

Without ``--at``, the session's turns are listed, numbered as ``--at`` counts them. With it, a
new session is stored whose history is turns 1..TURN of ID, with ID as its parent (``parent_id``
and the labels ``forked_from``, ``fork_at``); ID is read without its lock and never changed, so
a running session can be forked too. A turn inside a tool batch is refused with the batch's
boundaries (``rho_domain.fork``). With a task, it runs in the new session at once (as
``rho-agent --resume NEW [-m MODEL] [--profile P] [--base-url URL] [-s FILE] [-c FILE] [-y]
"task"``, so what the new session stored is checked as for any resume); without one, the new
id is printed with the command that continues it. Auto-approval is never copied into the fork.
``--store URL`` (or ``$RHO_AGENT_STORE``) reads and writes another store, such as a shared
PostgreSQL; the original is read through the store's ``SessionCatalog``. Exit codes: 0 ok, 1
usage or unknown session, else the run's.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import TypeVar

import attrs

from rho_domain import events as ev
from rho_domain.errors import RhoError
from rho_domain.fork import fork_labels, history_until, turns
from rho_domain.ports.store import SessionRecord
from rho_domain.run import new_id
from rho_domain.state import State
from rho_entry.cli.terminal_text import visible
from rho_entry.config.stores import StoreChoice, choose_store, store_setting
from rho_entry.usage import UsageParser, parsed

T = TypeVar("T")


def _parser() -> argparse.ArgumentParser:
    parser = UsageParser(
        prog="rho-agent fork",
        description="Start a new session from a turn of an existing one (the original is kept).",
    )
    parser.add_argument("id", help="the session: an id, a unique prefix, or latest")
    parser.add_argument("task", nargs="?", help="run this in the new session at once")
    parser.add_argument("--at", type=int, metavar="TURN", help="keep turns 1..TURN (omit: list)")
    parser.add_argument("-m", "--model", help="the model for the task (default: the original's)")
    parser.add_argument(
        "--profile",
        help="the profile for the task (default: readonly; the original's is not inherited "
        "when it grants more)",
    )
    parser.add_argument(
        "-y",
        "--auto-approve",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="run the task's tool calls without asking (never inherited from the original)",
    )
    # the endpoint is never inherited (a stored one is refused until given again), so the
    # task's run takes it as --resume does
    parser.add_argument("--base-url", help="the task's endpoint (as rho-agent --base-url)")
    parser.add_argument("--api-key-env", metavar="VAR", help="read the API key from VAR")
    parser.add_argument("--provider", help="kind of server (as rho-agent --provider)")
    # nor is a system prompt template or a configuration's databases: given again the same way
    parser.add_argument(
        "-s", "--system-prompt", metavar="FILE|TEXT", help="as rho-agent --system-prompt"
    )
    parser.add_argument("-c", "--config", metavar="FILE", help="as rho-agent --config")
    parser.add_argument("--store", metavar="URL", help="the session store (as rho-agent --store)")
    return parser


def main(argv: Sequence[str]) -> int:
    """Run ``rho-agent fork``; returns the exit code."""
    args = parsed(_parser(), argv, intermixed=True)
    if isinstance(args, int):
        return args
    try:
        if args.at is None:
            for line in asyncio.run(_closing(args.store, lambda c: _turns(c, args.id))):
                print(visible(line))  # the turns quote the model: never obeyed
            return 0
        forked = asyncio.run(_closing(args.store, lambda c: _fork(c, args.id, args.at)))
    except RhoError as exc:
        print(f"rho-agent fork: {visible(str(exc))}", file=sys.stderr)
        return 1
    if args.task is None:
        print(visible(f"forked: {forked} (turns 1-{args.at} of {args.id})", newlines=False))
        print(f'continue it with: rho-agent --resume {forked} "..."')
        return 0
    from rho_entry.cli.app import run_words

    flags = ["-m", args.model] if args.model else []
    flags += ["--store", args.store] if args.store else []
    flags += ["--profile", args.profile] if args.profile else []
    for flag, value in (
        ("--base-url", args.base_url),
        ("--api-key-env", args.api_key_env),
        ("--provider", args.provider),
        ("--system-prompt", args.system_prompt),
        ("--config", args.config),
    ):
        flags += [flag, value] if value else []
    if args.auto_approve is not None:
        flags.append("--auto-approve" if args.auto_approve else "--no-auto-approve")
    return run_words(["--resume", forked, *flags, args.task])


async def _closing(flag: str | None, work: Callable[[StoreChoice], Awaitable[T]]) -> T:
    """``work`` on the store ``flag`` names, opened and closed in this one loop: closed after
    it on every path (an error's; Ctrl+C's, which cancels the loop's task), so a PostgreSQL
    store's share of the process's pool is given back. The task run after a fork
    (``run_words``, on a loop of its own) opens a store of its own."""
    chosen = _chosen(flag)
    try:
        return await work(chosen)
    finally:
        await chosen.aclose()


async def _turns(chosen: StoreChoice, ref: str) -> list[str]:
    record, events = await chosen.catalog.recording(ref)
    messages = State.from_events(events).messages
    return turns(messages) or [f"session {record.id} has no history yet"]


async def _fork(chosen: StoreChoice, ref: str, at: int) -> str:
    """Store the fork of session ``ref`` at turn ``at``; its id."""
    parent, events = await chosen.catalog.recording(ref)
    history = history_until(State.from_events(events).messages, at)
    now = time.time()
    record = SessionRecord(
        id=new_id(),
        created_at=now,
        # auto-approval was the original's user's choice for its runs, not for the fork's
        config=attrs.evolve(parent.config, auto_approve=False),
        parent_id=parent.id,
        labels=fork_labels(parent.id, at, parent.labels),
    )
    store = chosen.store
    await store.create(record)
    try:
        await store.append(record.id, [ev.MessageAdded(at=now, message=m) for m in history])
    finally:
        await store.release(record.id)
    return record.id


def _chosen(flag: str | None) -> StoreChoice:
    from rho_entry.config.settings import environment

    env = environment()
    url, origin = store_setting(flag, env)
    return choose_store(url, env, origin=origin)
