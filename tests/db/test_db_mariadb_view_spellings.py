"""A definer's view over what the login cannot see, spelled so the relation finder missed it.

The adapter refuses a definer's view reading a relation this login cannot see, finding the
relations in the view's query as MariaDB writes it. Three spellings slipped past (each
measured against a definer's view calling a stored function's ``SET GLOBAL``, or over
``mysql.user``):

- an alias or a column named like the hidden database (`` from `hid`.`tune` `hid` ``):
  a first part that qualified a column anywhere was taken for an alias;
- a case the server tells apart (``lower_case_table_names=0``, Linux's default): the names
  were compared lower-cased, so ``RHO_SEEN.tune`` passed as the visible ``rho_seen.tune``,
  ``rho_hid.SEQ_1_TO_3`` as the SEQUENCE engine's ``seq_1_to_3``, and ``Sys.version`` as the
  server's own ``sys`` schema, whose views were not read either; and a view whose definer
  was ``'RHO_SPELLER'@'%'`` (every privilege) passed as the login ``'rho_speller'@'%'``'s
  own, judged by its query alone; and an administrator's view in ``mysql`` (calling the
  function) was taken for the installer's, never judged, named or read through another;
  and a view named ``rho_sp_Vİew`` or ``rho_sp_ẞig`` was keyed by Python's lower case, which
  the check, folding as the server does, never looked up; and ``rho_hid.seq_٣_to_5`` (an
  Arabic-Indic three, which Python's ``\\d`` reads as a digit and the SEQUENCE engine does not)
  passed as the engine's; and a stored function ``Sys.format_bytes()`` passed as the ``sys``
  schema's the check allows (a call's schema was folded to lower case).
"""

from __future__ import annotations

from collections.abc import Iterator

import attrs
import pytest
from db_support import Server, mariadb_objects, max_connections

from rho_adapters.db import ADAPTERS
from rho_domain.errors import StatementRefused

