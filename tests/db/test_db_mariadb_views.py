"""A MariaDB view runs what its query calls, a stored function with its definer's rights.

An administrator's view ``rho_v_tune`` (``SQL SECURITY DEFINER``, definer root) selects a
stored function that runs ``SET GLOBAL max_connections``: ``SELECT * FROM rho_v_tune`` names
no function, so the check let it through, and the read-only transaction does not stop a
``SET GLOBAL`` (an ``INSERT`` in such a function it does stop): the server's setting
changed. Now the adapter reads the views' queries on connect and the check judges a view's
query where the view is named (through views over views too), as it judges a call.
"""

from __future__ import annotations

from collections.abc import Iterator

import attrs
import pytest
from db_support import Server, adapter, mariadb_objects, max_connections

from rho_adapters.db import ADAPTERS
from rho_domain.errors import StatementRefused

SETUP = [
    "CREATE DEFINER=root@localhost FUNCTION rho_tune() RETURNS int SQL SECURITY DEFINER "
    "BEGIN SET GLOBAL max_connections = @@GLOBAL.max_connections + 7; RETURN 1; END",
    "CREATE DEFINER=root@localhost SQL SECURITY DEFINER VIEW rho_v_tune AS SELECT rho_tune() AS a",
    "CREATE VIEW rho_v_over AS SELECT a FROM rho_v_tune",
    # a view whose query names itself (a column): judged once, not around a loop
    "CREATE VIEW rho_v_self AS SELECT id AS rho_v_self FROM users",
]
TEARDOWN = [
    "DROP VIEW IF EXISTS rho_v_late",
    "DROP VIEW IF EXISTS rho_v_self",
    "DROP VIEW IF EXISTS rho_v_over",
    "DROP VIEW IF EXISTS rho_v_tune",
    "DROP FUNCTION IF EXISTS rho_tune",
]
ATTACKS = ["SELECT * FROM rho_v_tune", "SELECT a FROM `rho_v_over` WHERE a = 1"]


@pytest.fixture
def tuning_view(mariadb_server: Server) -> Iterator[tuple[Server, object]]:
    with mariadb_objects(mariadb_server, SETUP, TEARDOWN) as cursor:
        yield mariadb_server, cursor


async def test_a_view_calling_a_stored_function_is_refused_where_it_is_named(
    tuning_view: tuple[Server, object],
) -> None:
    server, cursor = tuning_view
    before = max_connections(cursor)
    db = adapter(server)
    try:
        for sql in ATTACKS:
            with pytest.raises(StatementRefused) as info:
                await db.query(sql, max_rows=5, timeout=5)
            assert info.value.by == "check", (sql, info.value)
            assert "the view rho_v_tune runs" in str(info.value), sql
            assert "rho_tune()" in str(info.value), sql
        # views over plain columns still read (the seed's big_orders)
        result = await db.query(
            "SELECT COUNT(*), (SELECT MAX(rho_v_self) FROM rho_v_self) FROM big_orders",
            max_rows=5,
            timeout=5,
        )
        assert result.rows == ((17, 20),)
    finally:
        await db.aclose()
    assert max_connections(cursor) == before


async def test_without_the_check_the_view_changes_a_server_setting(
    tuning_view: tuple[Server, object],
) -> None:
    """The target is real: the read-only transaction lets the function's SET GLOBAL run."""
    server, cursor = tuning_view
    before = max_connections(cursor)
    db = adapter(server, check=False)
    try:
        for sql in ATTACKS:
            assert (await db.query(sql, max_rows=5, timeout=5)).rows == ((1,),)
    finally:
        await db.aclose()
    assert max_connections(cursor) == before + 7 * len(ATTACKS)


