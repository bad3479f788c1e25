"""``rho-agent --server URL "task"``: drive an agent that runs in ``rho-agent serve``.

The task runs on the server (its tools act on the server's machine, under the profile the
server allows); this terminal shows the same progress as a local run, from the event stream,
and answers approvals: on a terminal it asks ``[y]es / [N]o / [a]lways``; otherwise it stops
with exit code 4 and says how to answer. ``--resume ID`` continues a session on the server
(with a task: the next message; without: its pending approvals). ``--list`` lists the
server's sessions. The server's token is ``RHO_AGENT_SERVER_TOKEN``, else the file
``rho-agent serve`` wrote for that URL in the config directory (``token_file``). Exit codes
are those of a local run.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Mapping
from typing import Any

from rho_adapters.codec import event_from_dict
from rho_domain.errors import RhoError
from rho_entry.cli import exit_codes
from rho_entry.cli.render import TerminalRenderer
from rho_entry.terminal_text import visible


def run_remote(args: argparse.Namespace, env: Mapping[str, str]) -> int:
    """Run the invocation against ``args.server``; returns the exit code."""
    try:
        return asyncio.run(_run(args, env))
    except RhoError as exc:
        sys.stderr.write(visible(f"rho-agent: {args.server}: {exc}") + "\n")
        return exit_codes.USAGE
    except OSError as exc:  # httpx's connection errors are OSErrors' cousins; name the URL
        sys.stderr.write(visible(f"rho-agent: cannot reach {args.server}: {exc}") + "\n")
        return exit_codes.USAGE


async def _run(args: argparse.Namespace, env: Mapping[str, str]) -> int:
    import httpx

    from rho_entry.client import AgentClient

    client = AgentClient(args.server, environ=env)  # the token: variable, else its file
    try:
        if args.list:
            for row in await client.list_sessions():
                line = f"{row['id']:<14} {row['status']:<18} {row['liveness']:<10} "
                # every field is the server's (and its session directories'): escaped
                sys.stdout.write(visible(line + row["first_prompt"], newlines=False) + "\n")
            return exit_codes.OK
        session_id, after = await _start(client, args)
        return await _follow(client, session_id, after, args)
    except httpx.TransportError as exc:
        sys.stderr.write(visible(f"rho-agent: cannot reach {args.server}: {exc}") + "\n")
        return exit_codes.USAGE
    finally:
        await client.aclose()


async def _start(client: Any, args: argparse.Namespace) -> tuple[str, int]:
    """Create or continue the session; returns its id and where its new events begin."""
    task = args.task if args.task is not None else _stdin_task()
    if args.resume:
        detail = await client.get_session(args.resume)
        if task is not None:
            await client.chat(args.resume, task)
        return args.resume, int(detail["last_seq"])
    if task is None:
        raise RhoError('give a task: rho-agent --server URL "task"')
    fields = {"prompt": task}
    for name in ("model", "profile", "working_dir", "max_turns"):
        value = getattr(args, name, None)
        if value is not None:
            fields[name] = value
    created = await client.create_session(**fields)
    sys.stderr.write(visible(f"rho-agent · {args.server} · session {created['id']}") + "\n")
    return str(created["id"]), 0


async def _follow(client: Any, session_id: str, after: int, args: argparse.Namespace) -> int:
    renderer = TerminalRenderer(quiet=args.quiet, verbose=args.verbose)
    status, text = "error", ""
    while True:
        async for event in client.events(session_id, after=after, until_idle=True):
            if event.id is not None:
                after = event.id
            if event.kind == "run_end":
                status, text = event.data["status"], event.data.get("text") or ""
            if event.kind != "unreadable":
                renderer(event_from_dict(event.data))
        if status != "awaiting_approval" or not sys.stdin.isatty():
            break
        detail = await client.get_session(session_id)
        for pending in detail["pending_approvals"]:
            await client.answer(session_id, pending["call_id"], _ask(pending))
    if args.quiet and text:
        # the answer as the local renderer prints it: escaped on a terminal, exact elsewhere
        sys.stdout.write((visible(text) if sys.stdout.isatty() else text) + "\n")
    if status == "awaiting_approval":
        sys.stderr.write(
            f"rho-agent: a tool call waits for approval; answer it on a terminal with "
            f"rho-agent --server {args.server} --resume {session_id}\n"
        )
    return exit_codes.exit_code(status)


def _ask(pending: Mapping[str, str]) -> str:
    """Ask about one pending call, its arguments in full and escaped (as the local prompt)."""
    shown = visible(f"{pending['tool']} {pending['arguments']}", newlines=False)
    sys.stderr.write(f"approve {shown}? [y]es / [N]o / [a]lways ")
    sys.stderr.flush()
    answer = sys.stdin.readline().strip().lower()
    return {"y": "approve", "yes": "approve", "a": "always", "always": "always"}.get(answer, "deny")


def _stdin_task() -> str | None:
    if sys.stdin.isatty():
        return None
    text = sys.stdin.read().strip()
    return text or None
