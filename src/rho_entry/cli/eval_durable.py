"""``rho-agent eval bird --durable``: the questions as durable runs on worker processes.

The command starts ``--workers`` worker processes (``rho-agent worker``, one question at a
time each, their output in ``<out>.workers.log``; each one's pid is announced on stderr; one
that dies is replaced, and its questions continue on another once it has been silent for
``--dead-after`` seconds), on the system database ``--durable-db`` (default
``<out>.durable.sqlite``) and the CLI's session store, and writes each graded question to
``--out`` once (``rho_entry.evals.bird_durable``).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from rho_domain.config import AgentConfig
from rho_domain.evals.accuracy import QuestionResult
from rho_entry.evals.bird_data import BirdDataset
from rho_entry.evals.bird_run import BirdRun

QUEUE = "rho-bird"


async def run_durable(
    args: argparse.Namespace,
    dataset: BirdDataset,
    out: Path,
    config: AgentConfig,
    workspace: Path,
    on_result: Callable[[QuestionResult], None],
) -> BirdRun:
    """Run the selection over the queue; see the module docstring."""
    from rho_entry.config.home import sessions_dir
    from rho_entry.config.settings import environment
    from rho_entry.config.stores import store_setting
    from rho_entry.durable.queueing import open_queue
    from rho_entry.evals.bird_durable import run_bird_durable
    from rho_entry.evals.bird_workers import worker_command, worker_environ

    database = args.durable_db or str(out.parent / f"{out.name}.durable.sqlite")
    # the workers' store: --store, $RHO_AGENT_STORE, else the CLI's sessions directory
    env = environment()
    store = store_setting(args.store, env)[0] or sessions_dir(env)
    log = out.parent / f"{out.name}.workers.log"
    out.parent.mkdir(parents=True, exist_ok=True)
    queue = open_queue(database, queue=QUEUE)

    def start_worker() -> subprocess.Popen[bytes]:
        with log.open("ab") as sink:
            worker = subprocess.Popen(
                worker_command(database, QUEUE, dead_after=args.dead_after),
                stdout=sink,
                stderr=subprocess.STDOUT,
                env=worker_environ(
                    store, os.environ, config, data=dataset.root, workspace=workspace
                ),
            )
        sys.stderr.write(f"rho-agent eval: worker {worker.pid} started\n")
        sys.stderr.flush()
        return worker

    try:
        return await run_bird_durable(
            dataset,
            out,
            config=config,
            queue=queue,
            start_worker=start_worker,
            workers=args.workers,
            limit=args.limit,
            timeout=args.timeout,
            workspace=workspace,
            on_result=on_result,
            evidence=not args.no_evidence,
        )
    finally:
        queue.close()
