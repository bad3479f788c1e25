"""``rho-agent worker``: consume a queue of durable runs (the ``dbos`` extra).

    rho-agent worker --durable-db runs.sqlite [--store URL] [--queue NAME] [--concurrency N]

Runs until SIGTERM, SIGHUP (its terminal gone; left ignored under ``nohup``), Ctrl+C (then
exits 0, the runs in flight ended ``cancelled`` in their traces; Ctrl+C during the start: 130)
or another signal whose default ends a process (SIGQUIT, SIGUSR1, ...: stopped the same way,
exit 128 + its number).
Sessions are read and written in ``--store`` (the store every worker and every enqueuer shares:
a directory, or ``postgresql://...``; ``rho_entry.config.stores``); the queue, the step records
and the heartbeats are in ``--durable-db`` (a SQLite file for one host, a PostgreSQL URL for
many). New sessions get the agent settings of this worker (``--model``, ``--profile``, the
environment, as for a one-shot run). See docs/durable.md.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import socket
import sys
import uuid
from typing import TYPE_CHECKING

from rho_domain.errors import RhoError
from rho_entry import stop_signals
from rho_entry.cli import exit_codes
from rho_entry.cli.terminal_text import visible
from rho_entry.usage import UsageParser, at_least_one, seconds

if TYPE_CHECKING:
    from rho_adapters.durable.worker import DbosWorker, WorkerOptions


def build_parser() -> argparse.ArgumentParser:
    """The worker's flags."""
    parser = UsageParser(prog="rho-agent worker", description="Consume a queue of durable runs.")
    parser.add_argument(
        "--store",
        metavar="URL",
        help="the shared session store: a directory or a postgresql:// URL (as rho-agent "
        "--store; default: $RHO_AGENT_STORE, else the CLI's sessions directory)",
    )
    parser.add_argument(
        "--durable-db",
        required=True,
        metavar="URL",
        help="the durable runs' database: a SQLite path or a postgresql:// URL",
    )
    parser.add_argument(
        "--queue", default="rho-runs", metavar="NAME", help="the queue to consume (rho-runs)"
    )
    parser.add_argument(
        "--concurrency", type=at_least_one, default=4, metavar="N", help="runs at once (4)"
    )
    parser.add_argument("--model", "-m", help="the model of new sessions")
    parser.add_argument("--profile", "-p", help="the permission profile (default readonly)")
    parser.add_argument(
        "--executor-id", metavar="ID", help="this worker's id (default host-pid-random)"
    )
    parser.add_argument(
        "--application-version", metavar="V", help="pin the code version (default: this code's)"
    )
    for flag, default, text in (
        ("--poll", 1.0, "between looks at the queue"),
        ("--heartbeat", 2.0, "between this worker's heartbeats"),
    ):
        parser.add_argument(
            flag, type=seconds, default=default, metavar="S", help=f"seconds {text} ({default:g})"
        )
    parser.add_argument(
        "--dead-after",
        type=seconds,
        default=10.0,
        metavar="S",
        help="a worker silent this many seconds is dead and its runs recovered (10)",
    )
    return parser


