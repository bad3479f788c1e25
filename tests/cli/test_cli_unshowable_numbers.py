"""A trace line's number no reader can show, beyond its time: ``NaN``, ``Infinity``,
``1e999`` (Python's json reads them as floats) or ``"1e999"`` (a float's structuring reads it
as one) as a cost, a call's or a tool's duration, or a delegate's child counts. Before,
``rho-agent stats`` said ``cost ~$nan`` and ``model time nan s``, ``stats --json`` and both
exports wrote ``NaN`` or ``Infinity``, which no JSON parser reads, and a child count of
``Infinity`` failed every fold of the session's state (``OverflowError``). Such a number is
now what rho-agent writes when it knows nothing (``rho_domain.shown_numbers``)."""

from __future__ import annotations

import itertools
import json
import re
from pathlib import Path

from cli_support import rho

from rho_adapters.codec import decode_event_line
from rho_domain.control_events import ModelRetrying
from rho_domain.messages import Usage
from rho_domain.state import State

_UNSHOWABLE = ("NaN", "Infinity", "-Infinity", "1e999", '"1e999"')
_FIELDS = r'"(cost_usd|duration|first_output_after)": ?[^,}]+'
_COUNTS = r'"(input_tokens|output_tokens|prompt_tokens|context_tokens|call_index)": ?\d+'
_ODD_COUNTS = ("9" * 4300, "-7")  # json reads 4,300 digits; str() of a sum of two refuses


def _strict(text: str) -> object:
    def refuse(constant: str) -> object:
        raise AssertionError(f"{constant} in the output, which JSON.parse refuses")

    return json.loads(text, parse_constant=refuse)


def test_a_number_no_reader_can_show_is_none_known(tmp_path: Path) -> None:
    assert rho("-m", "demo", "hi", cwd=tmp_path, home=tmp_path).returncode == 0
    (trace,) = tmp_path.rglob("trace.jsonl")
    odd = itertools.cycle(_UNSHOWABLE)
    text = re.sub(_FIELDS, lambda m: f'"{m[1]}": {next(odd)}', trace.read_text())
    assert len(re.findall(_FIELDS, text)) >= 2 * len(_UNSHOWABLE), text
    counts = itertools.cycle(_ODD_COUNTS)
    text = re.sub(_COUNTS, lambda m: f'"{m[1]}": {next(counts)}', text)
    assert text.count("9" * 4300) >= 4, text
    assert text.count("-7") >= 4, text
    text = text.replace('"metadata":{"count":1}', '"metadata":{"count":NaN,"n":[Infinity]}', 1)
    assert "[Infinity]" in text, text  # the rho export wrote them back
    trace.write_text(text)
    stats = rho("stats", "latest", cwd=tmp_path, home=tmp_path)
    assert stats.returncode == 0, stats.stderr
    assert not re.search(r"nan|inf", stats.stdout, re.IGNORECASE), stats.stdout
    for args in (("stats", "latest", "--json"), ("export", "latest", "--format", "atif")):
        done = rho(*args, cwd=tmp_path, home=tmp_path)
        assert done.returncode == 0, done.stderr
        _strict(done.stdout)
        assert not re.search(r"-7\b|9{301}", done.stdout), done.stdout  # a count is 0 then
    exported = rho("export", "latest", cwd=tmp_path, home=tmp_path)
    for line in exported.stdout.splitlines():
        _strict(line)


def test_sums_and_child_counts_stay_showable() -> None:
    assert Usage(cost_usd=1e299) + Usage(cost_usd=1e299) == Usage(cost_usd=2e299)
    assert (Usage(cost_usd=9e299) + Usage(cost_usd=9e299)).cost_usd is None  # past the bound
    for odd in _UNSHOWABLE[:4]:
        line = (
            '{"v":1,"kind":"tool_end","at":1,"call_id":"c","tool_name":"delegate","content":"",'
            f'"is_error":false,"duration":{odd},"metadata":{{"child_model_calls":{odd},'
            f'"child_tool_calls":{odd},"child_cost_usd":{odd}}}}}'
        )
        state = State.from_events([decode_event_line(line.encode())])
        assert (state.child_calls, state.child_tools, state.child_cost) == (0, 0, 0.0), odd
    for big_or_negative in (*_ODD_COUNTS, "1" + "0" * 301):
        line = (
            f'{{"v":1,"kind":"retry","at":1,"delay":NaN,"reason":"429",'
            f'"attempt":{big_or_negative},"attempts":{big_or_negative}}}'
        )
        retry = decode_event_line(line.encode())
        assert isinstance(retry, ModelRetrying)
        assert (retry.delay, retry.attempt, retry.attempts) == (0.0, 0, 0), retry
        assert Usage(input_tokens=int(big_or_negative)).input_tokens == 0
    line = '{"v":1,"kind":"run_end","at":1,"run_id":"r","status":"completed",'
    line += '"output":[NaN,{"a":1e999}]}'
    assert decode_event_line(line.encode()).output == [None, {"a": None}]  # type: ignore[union-attr]
