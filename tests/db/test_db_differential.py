"""The check reads a statement as the live engine reads it: a differential property.

Each example glues pieces that lex differently from one reader to the next (comment openers,
quotes, backslashes, dollar quotes, exponents without digits, Unicode spaces, control
characters) around a select list, and asks both readers how many columns it has: the check
(top-level commas in its tokens) and the server (the columns of its answer). Wherever the
check accepts a statement the server runs, the two must agree; a disagreement is a place
where one of them sees code the other took for a comment or a literal, the class of
``SELECT 1 1e-- '...`` (test_db_number_ends.py), found this way on MariaDB.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from db_support import Server
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rho_domain.sql import Kind, classify, dialect, tokenize

COMMON = [
    "--", "-- ", "--\n", "/*", "*/", "'", '"', "\\", "\\\\", "''", "\\'", "N'", "X'", "B'",
    "\n", "\r", "\t", "\v", "\f", "\x85", "\u2028", "\xa0", "\u3000", "\ufeff", "\x1a", "\x7f",
    " ", ";", "a", "1", ".", "e", "-", "*", "/", "(", ")", "$", ",", "AS", "=", "+",
    "1e", "1e-", "E+", "0x", "0b", "1.", ".1", "1a",
]  # fmt: skip
MARIADB = [
    *COMMON, "#", "`", "_utf8'", "_binary'", "_latin1'", "b'", "x'", "n'", "\\N", "&&", "||",
    "!", "<=>", "@", "?", "\x00",
]  # fmt: skip
POSTGRES = [
    *COMMON, "$$", "$a$", "$_$", "$1", "E'", "e'", "U&'", 'U&"', " UESCAPE '!'", "/* /*",
    "*/ */", "::", "[", "]", "#", "$a", "a$", "$\u00e9$", "\u00e9", "&", "|", "~", "!", "^",
    "%", "1_0", "0o",
]  # fmt: skip
SHAPES = [
    "SELECT 1{x}, 2{y}",
    "SELECT 1 {x} , 2 {y} , 3",
    "SELECT '{x}' , {y} 2",
    "SELECT 1{x}\n, 2{y}\n, 3",
    "SELECT {x}1 {y}\n, 2",
]


def _columns(sql: str, engine: str) -> int:
    """The select list's length as the check reads it (commas outside parentheses)."""
    depth, count = 0, 1
    for token in tokenize(sql, dialect(engine).reading_for(frozenset())[0]):
        if token.kind is Kind.PUNCT and token.text in "()":
            depth += 1 if token.text == "(" else -1
        elif token.kind is Kind.PUNCT and token.text == "," and depth == 0:
            count += 1
    return count


def _statements(pieces: list[str]) -> st.SearchStrategy[str]:
    glue = st.lists(st.sampled_from(pieces), min_size=0, max_size=4).map("".join)
    return st.builds(
        lambda shape, x, y: shape.format(x=x, y=y), st.sampled_from(SHAPES), glue, glue
    )


@pytest.fixture(scope="module")
def maria_conn(request: pytest.FixtureRequest) -> Iterator[Any]:
    server: Server = request.getfixturevalue("mariadb_server")
    conn = server.admin()
    conn.autocommit(True)
    yield conn
    conn.close()


@pytest.fixture(scope="module")
def pg_conn(request: pytest.FixtureRequest) -> Iterator[Any]:
    server: Server = request.getfixturevalue("postgres_server")
    conn = server.admin()
    conn.autocommit = True
    yield conn
    conn.close()


def _agree(sql: str, engine: str, run: Any) -> None:
    if not classify(sql, engine, settings=frozenset()).read_only:
        return
    try:
        served = run(sql)
    except Exception:  # noqa: BLE001 - the server refused the text: nothing ran
        return
    assert served == _columns(sql, engine), f"the check and the server read {sql!r} apart"


_SETTINGS = settings(
    max_examples=400,
    derandomize=True,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


@_SETTINGS
@given(sql=_statements(MARIADB))
def test_the_check_and_mariadb_count_the_same_columns(maria_conn: Any, sql: str) -> None:
    def run(text: str) -> int:
        with maria_conn.cursor() as cursor:
            cursor.execute(text)
            return len(cursor.description or ())

    _agree(sql, "mysql", run)


@_SETTINGS
@given(sql=_statements(POSTGRES))
def test_the_check_and_postgres_count_the_same_columns(pg_conn: Any, sql: str) -> None:
    def run(text: str) -> int:
        with pg_conn.cursor() as cursor:
            cursor.execute(text, prepare=True)
            return len(cursor.description or ())

    _agree(sql, "postgres", run)


# Where a token ends right before a comment opener, every reader must agree where the token
# ends: "1e-" took one dash of "--" from the comment (the MariaDB hole). Each pair below is
# tried, all of them, before a comment that hides an opener the next line closes again.
ENDINGS = [
    "1", "1e", "1E", "1e-", "1e+", "1.", "1.5e", ".5e", "0x", "0x1e", "0b", "0b1", "1a",
    "12e", "a", "a$", "$", "x'1'", "'s'", "e", "N", "`q`", '"q"', "1e1", "9.e-",
]  # fmt: skip
COMMENTS = {"mysql": ["--", "-- ", "--\t", "#", "/* */"], "postgres": ["--", "-- ", "/* */"]}
OPENERS = [("'", "'"), ('"', '"'), ("`", "`"), ("/*", "*/"), ("$a$", "$a$")]


@pytest.mark.parametrize("engine", ["mysql", "postgres"])
def test_every_token_ending_before_a_comment_reads_alike(
    engine: str, request: pytest.FixtureRequest
) -> None:
    conn = request.getfixturevalue("maria_conn" if engine == "mysql" else "pg_conn")

    def run(text: str) -> int:
        with conn.cursor() as cursor:
            if engine == "mysql":
                cursor.execute(text)
            else:
                cursor.execute(text, prepare=True)
            return len(cursor.description or ())

    for ending in ENDINGS:
        for comment in COMMENTS[engine]:
            for opener, closer in OPENERS:
                for head in ("SELECT 1 ", "SELECT "):
                    _agree(f"{head}{ending}{comment} {opener}\n, 2 -- {closer}\n", engine, run)