async def test_a_view_made_after_the_connection_opened_is_judged_by_its_query(
    tuning_view: tuple[Server, object],
) -> None:
    """The views were read once per connection: one made (or replaced) afterwards ran
    unjudged on the open connection. Both adapters connect before the view exists; the one
    without the check shows the target is real."""
    server, cursor = tuning_view
    checked, unchecked = adapter(server), adapter(server, check=False)
    try:
        for db in (checked, unchecked):
            assert (await db.query("SELECT 1", max_rows=1, timeout=5)).rows == ((1,),)
        cursor.execute(  # type: ignore[attr-defined]
            "CREATE DEFINER=root@localhost SQL SECURITY DEFINER VIEW rho_v_late "
            "AS SELECT rho_tune() AS a"
        )
        before = max_connections(cursor)
        with pytest.raises(StatementRefused, match="the view rho_v_late runs") as info:
            await checked.query("SELECT * FROM rho_v_late", max_rows=5, timeout=5)
        assert info.value.by == "check"
        assert max_connections(cursor) == before
        await unchecked.query("SELECT * FROM rho_v_late", max_rows=5, timeout=5)
        assert max_connections(cursor) == before + 7
    finally:
        await checked.aclose()
        await unchecked.aclose()


HIDDEN_SETUP = [
    "CREATE USER IF NOT EXISTS 'rho_noshow'@'%' IDENTIFIED BY 'pw-noshow'",
    "GRANT SELECT ON rho.* TO 'rho_noshow'@'%'",
    "CREATE DEFINER=root@localhost SQL SECURITY DEFINER VIEW rho_v_hashes AS "
    "SELECT User AS u, Password AS p FROM mysql.user WHERE User = 'rho_noshow'",
]
HIDDEN_TEARDOWN = ["DROP VIEW IF EXISTS rho_v_hashes", "DROP USER IF EXISTS 'rho_noshow'@'%'"]


async def test_a_view_whose_query_the_login_may_not_read_is_refused(
    tuning_view: tuple[Server, object],
) -> None:
    """A login granted SELECT without SHOW VIEW sees every view's query empty, so the views
    went unjudged: through an administrator's definer views it read ``mysql.user``'s password
    hash and ran a stored function's ``SET GLOBAL``. Now such a view is refused where named,
    saying what to grant; the unchecked adapter shows both targets are real."""
    server, cursor = tuning_view
    for sql in HIDDEN_TEARDOWN + HIDDEN_SETUP:
        cursor.execute(sql)  # type: ignore[attr-defined]
    login = attrs.evolve(server.config, user="rho_noshow")
    checked, unchecked = (
        ADAPTERS["mysql"]("t", login, password="pw-noshow", check_statements=check)
        for check in (True, False)
    )
    try:
        before = max_connections(cursor)
        for sql in ("SELECT p FROM rho_v_hashes", *ATTACKS):
            with pytest.raises(StatementRefused, match="hides its query from this login") as info:
                await checked.query(sql, max_rows=5, timeout=5)
            assert info.value.by == "check"
            assert "GRANT SHOW VIEW" in str(info.value)
        assert max_connections(cursor) == before
        hashes = await unchecked.query("SELECT p FROM rho_v_hashes", max_rows=5, timeout=5)
        assert str(hashes.rows[0][0]).startswith("*")  # the mysql_native_password hash
        await unchecked.query(ATTACKS[0], max_rows=5, timeout=5)
        assert max_connections(cursor) == before + 7
    finally:
        await checked.aclose()
        await unchecked.aclose()
        for sql in HIDDEN_TEARDOWN:
            cursor.execute(sql)  # type: ignore[attr-defined]