SETUP = [
    "CREATE DEFINER=root@localhost FUNCTION rho_spell_tune() RETURNS int SQL SECURITY DEFINER "
    "BEGIN SET GLOBAL max_connections = @@GLOBAL.max_connections + 7; RETURN 1; END",
    "CREATE USER 'rho_speller'@'%' IDENTIFIED BY 'pw-speller'",
    "GRANT SELECT, SHOW VIEW ON rho.* TO 'rho_speller'@'%'",
    # another user whose name differs from the login's by case alone
    "CREATE USER 'RHO_SPELLER'@'%' IDENTIFIED BY 'pw-other'",
    "GRANT ALL ON *.* TO 'RHO_SPELLER'@'%'",
    "CREATE DATABASE rho_hid",
    "CREATE DATABASE rho_seen",
    "CREATE DATABASE RHO_SEEN",
    "CREATE DATABASE Sys",
    "GRANT SELECT, SHOW VIEW ON rho_seen.* TO 'rho_speller'@'%'",
    "GRANT SELECT, SHOW VIEW, EXECUTE ON `Sys`.* TO 'rho_speller'@'%'",
    # a function of that database named like one of sys's the check allows
    "CREATE DEFINER=root@localhost FUNCTION `Sys`.format_bytes(x BIGINT) RETURNS text "
    "SQL SECURITY DEFINER BEGIN SET GLOBAL max_connections = @@GLOBAL.max_connections + 7; "
    "RETURN 'x'; END",
    "CREATE TABLE rho_seen.tune (a INT)",
    *(
        f"CREATE DEFINER=root@localhost SQL SECURITY DEFINER VIEW {view} AS {query}"
        for view, query in (
            ("rho_hid.tune", "SELECT rho.rho_spell_tune() AS a"),
            ("RHO_SEEN.tune", "SELECT rho.rho_spell_tune() AS a"),
            ("Sys.version", "SELECT rho.rho_spell_tune() AS a"),
            ("rho_hid.SEQ_1_TO_3", "SELECT User AS seq, Password AS p FROM mysql.user"),
            # an administrator's views in the server's own schema, no installer's
            ("mysql.rho_sp_tune", "SELECT rho.rho_spell_tune() AS a"),
            ("mysql.rho_sp_seen", "SELECT rho.rho_spell_tune() AS a"),
            ("rho_sp_mysql", "SELECT a FROM mysql.rho_sp_tune"),
            # letters whose lower case Python and the check write otherwise
            ("`rho_sp_V\u0130ew`", "SELECT rho.rho_spell_tune() AS a"),
            ("`rho_sp_\u1e9eig`", "SELECT rho.rho_spell_tune() AS a"),
            ("rho_sp_alias", "SELECT rho_hid.a FROM rho_hid.tune AS rho_hid"),
            ("rho_sp_column", "SELECT a AS rho_hid FROM rho_hid.tune"),
            (
                "rho_sp_join",
                "SELECT u.id FROM users u JOIN rho_hid.tune ON 1 = 1 "
                "JOIN users rho_hid ON rho_hid.id = u.id",
            ),
            ("rho_sp_case", "SELECT a FROM RHO_SEEN.tune"),
            ("rho_sp_seq", "SELECT p FROM rho_hid.SEQ_1_TO_3"),
            ("rho_sp_sys", "SELECT a FROM Sys.version"),
            ("rho_sp_sysfn", "SELECT Sys.format_bytes(1) AS a"),
            # not the SEQUENCE engine's: it reads ASCII digits only (an Arabic-Indic three)
            ("`rho_hid`.`seq_\u0663_to_5`", "SELECT rho.rho_spell_tune() AS a"),
            ("rho_sp_digit", "SELECT a FROM `rho_hid`.`seq_\u0663_to_5`"),
            # a `from` inside extract() and trim() reads no relation: still read
            (
                "rho_sp_trim",
                "SELECT trim(both 'x' from u.name) AS n, extract(year from now()) AS y "
                "FROM users u WHERE u.id = 1",
            ),
            # the server writes a JSON_TABLE column's type with its length, int(11): no call
            (
                "rho_sp_json",
                "SELECT jt.x FROM users u JOIN JSON_TABLE('[7]', '$[*]' COLUMNS (x INT PATH '$')) "
                "jt WHERE u.id = 1",
            ),
        )
    ),
]
SETUP.append("GRANT SELECT ON mysql.rho_sp_seen TO 'rho_speller'@'%'")
SETUP.append(
    "CREATE DEFINER='RHO_SPELLER'@'%' SQL SECURITY DEFINER VIEW rho_sp_definer AS "
    "SELECT a FROM rho_hid.tune"
)
TEARDOWN = [
    "DROP VIEW IF EXISTS rho_sp_alias, rho_sp_column, rho_sp_join, rho_sp_case, rho_sp_seq, "
    "rho_sp_sys, rho_sp_sysfn, rho_sp_digit, rho_sp_trim, rho_sp_json, rho_sp_definer, "
    "rho_sp_mysql, mysql.rho_sp_tune, "
    "mysql.rho_sp_seen, `rho_sp_V\u0130ew`, `rho_sp_\u1e9eig`",
    *(f"DROP DATABASE IF EXISTS {name}" for name in ("rho_hid", "rho_seen", "RHO_SEEN", "Sys")),
    "DROP FUNCTION IF EXISTS rho_spell_tune",
    "DROP USER IF EXISTS 'rho_speller'@'%', 'RHO_SPELLER'@'%'",
]
# Each statement and the relation its refusal names: the view reads it as its definer.
CALLING = [
    ("SELECT * FROM rho_sp_alias", "reads rho_hid.tune as its definer"),
    ("SELECT * FROM rho_sp_column", "reads rho_hid.tune as its definer"),
    ("SELECT id FROM rho_sp_join LIMIT 1", "reads rho_hid.tune as its definer"),
    ("SELECT * FROM rho_sp_case", "reads RHO_SEEN.tune as its definer"),
    ("SELECT * FROM rho_sp_sys", "the function rho.rho_spell_tune() is not on"),
    ("SELECT * FROM Sys.version", "the function rho.rho_spell_tune() is not on"),
    ("SELECT Sys.format_bytes(1)", "the function Sys.format_bytes() is not on"),
    ("SELECT * FROM rho_sp_sysfn", "the function Sys.format_bytes() is not on"),
    ("SELECT * FROM rho_sp_definer", "reads rho_hid.tune as its definer"),
    ("SELECT * FROM rho_sp_mysql", "reads mysql.rho_sp_tune as its definer"),
    ("SELECT * FROM rho_sp_digit", "reads rho_hid.seq_\u0663_to_5 as its definer"),
    ("SELECT * FROM mysql.rho_sp_seen", "the view rho_sp_seen"),
    ("SELECT * FROM `rho_sp_V\u0130ew`", "rho_spell_tune"),
    ("SELECT * FROM rho_sp_\u1e9eig", "rho_spell_tune"),
]
HASHES = ("SELECT p FROM rho_sp_seq", "reads rho_hid.SEQ_1_TO_3 as its definer")


@pytest.fixture
def spelled_views(mariadb_server: Server) -> Iterator[object]:
    with mariadb_objects(mariadb_server, SETUP, TEARDOWN) as cursor:
        yield cursor


async def test_a_definers_view_over_the_unseen_is_refused_however_it_is_spelled(
    mariadb_server: Server, spelled_views: object
) -> None:
    """Each view is refused naming what it reads; the unchecked adapter shows every target
    is real (the function's SET GLOBAL runs once per view, the hash is read)."""
    cursor = spelled_views
    login = attrs.evolve(mariadb_server.config, user="rho_speller")
    checked, unchecked = (
        ADAPTERS["mysql"]("t", login, password="pw-speller", check_statements=check)
        for check in (True, False)
    )
    try:
        before = max_connections(cursor)
        for sql, refusal in (*CALLING, HASHES):
            with pytest.raises(StatementRefused) as info:
                await checked.query(sql, max_rows=5, timeout=5)
            assert info.value.by == "check", (sql, info.value)
            assert refusal in str(info.value), (sql, info.value)
        trimmed = await checked.query("SELECT n FROM rho_sp_trim", max_rows=5, timeout=5)
        assert trimmed.rows == (("user1",),)
        json = await checked.query("SELECT x FROM rho_sp_json", max_rows=5, timeout=5)
        assert json.rows == ((7,),)
        assert max_connections(cursor) == before
        for sql, _ in CALLING:
            await unchecked.query(sql, max_rows=5, timeout=5)
        assert max_connections(cursor) == before + 7 * len(CALLING)
        hashes = await unchecked.query(HASHES[0] + " WHERE p <> ''", max_rows=5, timeout=5)
        assert str(hashes.rows[0][0]).startswith("*")  # a mysql_native_password hash
    finally:
        await checked.aclose()
        await unchecked.aclose()
