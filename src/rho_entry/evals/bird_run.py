"""Run BIRD questions: one readonly session per question, graded, one results line each.

Each question gets its own session (stored, labelled ``eval=bird`` and ``question_id``, so a
failure can be opened with ``rho-agent --resume ID`` or exported) whose agent has the
config's permission profile (the CLI passes ``readonly``), exactly one database attached (the
question's, under its ``db_id``), an empty workspace (the questions file, with its gold SQL,
is out of reach), no delegation, and the ``submit_sql`` tool. The question and its evidence
are the prompt (``rho_domain.evals.bird.prompt_for``).

When the run ends, the submitted SQL and the gold SQL are run on the database
(``rho_adapters.evals.run_for_grading``, ``timeout`` seconds each) and compared as BIRD does
(``execution_match``). The result line is appended and flushed before the next result; a run
that is stopped and started again with the same ``out`` skips the questions already there.

A run that failed because the endpoint did (no connection, authentication, rate limits,
server errors, timeouts) is not graded: it is counted in ``BirdRun.not_graded`` and runs again
next time. Any other ending (max turns, a context that no longer fits, a run without a
submission) is the agent's, and is graded.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

import attrs

from rho_adapters.evals import run_for_grading
from rho_domain.config import AgentConfig, DatabaseConfig
from rho_domain.evals.accuracy import QuestionResult, execution_match, why_wrong
from rho_domain.evals.bird import BirdQuestion
from rho_domain.evals.submit import SubmitSqlTool, submitted_sql
from rho_domain.events import Event
from rho_domain.ports.clock import Clock
from rho_domain.ports.model import ChatModel
from rho_domain.ports.store import SessionStore
from rho_domain.run import RunResult, RunStatus
from rho_domain.tools.factory import build_registry
from rho_domain.value_methods import value_eq, value_hash, value_repr
from rho_entry import wiring
from rho_entry.config.home import expanded
from rho_entry.evals.bird_data import BirdDataset
from rho_entry.evals.bird_results import ResultsFile, read_results
from rho_entry.facade import Agent, Session

# How a run ends when the endpoint failed, not the agent: such a question runs again.
ENDPOINT_FAILURES = frozenset(
    {
        "ModelConnectionError",
        "ModelTimeout",
        "AuthenticationError",
        "ModelNotFoundError",
        "RateLimited",
        "ServerError",
    }
)

ModelFactory = Callable[[], ChatModel]
OnResult = Callable[[QuestionResult], None]


@attrs.frozen(kw_only=True)
class BirdRun:
    """What a call of ``run_bird`` did. ``results`` holds every graded question of the
    selection, from earlier runs too (``skipped`` of them were already in the file)."""

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    results: tuple[QuestionResult, ...]
    skipped: int
    not_graded: tuple[tuple[int, str], ...] = ()  # (question_id, why) to run again


async def run_bird(
    dataset: BirdDataset,
    out: Path,
    *,
    config: AgentConfig,
    workers: int = 1,
    limit: int | None = None,
    timeout: float = 30.0,
    model_factory: ModelFactory | None = None,
    store: SessionStore | None = None,
    clock: Clock | None = None,
    on_result: OnResult | None = None,
    workspace: Path | None = None,
    evidence: bool = True,
) -> BirdRun:
    """Run the first ``limit`` questions (all when None) that ``out`` has no line for, with at
    most ``workers`` sessions at once. ``model_factory`` makes each session's model (default:
    the config's endpoint); ``clock`` measures wall time (default: the system clock).
    ``workspace`` is the empty working directory of every session (default: ``<out>.workspace``
    beside ``out``; the CLI's is in the config directory); it and the database paths are
    stored absolute, so ``rho-agent --resume ID`` opens a session from any directory.
    ``evidence`` False leaves each question's evidence out of its prompt."""
    if workers < 1:
        raise ValueError("workers must be at least 1")
    if clock is None:
        from rho_adapters.clock import SystemClock

        clock = SystemClock()
    selected = dataset.questions if limit is None else dataset.questions[:limit]
    wanted = {q.question_id for q in selected}
    earlier = {r.question_id: r for r in read_results(out) if r.question_id in wanted}
    todo = [q for q in selected if q.question_id not in earlier]
    if workspace is None:
        workspace = out.parent / f"{out.name}.workspace"
    workspace = expanded(workspace).resolve()
    workspace.mkdir(parents=True, exist_ok=True)
    grader = Grader(
        dataset, config, workspace, timeout, model_factory, store, clock, evidence=evidence
    )
    results_file = ResultsFile(out)
    results_file.open()
    fresh: dict[int, QuestionResult] = {}
    not_graded: list[tuple[int, str]] = []
    gate = asyncio.Semaphore(workers)

    async def _one(question: BirdQuestion) -> None:
        async with gate:
            result, failure = await grader.grade(question)
        if failure is not None:
            not_graded.append((question.question_id, failure))
            return
        results_file.append(result)
        fresh[question.question_id] = result
        if on_result is not None:
            on_result(result)

    try:
        async with asyncio.TaskGroup() as group:
            for question in todo:
                group.create_task(_one(question))
    except BaseExceptionGroup as group_error:
        # the first failure (the others were cancelled because of it), not a group
        raise group_error.exceptions[0] from None
    finally:
        results_file.close()
    merged = {**earlier, **fresh}
    return BirdRun(
        results=tuple(merged[q.question_id] for q in selected if q.question_id in merged),
        skipped=len(earlier),
        not_graded=tuple(sorted(not_graded)),
    )


@attrs.frozen
class Grader:
    """Runs one question's session and grades it (``grade``), or grades a run already done
    (``judge``, as a durable run's worker does)."""

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    dataset: BirdDataset
    config: AgentConfig
    workspace: Path
    timeout: float
    model_factory: ModelFactory | None
    store: SessionStore | None
    clock: Clock
    evidence: bool = True

    async def grade(self, question: BirdQuestion) -> tuple[QuestionResult, str | None]:
        """Run the agent on ``question`` and grade it; the second value says why a run is not
        graded (the endpoint failed)."""
        started = self.clock.monotonic()
        db = self.dataset.database(question).resolve()  # stored in the session: absolute
        events: list[Event] = []
        session = self._session(question, db, events.append)
        try:
            outcome = await session.run(prompt(question, evidence=self.evidence))
        finally:
            await session.close()
        return await self.judge(question, outcome, events, started)

    async def judge(
        self, question: BirdQuestion, outcome: RunResult, events: list[Event], started: float
    ) -> tuple[QuestionResult, str | None]:
        """Grade a finished run of ``question`` (its events give the submitted SQL); the
        second value says why it is not graded (the endpoint failed)."""
        db = self.dataset.database(question).resolve()
        sql = submitted_sql(events)
        gold = await asyncio.to_thread(run_for_grading, db, question.gold_sql, timeout=self.timeout)
        predicted = None
        if sql is not None:
            predicted = await asyncio.to_thread(run_for_grading, db, sql, timeout=self.timeout)
        correct = predicted is not None and execution_match(predicted, gold)
        result = _result(question, outcome, sql, correct, why_wrong(predicted, gold))
        result = attrs.evolve(result, wall_seconds=self.clock.monotonic() - started)
        failed = outcome.status is RunStatus.ERROR and outcome.error_type in ENDPOINT_FAILURES
        return result, (outcome.error or outcome.error_type or "error") if failed else None

    def _session(
        self, question: BirdQuestion, db: Path, listener: Callable[[Event], None]
    ) -> Session:
        model = self.model_factory() if self.model_factory is not None else None
        return Session(
            self.agent_for(question, db),
            model=model,
            store=self.store,
            on_event=listener,
            labels=question_labels(question),
        )

    def agent_for(self, question: BirdQuestion, db: Path) -> Agent:
        """The agent of ``question``: the config's profile, its one database, ``submit_sql``."""
        config = attrs.evolve(
            self.config,
            databases={question.db_id: DatabaseConfig(engine="sqlite", path=str(db))},
            working_dir=str(self.workspace),
        )
        profile = wiring.profile_of(config)
        registry = build_registry(
            profile,
            databases=config.databases,
            line_searcher=wiring.build_line_searcher(),
            extra=(SubmitSqlTool(),),
            output_limit=config.tool_output_limit,
        )
        return Agent(config, profile=profile, registry=registry)


def question_labels(question: BirdQuestion) -> dict[str, str]:
    """The labels of a question's session."""
    return {"eval": "bird", "question_id": str(question.question_id)}


def prompt(question: BirdQuestion, *, evidence: bool = True) -> str:
    """The prompt of ``question`` (without its evidence when ``evidence`` is False)."""
    from rho_domain.evals.bird import prompt_for

    return prompt_for(question, tool="sqlite", alias=question.db_id, evidence=evidence)


def _result(
    question: BirdQuestion, outcome: RunResult, sql: str | None, correct: bool, why: str | None
) -> QuestionResult:
    usage = outcome.session_usage
    return QuestionResult(
        question_id=question.question_id,
        db_id=question.db_id,
        difficulty=question.difficulty,
        session_id=outcome.session_id,
        status=outcome.status.value,
        correct=correct,
        predicted_sql=sql,
        error=None if correct else why,
        input_tokens=usage.input_tokens,
        output_tokens=usage.output_tokens,
        cost_usd=usage.cost_usd,
    )