def main(argv: list[str]) -> int:
    """Run a worker until a signal; the exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.heartbeat >= args.dead_after:
        # its row says "dead after N s" and it beats less often: every other worker takes it
        # for dead between two beats and puts its running runs back on the queue (run twice)
        parser.error(
            f"--heartbeat {args.heartbeat:g} is not shorter than --dead-after "
            f"{args.dead_after:g}: the other workers would take this one for dead between "
            "two of its beats and run its runs a second time; beat at most every quarter of "
            "--dead-after"
        )
    try:
        return asyncio.run(_serve(args))
    except RhoError as exc:
        sys.stderr.write(f"rho-agent worker: {visible(str(exc))}\n")
        return exit_codes.USAGE
    except KeyboardInterrupt:
        # Ctrl+C before the worker listens for it (during its start): the start stopped
        # what it had started and the store is closed; the CLI's status for Ctrl+C, no
        # traceback. Once consuming, Ctrl+C is the worker's stop (status 0).
        sys.stderr.write("rho-agent worker: interrupted while starting; nothing left running\n")
        return exit_codes.cancelled()


async def _serve(args: argparse.Namespace) -> int:
    from rho_adapters.durable.system_db import shown, system_db_url
    from rho_adapters.durable.worker import DbosWorker, WorkerOptions
    from rho_entry.cli.log_lines import WarningLine
    from rho_entry.config.settings import environment, resolve_settings
    from rho_entry.config.stores import choose_store, store_setting
    from rho_entry.durable.app_version import app_version
    from rho_entry.durable.runner import DurableRunner, WorkerSetup

    # "worker X stopped beating; ...": X is read from the queue's database, escaped
    recoveries = WarningLine("rho-agent worker: ")
    logging.getLogger("rho_adapters.durable").addHandler(recoveries)
    env = environment()
    settings = resolve_settings({"model": args.model, "profile": args.profile}, env)
    url = system_db_url(args.durable_db)
    executor_id = args.executor_id or f"{socket.gethostname()}-{uuid.uuid4().hex[:8]}"
    options = WorkerOptions(
        url=url,
        queue=args.queue,
        concurrency=args.concurrency,
        app_version=args.application_version or app_version(),
        executor_id=executor_id,
        poll_interval=args.poll,
        heartbeat=args.heartbeat,
        dead_after=args.dead_after,
    )
    where, origin = store_setting(args.store, env)
    chosen = choose_store(where, env, origin=origin)
    try:
        runner = DurableRunner(WorkerSetup(store=chosen.store, config=settings.config))
        return await _consume(DbosWorker(options, runner), options, shown(url))
    finally:
        # after the worker's stop or its failed start (which stops what it started): no
        # run uses the store now; a PostgreSQL store gives back its share of the pool
        await chosen.aclose()


async def _consume(worker: DbosWorker, options: WorkerOptions, where: str) -> int:
    """Start ``worker``, then consume until SIGTERM, SIGINT, SIGHUP or another signal whose
    default ends a process (``stop_signals.service_stops``); the worker stopped after. Exit 0,
    or 128 + the signal's number for one other than those three. SIGHUP killed a worker whose
    terminal closed: its runs in flight ended in no trace until another worker took them
    over, if one ever did; SIGQUIT or SIGUSR1 reached the CLI's start-up handler mid-run: a
    traceback, the run ended twice, its command left running."""
    executor_id = options.executor_id
    await worker.start()
    task = asyncio.current_task()
    if task is not None and task.cancelling():
        # Ctrl+C during the start cancels this task; a step of the start that caught the
        # CancelledError and went on (a library's ``except BaseException``, 3.11's
        # ``wait_for`` racing a result) let it end "consuming" with the cancel lost (the
        # ctrl-c test saw it under load): still pending, it stops the worker here
        await worker.stop()
        raise asyncio.CancelledError
    stop = asyncio.Event()
    heard: list[int] = []
    loop = asyncio.get_running_loop()

    def on_signal(signum: int) -> None:
        heard.append(signum)
        stop.set()

    try:
        # listening before the banner: a supervisor that stops the worker as soon as it
        # reads "consuming" gets a clean stop, never a death by SIGTERM
        for sig in stop_signals.service_stops():  # nohup's SIGHUP is left ignored
            with contextlib.suppress(NotImplementedError):
                loop.add_signal_handler(sig, on_signal, sig)
        sys.stderr.write(
            f"rho-agent worker {executor_id}: consuming {options.queue} in {where} "
            f"(version {options.app_version}, {options.concurrency} at once)\n"
        )
        sys.stderr.flush()
        await stop.wait()
    finally:
        await worker.stop()
    return stop_signals.service_exit(heard[0] if heard else None)
