"""BIRD over the queue of durable runs: ``rho-agent eval bird --workers N --durable``.

The command starts ``N`` worker processes (``rho-agent worker``, concurrency 1 each) on a
system database beside the results file, and puts every question not yet in the results on
the queue as a durable run whose id is derived from the results file and the question: the
same command run again finds the runs it had enqueued, never a second copy. On a worker, the
question's run (``run_question``) is the session of ``bird_run`` (the config's profile, the
question's database, ``submit_sql``), its model and tool calls steps, and its grading one
more step, whose result is the results line: a question whose worker is killed continues on
another worker from its recorded steps, and is graded once. The command appends each line to
the results as its run ends, each question once.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import signal
import subprocess
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import attrs

from rho_adapters.clock import SystemClock
from rho_domain.config import AgentConfig
from rho_domain.errors import ConfigError, SessionNotFound
from rho_domain.evals.accuracy import QuestionResult
from rho_domain.evals.bird import BirdQuestion
from rho_domain.events import Event, RunStarted
from rho_domain.ports.durable import DurableSteps, QueuedRun, RunQueue, wrong_session
from rho_domain.ports.store import SessionStore
from rho_entry.evals.bird_data import BirdDataset, load_bird
from rho_entry.evals.bird_results import ResultsFile, read_results, result_from_line, result_to_line
from rho_entry.evals.bird_run import BirdRun, Grader, prompt, question_labels
from rho_entry.evals.bird_workers import ENDPOINT, check_endpoint, check_paths, check_timeout
from rho_entry.facade import Session
from rho_entry.seed_api.state import State as DocumentState

KIND = "bird"


def question_run(
    dataset: BirdDataset, out: Path, question: BirdQuestion, *, config: AgentConfig, timeout: float,
    workspace: Path, evidence: bool = True,
) -> QueuedRun:  # fmt: skip
    """The durable run of ``question`` for the results file ``out``: the same ids every time.
    Its settings carry what the worker's own config cannot: ``evidence`` (``no`` when left
    out) and the eval's system prompt text (``--system-prompt``, already read)."""
    key = f"{out.resolve()}\0{dataset.root.resolve()}\0{dataset.split}\0{question.question_id}"
    digest = hashlib.sha256(key.encode()).hexdigest()
    settings = {
        "kind": KIND,
        "data": str(dataset.root.resolve()),
        "split": dataset.split,
        "question_id": str(question.question_id),
        "timeout": str(timeout),
        "workspace": str(workspace),
        **{f: str(getattr(config, f)) for f in ENDPOINT if getattr(config, f) is not None},
        **({} if evidence else {"evidence": "no"}),
        **({"system_prompt": config.system_prompt} if config.system_prompt else {}),
    }
    return QueuedRun(run_id=f"bird-{digest[:16]}", session_id=digest[:12], prompt=None,
                     settings=settings)  # fmt: skip


async def run_question(
    queued: QueuedRun, steps: DurableSteps, *, config: AgentConfig, store: SessionStore
) -> str:
    """A worker's run of one question: the results line and why it is not graded, as JSON."""
    settings = queued.settings
    check_endpoint(queued, config)
    check_paths(queued, os.environ)
    timeout = check_timeout(queued)
    dataset = load_bird(Path(settings["data"]), split=settings["split"])
    question = next(q for q in dataset.questions if str(q.question_id) == settings["question_id"])
    clock = SystemClock()
    grader = Grader(
        dataset,
        attrs.evolve(config, auto_approve=False, system_prompt=_system_prompt(queued)),
        Path(settings["workspace"]),
        timeout,
        None,
        store,
        clock,
        evidence=settings.get("evidence") != "no",
    )
    started = clock.monotonic()
    db = dataset.database(question).resolve()
    events: list[Event] = []
    session = await _open(queued, steps, grader.agent_for(question, db), store, question)
    session.journal.listeners.append(events.append)
    try:
        outcome = await session.run(
            prompt(question, evidence=grader.evidence), run_id=queued.run_id
        )
    finally:
        await session.close()

    async def grade() -> str:
        result, failure = await grader.judge(question, outcome, events, started)
        return json.dumps({"line": result_to_line(result), "failure": failure})

    return await steps.once("grade", grade)


def _system_prompt(queued: QueuedRun) -> str:
    """The payload's system prompt: text (the CLI read the file). One naming a template file
    is refused, since a payload must not make the worker read a file."""
    from rho_entry.config.system_prompt import template_path

    text = queued.settings.get("system_prompt", "")
    if template_path(text) is not None:
        raise ConfigError(f"durable run {queued.run_id}: its system prompt names a file {text!r}")
    return text


