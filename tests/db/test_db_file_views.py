"""PostgreSQL system views that read a server file each time they are selected from.

``SELECT * FROM pg_file_settings`` returned the lines of ``postgresql.conf``, its includes
and ``postgresql.auto.conf`` (where ``ALTER SYSTEM`` keeps ``primary_conninfo`` with its
password), ``pg_hba_file_rules`` those of ``pg_hba.conf``, ``pg_ident_file_mappings`` those
of ``pg_ident.conf``: the functions behind them (``pg_show_all_file_settings`` ...) are off the
allowlist, but the text names no function, and the read-only transaction lets a login that
may read them do so. Only ``pg_catalog.pg_file_settings`` was refused, by chance (the
``pg_file_`` side-effect prefix in field notation). Now the check refuses the views' names
wherever they stand, under every spelling the server resolves.
"""

from __future__ import annotations

import pytest
from db_support import Server, adapter

from rho_domain.errors import StatementRefused

# (statement, the view the refusal names, what the server file gives without the check)
READS = [
    ("SELECT * FROM pg_file_settings", "pg_file_settings", "postgresql.conf"),
    (
        'SELECT sourcefile, name FROM pg_catalog."pg_file_settings"',
        "pg_file_settings",
        "postgresql.conf",
    ),
    ("TABLE PG_HBA_FILE_RULES", "pg_hba_file_rules", "trust"),
    ('SELECT auth_method FROM U&"pg\\005fhba_file_rules"', "pg_hba_file_rules", "trust"),
    (
        "WITH h AS (SELECT auth_method FROM pg_catalog.pg_hba_file_rules) SELECT * FROM h",
        "pg_hba_file_rules",
        "trust",
    ),
    ("SELECT * FROM pg_ident_file_mappings", "pg_ident_file_mappings", ""),
]


async def test_views_that_read_server_files_are_refused_by_the_check(
    postgres_server: Server,
) -> None:
    db = adapter(postgres_server)
    try:
        for sql, view, _ in READS:
            with pytest.raises(StatementRefused) as info:
                await db.query(sql, max_rows=5, timeout=5)
            assert info.value.by == "check", (sql, info.value)
            assert f"{view} reads a server file" in str(info.value), sql
        # the settings as the server runs them are no file read: still answered (by name:
        # pg_settings is refused to this superuser, test_db_setting_secrets.py)
        result = await db.query("SHOW max_connections", max_rows=1, timeout=5)
        assert result.rows
    finally:
        await db.aclose()


async def test_without_the_check_each_view_reads_its_server_file(
    postgres_server: Server,
) -> None:
    """The target is real: the read-only transaction alone returns the files' lines."""
    db = adapter(postgres_server, check=False)
    try:
        for sql, _, shown in READS:
            rows = repr((await db.query(sql, max_rows=50, timeout=5)).rows)
            assert shown in rows, (sql, rows[:200])
    finally:
        await db.aclose()
