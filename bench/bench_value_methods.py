"""The shared ``__eq__``, ``__hash__`` and ``__repr__`` of our values against attrs' generated ones.

``rho_domain/value_methods.py`` gives every attrs class of ours one shared method each instead
of the per-class ones attrs compiles (docs/benchmarks.md, the eighteenth round). This times one
call of each on real classes of ours (``ToolCall``, three fields; ``Budget``, ten) beside a twin
class with the same fields whose methods attrs generates, in the same process, so the ratio
holds on a loaded machine where the nanoseconds do not. CPU time (``time.process_time``), the
best of ``--repeat`` rounds of ``--number`` calls. Run it with ``PYTHONPATH`` at another tree's
``src`` to time that tree's methods.

Usage: python bench/bench_value_methods.py [--number 100000] [--repeat 7]
"""

from __future__ import annotations

import argparse
import timeit
from collections.abc import Sequence
from time import process_time
from typing import Any

import attrs

from rho_domain.config import Budget
from rho_domain.messages import ToolCall


def attrs_twin(cls: type) -> type:
    """A class with ``cls``'s fields whose methods attrs generates (compiles)."""
    fields = attrs.fields(cls)
    these = {
        f.name: attrs.field(default=f.default, repr=f.repr, eq=f.eq, hash=f.hash, init=f.init)
        for f in fields
    }
    return attrs.make_class(cls.__name__, these, frozen=True, slots=True)


def per_call(stmt: str, names: dict[str, Any], number: int, repeat: int) -> float:
    """Nanoseconds of CPU per run of ``stmt``, the best of ``repeat`` rounds."""
    best = min(timeit.repeat(stmt, number=number, repeat=repeat, timer=process_time, globals=names))
    return best / number * 1e9


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--number", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args(argv)
    values: list[tuple[str, type, dict[str, Any]]] = [
        ("ToolCall", ToolCall, {"id": "c1", "name": "read", "arguments": '{"path": "a.txt"}'}),
        ("Budget", Budget, {"max_tool_calls": 2, "max_cost_usd": 1.5}),
    ]
    print(f"{'value':<10} {'method':<6} {'ours ns':>9} {'attrs ns':>9} {'ratio':>6}")
    for label, cls, kwargs in values:
        twin = attrs_twin(cls)
        ours = {"a": cls(**kwargs), "b": cls(**kwargs)}
        theirs = {"a": twin(**kwargs), "b": twin(**kwargs)}
        for method, stmt in (("==", "a == b"), ("hash", "hash(a)"), ("repr", "repr(a)")):
            mine = per_call(stmt, ours, args.number, args.repeat)
            generated = per_call(stmt, theirs, args.number, args.repeat)
            print(
                f"{label:<10} {method:<6} {mine:>9.0f} {generated:>9.0f} {mine / generated:>5.2f}x"
            )


if __name__ == "__main__":
    main()