async def _open(
    queued: QueuedRun, steps: DurableSteps, agent: Any, store: SessionStore,
    question: BirdQuestion,
) -> Session:  # fmt: skip
    """The question's session: new, or (a dead worker's) reopened with its trace to replay.
    The agent is the question's, never the stored config's (the worker builds it)."""
    try:
        record, events = await store.open(queued.session_id)
    except SessionNotFound:
        return Session(
            agent, store=store, session_id=queued.session_id, steps=steps,
            labels=question_labels(question), interrupt_on_approval=False,
        )  # fmt: skip
    if (refused := wrong_session(queued, record.id)) is not None:
        await store.release(record.id)
        raise refused
    start = next(
        (
            i
            for i, e in enumerate(events)
            if isinstance(e, RunStarted) and e.run_id == queued.run_id
        ),
        len(events),
    )
    return Session(
        agent, store=store, session_id=queued.session_id, steps=steps, created=True,
        state=DocumentState.from_events(events[:start]), replay=events[start:],
        labels=question_labels(question), interrupt_on_approval=False,
    )  # fmt: skip


async def run_bird_durable(
    dataset: BirdDataset,
    out: Path,
    *,
    config: AgentConfig,
    queue: RunQueue,
    start_worker: Callable[[], subprocess.Popen[bytes]],
    workers: int,
    limit: int | None = None,
    timeout: float = 30.0,
    workspace: Path,
    on_result: Callable[[QuestionResult], None] | None = None,
    evidence: bool = True,
) -> BirdRun:
    """``run_bird`` over the queue: enqueue, keep ``workers`` worker processes running (one
    that dies is replaced), write each result once as its run ends; the workers are stopped
    at the end (SIGTERM)."""
    selected = dataset.questions if limit is None else dataset.questions[:limit]
    wanted = {q.question_id for q in selected}
    earlier = {r.question_id: r for r in read_results(out) if r.question_id in wanted}
    todo = [q for q in selected if q.question_id not in earlier]
    await asyncio.to_thread(workspace.mkdir, parents=True, exist_ok=True)
    runs = {
        q.question_id: question_run(
            dataset,
            out,
            q,
            config=config,
            timeout=timeout,
            workspace=workspace,
            evidence=evidence,
        )
        for q in todo
    }
    running = [start_worker() for _ in range(workers)]
    results_file = ResultsFile(out)
    results_file.open()
    fresh: dict[int, QuestionResult] = {}
    not_graded: list[tuple[int, str]] = []
    try:
        for run in runs.values():
            await queue.enqueue(run)
        waiting = dict(runs)
        while waiting:
            for index, worker in enumerate(running):
                if worker.poll() is not None:  # died: a new one (with a new executor id)
                    running[index] = start_worker()  # takes its runs once its beat is stale
            # one read for every run still out (a read per run, ten times a second, was the
            # command's main work on a long eval)
            statuses = await queue.statuses([run.run_id for run in waiting.values()])
            for question_id, run in list(waiting.items()):
                status = statuses[run.run_id]
                if status is None or status in ("queued", "running"):
                    continue
                del waiting[question_id]
                outcome = _outcome(status)
                if outcome is None:
                    not_graded.append((question_id, f"the run ended {status}"))
                    continue
                line, failure = outcome
                if failure is not None:
                    not_graded.append((question_id, failure))
                    continue
                result = result_from_line(line, where=run.run_id)
                results_file.append(result)
                fresh[question_id] = result
                if on_result is not None:
                    on_result(result)
            await asyncio.sleep(0.1)
    finally:
        results_file.close()
        for worker in running:
            if worker.poll() is None:
                os.kill(worker.pid, signal.SIGTERM)
        for worker in running:
            try:
                worker.wait(15)
            except subprocess.TimeoutExpired:
                worker.kill()
    merged = {**earlier, **fresh}
    return BirdRun(
        results=tuple(merged[q.question_id] for q in selected if q.question_id in merged),
        skipped=len(earlier),
        not_graded=tuple(sorted(not_graded)),
    )


def _outcome(status: str) -> tuple[str, str | None] | None:
    """A finished question run's results line and failure (None: it did not end graded)."""
    try:
        graded: Mapping[str, Any] = json.loads(status)
    except ValueError:
        return None
    return str(graded["line"]), graded.get("failure")
