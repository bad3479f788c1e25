"""The counts a model server reports, read as counts: a call's usage (``parse_usage``), and
any token count it states elsewhere (``token_count``: a tokenizer's count, a context window
in ``/props`` or an overflow error).

A count is a non-negative whole number no larger than ``MAX_TOKENS``; anything else (a word,
an object, a negative, non-finite or huge number) is no count, as for a server that says
nothing. Before, a huge one was taken: the cost of ``"prompt_tokens": 1e400``-sized integers
(10**400, which JSON parses exactly) raised ``OverflowError: int too large to convert to
float`` out of the run, outside the error tree, the answer lost; a string of 5,000 digits
raised int()'s ``ValueError`` alike.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rho_domain.messages import Usage

MAX_TOKENS = 2**53
"""The largest count read: far above any model's window or output, and a whole number a
float holds exactly (costs, ratios and budgets are computed in floats; JSON's safe integer)."""

MAX_COST_USD = 1e9
"""The largest cost of one call read (OpenRouter's ``cost``): a sum of such stays finite."""


def token_count(value: Any) -> int | None:
    """``value`` as a token count: a non-negative int, a whole finite float or a string of
    digits, at most ``MAX_TOKENS``; None for anything else."""
    if value.__class__ is int:  # a parsed JSON number nearly always: decided first
        return int(value) if 0 <= value <= MAX_TOKENS else None
    if isinstance(value, float) and value.is_integer() and 0 <= value <= MAX_TOKENS:
        return int(value)
    if isinstance(value, str) and value.isascii() and value.isdigit() and len(value) <= 16:
        return token_count(int(value))
    return None


def parse_usage(data: Mapping[str, Any]) -> Usage | None:
    """OpenAI usage (plus OpenRouter's ``cost``) as a domain Usage; the Responses API's names
    (``input_tokens``, ``output_tokens``, their ``_details``) when the Chat Completions ones
    are absent, as gateways send them. A value that is not a count (``token_count``; a cost
    not in 0..``MAX_COST_USD``) counts as absent: usage is bookkeeping, and a server's
    mistake there must not lose the answer it came with. None when neither token count is
    readable (the call's usage is then estimated)."""
    prompt = token_count(data.get("prompt_tokens"))
    if prompt is None:
        prompt = token_count(data.get("input_tokens"))
    completion = token_count(data.get("completion_tokens"))
    if completion is None:
        completion = token_count(data.get("output_tokens"))
    if prompt is None and completion is None:
        return None
    details = data.get("prompt_tokens_details") or data.get("input_tokens_details")
    more = data.get("completion_tokens_details") or data.get("output_tokens_details")
    cost = data.get("cost")
    if not (isinstance(cost, int | float) and not isinstance(cost, bool)):
        cost = None
    return Usage(
        input_tokens=prompt or 0,
        output_tokens=completion or 0,
        cached_tokens=_detail(details, "cached_tokens"),
        reasoning_tokens=_detail(more, "reasoning_tokens"),
        cost_usd=float(cost) if cost is not None and 0 <= cost <= MAX_COST_USD else None,
    )


def _detail(details: Any, key: str) -> int:
    if details.__class__ is dict or isinstance(details, Mapping):
        return token_count(details.get(key)) or 0
    return 0
