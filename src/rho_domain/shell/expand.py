"""Glob words of a planned pipeline, expanded through the executor right before it runs.

Expansion happens at run time, step by step (``cd src && wc -l *.py`` lists ``src``), with
``Executor.glob`` (the files are wherever the executor is). The expanded argv then passes the
same checks as literal words (``plan.check_words``: program options, secrets, /proc), and the
executor validates it once more: a file named ``--pre=sh`` or ``.env`` matched by ``*`` is
refused exactly as if the model had typed it.

Contract: ``expand_step(step, cwd, executor) -> PipelineStep`` without patterns, or
``CommandRefused`` (a match refused by the checks, too many matches, a pattern outside the
workspace).
"""

from __future__ import annotations

import attrs

from rho_domain.errors import CommandRefused, PermissionDenied
from rho_domain.ports.executor import Executor
from rho_domain.shell.plan import PipelineStep, check_words

MAX_WORDS = 10_000
MAX_CHARS = 1 << 20


async def _expand_word(word: str, pattern: str | None, cwd: str, executor: Executor) -> list[str]:
    if pattern is None:
        return [word]
    try:
        matches = await executor.glob(pattern, cwd=cwd)
    except PermissionDenied as exc:
        raise CommandRefused(f"glob {word!r} was not expanded: {exc}") from exc
    return list(matches) or [word]


async def expand_step(step: PipelineStep, cwd: str, executor: Executor) -> PipelineStep:
    """``step`` with every glob word replaced by its sorted matches (or kept when none)."""
    if not step.patterns:
        return step
    stages = []
    for stage, patterns in zip(step.stages, step.patterns, strict=True):
        argv: list[str] = []
        for word, pattern in zip(stage.argv, patterns, strict=True):
            argv.extend(await _expand_word(word, pattern, cwd, executor))
            if len(argv) > MAX_WORDS or sum(map(len, argv)) > MAX_CHARS:
                raise CommandRefused(
                    f"glob {word!r} matched too many files (more than {MAX_WORDS:,} words or "
                    f"{MAX_CHARS:,} characters); narrow the pattern or use find"
                )
        expanded = tuple(argv)
        try:
            check_words(expanded)
        except CommandRefused as exc:
            raise CommandRefused(f"after glob expansion: {exc}") from exc
        stages.append(attrs.evolve(stage, argv=expanded))
    return PipelineStep(stages=tuple(stages))
