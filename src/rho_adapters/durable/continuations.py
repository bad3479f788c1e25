"""A waiting run's answers as its continuation carries them: one rule for every ``RunQueue``.

Answering a run that waits for approval queues its continuation, a run with the id
``<run_id>~<n>`` (the first id of the run's base not cancelled before it ran) whose prompt is
None and whose ``settings`` carry the answers: ``answer:CALL`` yes or no, ``reason:CALL``,
``digest:CALL`` (the call as its answerer was shown it, ``rho_domain.call_digest``) and
``always:TOOL`` for the tools answered "always", inherited by every later continuation. The
DBOS queue (``run_queue.py``) and the fake (``rho_adapters.fakes.MemoryRunQueue``) both build
them here, so the contract suite holds the fake to the same words. No DBOS import: the fake
runs without the extra.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping

from rho_domain.errors import SessionStateError

ANSWER, REASON, ALWAYS = "answer:", "reason:", "always:"  # keys of a continuation's settings
DIGEST = "digest:"  # the digest of the call an answer is about (rho_domain.call_digest)
ANSWERED = (ANSWER, REASON, ALWAYS, DIGEST)


def continuation_settings(
    inherited: Mapping[str, str],
    answers: Mapping[str, bool],
    reasons: Mapping[str, str],
    always: Collection[str],
    digests: Mapping[str, str],
) -> tuple[dict[str, str], dict[str, str]]:
    """(the answers, the whole settings) of the continuation of a run whose settings are
    ``inherited``: "always" is carried from continuation to continuation; answers, reasons
    and digests belong to one run."""
    answered = {
        **{k: v for k, v in inherited.items() if k.startswith(ALWAYS)},
        **{f"{ALWAYS}{tool}": "yes" for tool in always},
        **{f"{ANSWER}{call}": "yes" if ok else "no" for call, ok in answers.items()},
        **{f"{REASON}{call}": text for call, text in reasons.items()},
        **{f"{DIGEST}{call}": digests[call] for call in answers if call in digests},
    }
    settings = {
        **{k: v for k, v in inherited.items() if not k.startswith(ANSWERED)},
        **answered,
    }
    return answered, settings


def continuation_ids(run_id: str) -> tuple[str, int]:
    """(the run's base id, the first attempt number of its continuation): ``r`` → (r, 1),
    ``r~2`` → (r, 3). The continuation is ``f"{base}~{attempt}"``, the next attempt's id
    when that one was cancelled before it ran."""
    base, _, attempt = run_id.partition("~")
    return base, int(attempt) + 1 if attempt else 1


def answers_of(settings: Mapping[str, str]) -> dict[str, str]:
    """The answers a continuation's settings carry (what ``continuation_settings`` put)."""
    return {k: v for k, v in settings.items() if k.startswith(ANSWERED)}


def answered_otherwise(
    run_id: str, continuation: str, theirs: Mapping[str, str], answered: Mapping[str, str]
) -> SessionStateError:
    """The refusal of an answer of ``run_id`` whose continuation already carries others."""
    return SessionStateError(
        f"run {run_id} was already answered ({listed(theirs)}); its continuation "
        f"{continuation} runs with that answer, not this one ({listed(answered)}). "
        f"Answer again once {continuation} waits for approval."
    )


def not_waiting(run_id: str, status: str | None) -> SessionStateError:
    """The refusal of an answer of a run that does not wait for approval."""
    return SessionStateError(
        f"run {run_id} does not wait for approval (its status is {status or 'unknown'})"
    )


def session_busy(session_id: str, queue: str, run_id: str) -> SessionStateError:
    """The refusal of a run enqueued while another run of its session is queued or running."""
    return SessionStateError(
        f"session {session_id} has a run queued or in progress on the queue {queue!r}; run "
        f"{run_id} was not queued: wait for that run to end (or to wait for approval) or "
        "cancel it"
    )


def listed(answered: Mapping[str, str]) -> str:
    """``a1: yes, a2: no (reason), always: bash``: the answers a continuation carries."""
    shown = []
    for key, value in sorted(answered.items()):
        if key.startswith(ANSWER):
            call = key.removeprefix(ANSWER)
            reason = answered.get(REASON + call)
            shown.append(f"{call}: {value}" + (f" ({reason})" if reason else ""))
    tools = sorted(key.removeprefix(ALWAYS) for key in answered if key.startswith(ALWAYS))
    if tools:
        shown.append(f"always: {', '.join(tools)}")
    return ", ".join(shown) or "nothing"
