"""A trace line's cost no reader can show (``"cost_usd": NaN``, ``Infinity``, ``1e999``,
which Python's json reads as floats, or ``"1e999"``, which a float's structuring reads as
one): before, ``rho-agent stats`` said ``cost ~$nan``, and ``stats --json`` and both exports
wrote ``NaN`` or ``Infinity``, which no JSON parser reads. Such a cost is now no known cost
(``Usage``'s ``cost_usd`` is None), in every total it would have entered."""

from __future__ import annotations

import itertools
import json
import re
from pathlib import Path

from cli_support import rho

from rho_domain.messages import Usage

_UNSHOWABLE = ("NaN", "Infinity", "-Infinity", "1e999", '"1e999"')


def _strict(text: str) -> object:
    def refuse(constant: str) -> object:
        raise AssertionError(f"{constant} in the output, which JSON.parse refuses")

    return json.loads(text, parse_constant=refuse)


def test_a_cost_no_reader_can_show_is_no_known_cost(tmp_path: Path) -> None:
    assert rho("-m", "demo", "hi", cwd=tmp_path, home=tmp_path).returncode == 0
    (trace,) = tmp_path.rglob("trace.jsonl")
    costs = itertools.cycle(_UNSHOWABLE)
    text = re.sub(r'"cost_usd": ?[^,}]+', lambda _: f'"cost_usd": {next(costs)}', trace.read_text())
    assert text.count('"cost_usd"') >= len(_UNSHOWABLE), text
    trace.write_text(text)
    stats = rho("stats", "latest", cwd=tmp_path, home=tmp_path)
    assert stats.returncode == 0, stats.stderr
    assert "nan" not in stats.stdout.lower()
    assert "inf" not in stats.stdout.lower()
    for args in (("stats", "latest", "--json"), ("export", "latest", "--format", "atif")):
        done = rho(*args, cwd=tmp_path, home=tmp_path)
        assert done.returncode == 0, done.stderr
        _strict(done.stdout)
    exported = rho("export", "latest", cwd=tmp_path, home=tmp_path)
    for line in exported.stdout.splitlines():
        _strict(line)
    assert Usage(cost_usd=1e299) + Usage(cost_usd=1e299) == Usage(cost_usd=2e299)
    assert (Usage(cost_usd=9e299) + Usage(cost_usd=9e299)).cost_usd is None  # past the bound
