"""Anchor item 15 (the reference lost usage a provider sent in another place, and counted
zero), re-tried with usage objects in other shapes and with values a server got wrong.

A usage value that is not a count (``"n/a"``, an object, a number too large for a float)
raised ValueError/TypeError/OverflowError out of the stream: the run ended ``error`` (exit 1)
after the whole answer had arrived, and the answer was lost. Usage in the Responses API's
names (``input_tokens``/``output_tokens``, which gateways in front of several providers send)
counted zero tokens as if reported, so token budgets never moved. Now a value that is not a
count is not a count (an object with none is no report: the call's usage is estimated), and
the Responses names are read when the Chat Completions ones are absent.
"""

from __future__ import annotations

import math
from typing import Any

import pytest
from _model_support import DONE, chunk, collect, data, make_model

from rho_domain.messages import Usage
from rho_domain.model import TextChunk, UsageReport


def _answer_with(usage: Any) -> bytes:
    return (
        chunk({"content": "the answer"}, finish="stop")
        + data({"id": "x", "choices": [], "usage": usage})
        + DONE
    )


async def _usage_of(usage: Any) -> Usage:
    model, _, _ = make_model(_answer_with(usage))
    events = await collect(model)
    assert [e.text for e in events if isinstance(e, TextChunk)] == ["the answer"]
    (report,) = [e for e in events if isinstance(e, UsageReport)]
    return report.usage


@pytest.mark.parametrize(
    "usage",
    [
        {"prompt_tokens": "n/a", "completion_tokens": "n/a"},
        {"prompt_tokens": {"total": 5}, "completion_tokens": [2]},
        {"prompt_tokens": 1e400, "completion_tokens": -3},
        {"prompt_tokens": True, "completion_tokens": None},
        {"total_tokens": 7},
    ],
)
async def test_usage_without_a_readable_count_is_estimated_not_fatal(usage: Any) -> None:
    counted = await _usage_of(usage)
    assert counted.estimated
    assert counted.input_tokens > 0
    assert counted.output_tokens > 0


async def test_one_bad_detail_keeps_the_counts_that_are_good() -> None:
    counted = await _usage_of(
        {
            "prompt_tokens": 12,
            "completion_tokens": 4,
            "prompt_tokens_details": {"cached_tokens": "x"},
            "completion_tokens_details": {"reasoning_tokens": {"n": 1}},
            "cost": float("nan"),
        }
    )
    assert (counted.input_tokens, counted.output_tokens, counted.estimated) == (12, 4, False)
    assert (counted.cached_tokens, counted.reasoning_tokens) == (0, 0)
    assert counted.cost_usd is None or not math.isnan(counted.cost_usd)


async def test_usage_in_the_responses_api_names_is_counted() -> None:
    counted = await _usage_of(
        {
            "input_tokens": 11,
            "output_tokens": 3,
            "total_tokens": 14,
            "input_tokens_details": {"cached_tokens": 4},
            "output_tokens_details": {"reasoning_tokens": 2},
        }
    )
    assert counted == Usage(input_tokens=11, output_tokens=3, cached_tokens=4, reasoning_tokens=2)


async def test_numeric_strings_and_whole_floats_still_count() -> None:
    counted = await _usage_of({"prompt_tokens": "5", "completion_tokens": 2.0, "cost": 0.25})
    assert (counted.input_tokens, counted.output_tokens, counted.cost_usd) == (5, 2, 0.25)
