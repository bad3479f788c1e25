"""Running an invocation: errors to exit codes, sessions, one-shot runs.

Every failure ends with a one-line (or a few lines) explanation on stderr and its documented
exit code, never a traceback and never a false 0.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import sys
import traceback
from collections.abc import Coroutine, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

from rho_domain.errors import ConfigError, ModelError, RhoError
from rho_domain.permissions import PermissionProfile
from rho_domain.ports.store import SessionStore
from rho_domain.run import RunResult, RunStatus
from rho_entry.cli import collector, exit_codes
from rho_entry.cli.interrupts import interruptible
from rho_entry.cli.launch import Launch, prepare
from rho_entry.cli.presentation import profile_label
from rho_entry.cli.render import TerminalRenderer
from rho_entry.cli.run_end import close_after, said_unclosed, write_output
from rho_entry.cli.running import (
    make_renderer,
    open_session,
    rejected_last,
    result_code,
)
from rho_entry.cli.terminal_text import visible
from rho_entry.config.settings import endpoint_label, environment

T = TypeVar("T")


def run_words(words: Sequence[str]) -> int:
    """``rho-agent WORDS...`` for a run (one-shot or REPL): parse, then ``run``. Subcommands
    that continue into a run (``fork ID --at N "task"``, ``monitor connect``) call this, not
    ``main`` again. ``--help``, ``--version`` and a usage error return their exit code."""
    from rho_entry.cli.parser import parse_words

    namespace = parse_words(words)
    return namespace if isinstance(namespace, int) else run(namespace)


def run(args: argparse.Namespace) -> int:
    """Run a parsed invocation and return its exit code."""
    try:
        if args.server:
            from rho_entry.cli.remote import run_remote

            collector.resume()  # a remote run streams for as long as it lasts
            return run_remote(args, environment())
        flag = getattr(args, "store", None)
        if args.list:
            listed = _store(environment(), flag=flag)
            with _closing(listed):
                return _list_sessions(listed, as_json=args.json)
        launch = prepare(
            args, environment(), stdin_tty=sys.stdin.isatty(), stderr_tty=sys.stderr.isatty()
        )
        _start_ahead(launch)
        _warn_about_databases(launch)
        store = _store(
            environment(), writing=True, flag=flag, config_store=launch.settings.config.store
        )
        with _closing(store):
            if launch.interactive:
                from rho_entry.cli.repl import run_repl

                collector.resume()  # a REPL lasts: its start-up is over here
                return run_repl(launch, store)
            return _run_loop(_one_shot(launch, store))
    except ConfigError as exc:
        return _fail(str(exc), exit_codes.USAGE)
    except ModelError as exc:
        return _fail(f"model error: {exc}", exit_codes.MODEL)
    except RhoError as exc:  # our messages say what to fix; a class name adds nothing
        return _fail(str(exc), exit_codes.USAGE)
    except KeyboardInterrupt:
        return _fail("cancelled", exit_codes.cancelled())
    except Exception as exc:  # noqa: BLE001 - a bug must still end with a message and code 1
        from rho_domain.plugged import described  # its __str__ may raise too

        if getattr(args, "verbose", False):
            traceback.print_exc()
        hint = "" if getattr(args, "verbose", False) else " (--verbose shows the traceback)"
        return _fail(f"internal error: {described(exc)}{hint}", exit_codes.USAGE)


def _start_ahead(launch: Launch) -> None:
    """Left running while the store, agent and model are made (not on resume: the stored config
    decides): an https endpoint's CA certificates load, a local executor's bwrap probe runs."""
    config = launch.settings.config
    if not launch.resume:
        from rho_entry.model_wiring import load_certificates_ahead  # the model client waits

        load_certificates_ahead(config, environment())
        if not launch.builds_sandbox and isinstance(config.profile, PermissionProfile):
            from rho_entry.wiring import probe_sandbox_ahead  # the executor waits

            probe_sandbox_ahead(config, config.profile)


def _warn_about_databases(launch: Launch) -> None:
    """Now, not when the model first queries: a missing driver, an unset password variable,
    a missing SQLite file. Warnings only: the task may not need that database."""
    from rho_entry.wiring import database_warnings

    for problem in database_warnings(launch.settings.config, environment()):
        sys.stderr.write(f"rho-agent: warning: {visible(problem)}\n")


@contextlib.contextmanager
def _closing(store: SessionStore) -> Iterator[None]:
    """Close the store the command opened when it ends: a PostgreSQL one holds a share of the
    process's pool (its connections would stay open until the process ends; in-process
    callers of ``main`` would find them garbage-collected open)."""
    from rho_entry.config.stores import close_store_sync

    try:
        yield
    finally:
        close_store_sync(store)


def _fail(message: str, code: int) -> int:
    sys.stderr.write(f"rho-agent: {visible(message)}\n")  # errors may quote the model
    return code


def _run_loop(coro: Coroutine[Any, Any, T]) -> T:
    loop = asyncio.new_event_loop()
    try:
        return loop.run_until_complete(coro)
    finally:
        loop.run_until_complete(loop.shutdown_asyncgens())
        loop.close()


def _store(
    env: Mapping[str, str],
    *,
    writing: bool = False,
    flag: str | None = None,
    config_store: str | None = None,
) -> SessionStore:
    """The session store (``--store``, ``$RHO_AGENT_STORE``, ``store:`` in the config, else
    the config directory's: ``rho_entry.config.stores``). A directory store is checked first,
    naming the setting that gave it: ``writing``, that it can hold a new session, so that a
    run never starts (header, model calls) when nothing of it could be saved; listing, that
    it is not a file."""
    from rho_entry.config.home import sessions_dir
    from rho_entry.config.stores import files_root, session_store, store_setting

    url, origin = store_setting(flag, env, config_store)
    if url is None:
        root = sessions_dir(env)
        _check_root(root, env, None, writing=writing)
        return session_store(root, env, origin=origin)
    store = session_store(url, env, origin=origin)
    if (directory := files_root(store)) is not None:
        _check_root(directory, env, origin, writing=writing)
    return store


def _check_root(root: Path, env: Mapping[str, str], origin: str | None, *, writing: bool) -> None:
    """Raise ``ConfigError`` when the directory store ``root`` cannot hold sessions (writing:
    made if missing, and writable; listing: not a file, nor under one), naming ``origin``,
    the setting that gave it (None: the config directory's default)."""
    import os

    there = next((p for p in (root, *root.parents) if p.exists()), None)
    problem = None if there is None or there.is_dir() else "Not a directory"
    if writing and problem is None:
        try:
            root.mkdir(parents=True, exist_ok=True)
            problem = None if os.access(root, os.W_OK | os.X_OK) else "not writable"
        except OSError as exc:
            problem = exc.strerror or type(exc).__name__
    if problem is None:
        return
    if origin is not None:
        raise ConfigError(
            f"cannot keep sessions in {root}: {problem} (set by {origin}; give a directory "
            "rho-agent can write)"
        )
    from rho_entry.config.home import xdg_config_home

    xdg = "$XDG_CONFIG_HOME" if xdg_config_home(env) else "$HOME"
    origin = "$RHO_AGENT_HOME" if env.get("RHO_AGENT_HOME") else xdg
    raise ConfigError(
        f"cannot keep sessions in {root}: {problem} (the config directory comes from "
        f"{origin}; set RHO_AGENT_HOME to a writable directory)"
    )


async def _one_shot(launch: Launch, store: SessionStore) -> int:
    renderer = make_renderer(launch)
    approver = None
    if not launch.json and sys.stdin.isatty():
        # nobody to ask without a terminal: the run then stops with exit code 4
        from rho_entry.cli.approval import TerminalApprover

        approver = TerminalApprover(renderer, style=renderer.style)  # type: ignore[union-attr]
    session = await open_session(launch, store, renderer, approver)
    collector.resume()  # the session is open: what the run makes is collected again
    ran = None
    try:
        if launch.task is None or launch.answered:  # --resume ID --approve/--deny, -y
            from rho_entry.cli.answers import Answers, apply_answers

            answers = launch.answers or Answers()
            apply_answers(session, answers, auto_approve=session.agent.config.auto_approve)
        if not launch.json and not launch.quiet:
            config = session.agent.config
            renderer.notice(
                f"rho-agent · {config.model} · {endpoint_label(config, environment())} · "
                f"profile {profile_label(session.agent.profile)} · {config.working_dir or '.'} · "
                f"session {session.id}",
                "dim",
            )
        with interruptible(session, lambda text: renderer.notice(text, "yellow")):
            try:
                result: RunResult = await session.run(launch.task)
            except asyncio.CancelledError:
                if session.last_result is None:
                    raise
                result = session.last_result
        failed_downloads = 0
        if launch.transfers is not None:  # --download: before the sandbox goes with the session
            from rho_entry.cli.transfers import download

            failed_downloads = await download(
                session.executor, launch.transfers, lambda text: renderer.notice(text, "yellow")
            )
        ran = result
    finally:
        unclosed = await close_after(session, ran, lambda text: renderer.notice(text, "yellow"))
    code = result_code(result)
    if unclosed is not None:  # before, --json printed no result, only stderr's line
        result, code = unclosed, said_unclosed(unclosed, code, renderer)
    if failed_downloads and code == exit_codes.OK:
        code = exit_codes.USAGE  # the answer is there, a file asked for is not
    rejected = rejected_last(session, result)
    if rejected is not None:
        code = exit_codes.REJECTED
    # not on a rejection (no answer); before the result, whose exit_code is then the process's
    if launch.output is not None and result.status is RunStatus.COMPLETED and rejected is None:
        code = write_output(launch.output, result.text, renderer) or code
    if result.status is not RunStatus.COMPLETED or rejected is not None:
        from rho_entry.cli.stopped import tell_stop

        tell_stop(result, renderer, session, code=code, rejected=rejected)
    elif isinstance(renderer, TerminalRenderer):
        renderer.finish(result)
    else:  # --json
        renderer.finish(result, exit_code=code)
    return code


def _list_sessions(store: SessionStore, *, as_json: bool) -> int:
    from rho_entry.cli.sessions import print_sessions

    print_sessions(_run_loop(store.list(limit=50)), as_json=as_json)
    return exit_codes.OK
