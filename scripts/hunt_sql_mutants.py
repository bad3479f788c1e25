"""Look for a statement that tells a surviving SQL mutant from the original.

mutmut reports a mutant as surviving when no test fails; this says whether a test *could*
fail. Run it in a kept mutation work directory (``KEEP=1 bash scripts/mutation.sh sql``), in
its ``mutants/`` folder, where every function dispatches on ``MUTANT_UNDER_TEST`` at each
call, so the original and a mutant can be compared in one process:

    cd /tmp/rho-mutation-sql.XXXX/mutants
    PYTHONPATH=src python /path/to/scripts/hunt_sql_mutants.py NAME [NAME ...]

For each mutant it judges the statements of the tests' tables and corpora, then random
edits of them and random token strings (``HUNT_N`` in all, default 60,000; seeded, so a run
repeats), on every dialect, and prints the shortest statement whose ``classify`` verdict (or
``tokenize`` output with ``HUNT_MODE=tokens``) differs: a row to add to the tests. "No
difference" after the whole budget is the evidence docs/testing.md gives for an equivalent
mutant, together with the reason read in the code.
"""

from __future__ import annotations

import os
import random
import sys
from collections.abc import Iterator
from typing import Any

os.environ["MUTANT_UNDER_TEST"] = ""
sys.path.insert(0, "tests/db")

from rho_domain.sql import classify, tokenize
from rho_domain.sql.dialects import dialect

DIALECTS = ("postgres", "mysql", "sqlite", "oracle", "vertica")
# fmt: off
WORDS = (
    "SELECT", "WITH", "RECURSIVE", "AS", "NOT", "MATERIALIZED", "a", "b", "c", "(", ")", ",",
    "OPERATOR", "pg_catalog", ".", "+", "f", "lower", "FROM", "t", "EXPLAIN", "CASE", "WHEN",
    "END", "BY", "ORDER", "GROUP", "1", "'x'", "$1", "::", "[", "]", "=", "ANALYZE", "DESCRIBE",
    "public", '"q"', 'U&"a"', "$$x$$", "q'[x]'", "/*c*/", "--c\n", ";", "INTO", "OVER",
    "ROLLUP", "CUBE", "GROUPING", "SETS", "VALUES", "TABLE", "SHOW", "PRAGMA", "table_info",
    "main", "LIKE", "int", "numeric", "DOUBLE", "PRECISION", "ARRAY", "ROW", "sys", "dbms_x",
)
# fmt: on


def corpus() -> list[str]:
    """Every statement of the SQL tests' tables and of the attack and allowed corpora."""
    import db_attacks
    import test_db_units

    found: set[str] = set()
    for value in vars(test_db_units).values():
        if isinstance(value, list):
            for row in value:
                if isinstance(row, tuple):
                    found.update(x for x in row if isinstance(x, str) and " " in x)
    for statements in (*db_attacks.ATTACKS.values(), *db_attacks.ALLOWED.values()):
        found.update(statements)
    return sorted(found)


def statements(known: list[str], rng: random.Random) -> Iterator[str]:
    """The known statements, then random edits of them and random token strings."""
    yield from known
    while True:
        if rng.random() < 0.5:
            words = rng.choice(known).split(" ")
            for _ in range(rng.randint(1, 3)):
                at = rng.randrange(len(words) + 1)
                pick = rng.random()
                if pick < 0.4:
                    words.insert(at, rng.choice(WORDS))
                elif pick < 0.7 and len(words) > 1:
                    del words[min(at, len(words) - 1)]
                else:
                    words.insert(at, words[rng.randrange(len(words))])
            yield " ".join(words)
        else:
            yield " ".join(rng.choice(WORDS) for _ in range(rng.randint(2, 12)))


def judge(sql: str, dialect_name: str, mutant: str, mode: str) -> Any:
    """What the code says of ``sql`` with ``mutant`` switched on ("" for the original)."""
    os.environ["MUTANT_UNDER_TEST"] = mutant
    try:
        if mode == "tokens":
            return [tuple(tokenize(sql, rules)) for rules in dialect(dialect_name).readings]
        verdict = classify(sql, dialect_name)
        return (verdict.read_only, verdict.reason, verdict.kind)
    except Exception as exc:  # noqa: BLE001 - a mutant that raises is a difference too
        return ("raises", type(exc).__name__, str(exc))
    finally:
        os.environ["MUTANT_UNDER_TEST"] = ""


def hunt(mutant: str, known: list[str], budget: int, mode: str) -> str:
    """A report line: the shortest distinguishing statement, or that none was found."""
    best: tuple[str, str, Any, Any] | None = None
    for count, sql in enumerate(statements(known, random.Random(1))):
        if count >= budget or (best is not None and count > len(known) + 3000):
            break
        for name in DIALECTS:
            original, mutated = judge(sql, name, "", mode), judge(sql, name, mutant, mode)
            if original != mutated and (best is None or len(sql) < len(best[0])):
                best = (sql, name, original, mutated)
    if best is None:
        return f"no difference in {budget:,} statements: {mutant}"
    sql, name, original, mutated = best
    return f"KILLABLE {mutant}\n  {name}: {sql!r}\n  original: {original}\n  mutant:   {mutated}"


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__, file=sys.stderr)
        return 2
    known = corpus()
    budget = int(os.environ.get("HUNT_N", "60000"))
    mode = os.environ.get("HUNT_MODE", "classify")
    for mutant in argv:
        print(hunt(mutant, known, budget, mode), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
