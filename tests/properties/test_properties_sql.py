"""The read-only SQL check is deny-by-default across lexer readings: a statement passes only
when every reading of its dialect (server settings change how text lexes) reads it as one
read statement, and nothing a reading refuses is accepted."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rho_domain.errors import StatementRefused
from rho_domain.sql.classify import _classify, check_read_only, classify
from rho_domain.sql.dialects import dialect
from rho_domain.sql.lexer import tokenize

DIALECTS = ["sqlite", "postgres", "mysql", "oracle", "vertica"]
# Pieces that lex differently from one dialect or server setting to the next: quotes with
# backslashes, dollar quotes, nested and executable comments, "#" and "--" comments.
PIECES = st.sampled_from(
    [
        "SELECT", "WITH", "VALUES", "TABLE", "SHOW", "EXPLAIN", "PRAGMA", "DESCRIBE", "a", "t",
        "FROM", "WHERE", "AS", "(", ")", ",", ";", "*", "1", "=", ".", "'x'", "'a''b'",
        "'a\\'", "'\\''", '"q"', '"a\\"', "`b`", "[c]", "$$ d $$", "$t$ e $t$", "E'\\''",
        "q'[ f ]'", "-- c\n", "--c\n", "# h\n", "/* m */", "/* /* n */ */", "/*! x */",
        "INTO", "DROP", "FOR", "UPDATE", "pg_sleep", "load_file", "dbms_lock", "sleep",
        "insert", "replace", "'", '"', "$1", "?", ":n", "\n", "table_info",
    ]
)  # fmt: skip
STATEMENTS = st.lists(PIECES, min_size=1, max_size=10).map(" ".join) | st.lists(
    PIECES, min_size=1, max_size=10
).map("".join)
# Half of the examples start as a read statement, so that acceptance is exercised too.
CANDIDATES = STATEMENTS | STATEMENTS.map(lambda s: "SELECT " + s)


def reading_accepts(sql: str, dialect_name: str, index: int) -> bool:
    d = dialect(dialect_name)
    try:
        tokens = tokenize(sql, d.readings[index])
    except StatementRefused:
        return False
    return _classify(tokens, d, frozenset()).read_only


@pytest.mark.parametrize("name", DIALECTS)
@given(sql=CANDIDATES)
def test_accepted_only_when_every_reading_accepts(name: str, sql: str) -> None:
    verdict = classify(sql, name)
    per_reading = [reading_accepts(sql, name, i) for i in range(len(dialect(name).readings))]
    assert verdict.read_only == all(per_reading)
    if not verdict.read_only:
        assert verdict.reason
        with pytest.raises(StatementRefused):
            check_read_only(sql, name)
    else:
        assert check_read_only(sql, name) == verdict


@pytest.mark.parametrize("name", DIALECTS)
@given(sql=CANDIDATES)
def test_nothing_follows_an_accepted_statement(name: str, sql: str) -> None:
    # Every reading lexed an accepted statement to its end, so text after a line end is
    # outside any literal or comment in all of them: a second statement is refused.
    if classify(sql, name).read_only:
        assert not classify(sql + "\n; DROP TABLE t", name).read_only
        assert not classify(sql + "\n; SELECT 1", name).read_only


@pytest.mark.parametrize("name", DIALECTS)
@given(sql=st.text(max_size=60) | CANDIDATES)
def test_classify_never_raises(name: str, sql: str) -> None:
    assert isinstance(classify(sql, name).read_only, bool)