UNSEEN_SETUP = [
    "CREATE USER IF NOT EXISTS 'rho_seer'@'%' IDENTIFIED BY 'pw-seer'",
    "GRANT SELECT, SHOW VIEW ON rho.* TO 'rho_seer'@'%'",
    "CREATE DATABASE rho_unseen",
    "CREATE DEFINER=root@localhost SQL SECURITY DEFINER VIEW rho_unseen.tune "
    "AS SELECT rho.rho_tune() AS a",
    "CREATE DEFINER=root@localhost SQL SECURITY DEFINER VIEW rho_unseen.hashes "
    "AS SELECT User AS u, Password AS p FROM mysql.user WHERE User = 'rho_seer'",
    "CREATE DEFINER=root@localhost VIEW rho_v_unseen_tune AS SELECT a FROM rho_unseen.tune",
    "CREATE DEFINER=root@localhost VIEW rho_v_unseen_hashes AS "
    "SELECT h.p FROM rho_unseen.hashes h JOIN users ON users.id = 1",
    # the SEQUENCE engine's tables, which information_schema does not list, every login reads
    "CREATE DEFINER=root@localhost VIEW rho_v_seq AS SELECT seq FROM seq_1_to_3",
    # an administrator's view over a table the login may not read: the usual column filter
    "CREATE TABLE rho_unseen.raw (id INT, secret VARCHAR(10))",
    "INSERT INTO rho_unseen.raw VALUES (1, 'x')",
    "CREATE DEFINER=root@localhost VIEW rho_v_unseen_raw AS SELECT id FROM rho_unseen.raw",
]
UNSEEN_TEARDOWN = [
    "DROP VIEW IF EXISTS rho_v_unseen_tune, rho_v_unseen_hashes, rho_v_seq, rho_v_unseen_raw",
    "DROP DATABASE IF EXISTS rho_unseen",
    "DROP USER IF EXISTS 'rho_seer'@'%'",
]


async def test_a_definers_view_over_what_the_login_cannot_see_is_refused(
    tuning_view: tuple[Server, object],
) -> None:
    """A login granted SELECT and SHOW VIEW on ``rho`` reads its views' queries, but not
    those of a database it has no privilege on: ``rho.rho_v_unseen_tune`` selects from
    ``rho_unseen.tune``, which calls the stored function, and the check, judging the outer
    query only, let it run the ``SET GLOBAL``; ``rho_v_unseen_hashes`` read mysql.user's
    hash the same way. Now a definer's view reading a relation the login cannot see is
    refused where named; views over what it sees (``big_orders``) still read, and so do
    those over the SEQUENCE engine's ``seq_1_to_3``."""
    server, cursor = tuning_view
    for sql in UNSEEN_TEARDOWN + UNSEEN_SETUP:
        cursor.execute(sql)  # type: ignore[attr-defined]
    login = attrs.evolve(server.config, user="rho_seer")
    checked, unchecked = (
        ADAPTERS["mysql"]("t", login, password="pw-seer", check_statements=check)
        for check in (True, False)
    )
    try:
        before = max_connections(cursor)
        for sql, unseen in (
            ("SELECT * FROM rho_v_unseen_tune", "rho_unseen.tune"),
            ("SELECT p FROM rho_v_unseen_hashes", "rho_unseen.hashes"),
        ):
            with pytest.raises(StatementRefused, match=f"reads {unseen} as its definer") as info:
                await checked.query(sql, max_rows=5, timeout=5)
            assert info.value.by == "check"
        assert max_connections(cursor) == before
        for sql, count in (("big_orders", 17), ("rho_v_seq", 3)):
            read = await checked.query(f"SELECT COUNT(*) FROM {sql}", max_rows=1, timeout=5)
            assert read.rows == ((count,),)
        # the refusal's remedy: the login sees rho_unseen, none of its rows; a view over its
        # table reads, those over its views stay refused (their queries hidden)
        raw = "SELECT id FROM rho_v_unseen_raw"
        with pytest.raises(StatementRefused, match=r"GRANT SHOW VIEW ON rho_unseen\.\*"):
            await checked.query(raw, max_rows=5, timeout=5)
        cursor.execute("GRANT SHOW VIEW ON rho_unseen.* TO 'rho_seer'@'%'")  # type: ignore[attr-defined]
        assert (await checked.query(raw, max_rows=5, timeout=5)).rows == ((1,),)
        with pytest.raises(StatementRefused, match="the view hashes hides its query"):
            await checked.query("SELECT p FROM rho_v_unseen_hashes", max_rows=5, timeout=5)
        hashes = await unchecked.query("SELECT p FROM rho_v_unseen_hashes", max_rows=5, timeout=5)
        assert str(hashes.rows[0][0]).startswith("*")
        await unchecked.query("SELECT * FROM rho_v_unseen_tune", max_rows=5, timeout=5)
        assert max_connections(cursor) == before + 7
    finally:
        await checked.aclose()
        await unchecked.aclose()
        for sql in UNSEEN_TEARDOWN:
            cursor.execute(sql)  # type: ignore[attr-defined]
