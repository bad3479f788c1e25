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
from rho_domain.endpoint_url import check_endpoint_url
from rho_domain.errors import RhoError
from rho_domain.events import RunEnded
from rho_domain.run import RunResult
from rho_domain.url_logins import hide_url_logins
from rho_entry.cli import exit_codes
from rho_entry.cli.render import TerminalRenderer
from rho_entry.cli.terminal_text import as_run, shell_word, visible


def _say(line: str) -> None:
    """Write ``line`` to stderr, shown safely: terminal controls made visible, and the
    password of a URL typed with a login (``--server https://user:PW@host``) as ``***``
    (a terminal, a CI log), as the run header shows a model's endpoint."""
    sys.stderr.write(hide_url_logins(visible(line)) + "\n")


def run_remote(args: argparse.Namespace, env: Mapping[str, str]) -> int:
    """Run the invocation against ``args.server``; returns the exit code."""
    try:
        check_endpoint_url(args.server, "--server")  # before the client names its own key
    except RhoError as exc:
        _say(f"rho-agent: {exc}")
        return exit_codes.USAGE
    try:
        return asyncio.run(_run(args, env))
    except RhoError as exc:
        _say(f"rho-agent: {args.server}: {exc}{_token_origin(exc, env)}")
        return exit_codes.USAGE
    except OSError as exc:  # httpx's connection errors are OSErrors' cousins; name the URL
        _say(f"rho-agent: cannot reach {args.server}: {_unreachable(exc)}")
        return exit_codes.USAGE


def _token_origin(exc: RhoError, env: Mapping[str, str]) -> str:
    """For a refused token, which one this command sent: the server's words cannot know that
    it came from ``RHO_AGENT_SERVER_TOKEN`` (set for another server, or an old start's),
    which wins over the file the server wrote."""
    from rho_entry.server.errors import Unauthorized
    from rho_entry.server.settings import TOKEN_VARIABLE

    if not isinstance(exc, Unauthorized) or not env.get(TOKEN_VARIABLE):
        return ""
    return (
        f" (this command sent {TOKEN_VARIABLE}, which wins over the token file: set it to "
        "this server's token, or unset it to send the file's)"
    )


def _unreachable(exc: BaseException) -> str:
    from rho_adapters.model.tls import PLAIN_HTTP_ANSWER, answered_plain_http

    return PLAIN_HTTP_ANSWER if answered_plain_http(exc) else str(exc)


async def _run(args: argparse.Namespace, env: Mapping[str, str]) -> int:
    import httpx

    from rho_entry.client import AgentClient

    client = AgentClient(args.server, environ=env)  # the token: variable, else its file
    try:
        if args.list:
            sys.stdout.writelines(line + "\n" for line in _listing(await client.list_sessions()))
            return exit_codes.OK
        session_id, after = await _start(client, args)
        return await _follow(client, session_id, after, args)
    except httpx.TransportError as exc:
        _say(f"rho-agent: cannot reach {args.server}: {_unreachable(exc)}")
        return exit_codes.USAGE
    finally:
        await client.aclose()


LIST_HEADER = f"{'ID':<14} {'STATUS':<18} {'LIVENESS':<10} FIRST PROMPT"
_LISTED = ("id", "status", "liveness")


def _listing(rows: list[dict[str, Any]]) -> list[str]:
    """A header, then one line per session (its first prompt on one line, at most 60
    characters, as the local ``--list``). No sessions: no lines."""
    lines = [LIST_HEADER] if rows else []
    for row in rows:
        prompt = visible(" ".join(str(row.get("first_prompt", "")).split()), newlines=False)
        if len(prompt) > 60:
            prompt = prompt[:59] + "…"
        # every field is the server's text, read from its store: shown, never obeyed
        sid, status, liveness = (visible(str(row.get(k, "?")), newlines=False) for k in _LISTED)
        lines.append(f"{sid:<14} {status:<18} {liveness:<10} {prompt}")
    return lines


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
    _say(f"rho-agent · {args.server} · session {created['id']}")
    return str(created["id"]), 0


async def _follow(client: Any, session_id: str, after: int, args: argparse.Namespace) -> int:
    renderer = TerminalRenderer(quiet=args.quiet, verbose=args.verbose)
    ended: RunEnded | None = None
    while True:
        async for event in client.events(session_id, after=after, until_idle=True):
            if event.id is not None:
                after = event.id
            if event.kind == "unreadable":
                continue
            parsed = event_from_dict(event.data)
            if isinstance(parsed, RunEnded):
                ended = parsed
            renderer(parsed)
        waiting = ended is None or ended.status == "awaiting_approval"
        if not waiting or not sys.stdin.isatty():
            break
        detail = await client.get_session(session_id)
        if not detail["pending_approvals"]:
            break
        for pending in detail["pending_approvals"]:
            await client.answer(
                session_id, pending["call_id"], _ask(pending), digest=pending["digest"]
            )
    if ended is not None:
        # as a local run ends: the answer's line closed (or, quiet, the answer), the usage
        renderer.finish(_result(session_id, ended))
        status = ended.status.value
    elif renderer.errors_shown:  # the run could not start; the server said why, shown
        status = "error"
    else:  # no run here (--resume ID without a message): say why, never exit in silence
        detail = await client.get_session(session_id)
        status = "awaiting_approval" if detail["pending_approvals"] else "error"
        if status == "error":
            _say(
                f"rho-agent: session {session_id} has nothing to continue (status "
                f"{detail['status']}); give it a message: rho-agent --server "
                f'{shell_word(args.server)} --resume {shell_word(session_id)} "..."'
            )
    if status == "awaiting_approval":
        _say(
            f"rho-agent: a tool call waits for approval; answer it on a terminal with "
            f"rho-agent --server {shell_word(args.server)} --resume {shell_word(session_id)}"
        )
    return exit_codes.exit_code(status)


def _result(session_id: str, ended: RunEnded) -> RunResult:
    return RunResult(
        session_id=session_id,
        run_id=ended.run_id,
        status=ended.status,
        text=ended.text,
        usage=ended.usage,
        session_usage=ended.session_usage,
        error=ended.error,
    )


def _ask(pending: Mapping[str, Any]) -> str:
    """Ask about one pending call, its arguments in full and escaped (as the local prompt),
    and for a delegate call its sub-agent's waiting call: what the answer (its digest)
    approves."""
    shown = visible(f"{pending['tool']} {as_run(pending['arguments'])}", newlines=False)
    if isinstance(child := pending.get("sub_agent"), Mapping):
        asks = visible(f"{child.get('tool')} {as_run(str(child.get('arguments')))}", newlines=False)
        shown += f" (its sub-agent asks to run {asks})"
    sys.stderr.write(f"approve {shown}? [y]es / [N]o / [a]lways ")
    sys.stderr.flush()
    answer = sys.stdin.readline().strip().lower()
    return {"y": "approve", "yes": "approve", "a": "always", "always": "always"}.get(answer, "deny")


def _stdin_task() -> str | None:
    if sys.stdin.isatty():
        return None
    from rho_entry.cli.stdin_task import task_from_stdin

    return task_from_stdin()
