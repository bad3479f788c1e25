"""What a privileged PostgreSQL login sees that no other does: names the check then refuses.

A superuser, or a member of ``pg_read_all_stats``, sees every session's statement text in
``pg_stat_activity`` (an idle session shows its last one: ``ALTER ROLE ... PASSWORD
'x'``), ``pg_stat_get_activity`` and ``pg_stat_statements``. A superuser, or a member of
``pg_read_all_settings``, reads the settings no other login may: ``primary_conninfo`` (a
standby's connection string, its password included) and the commands the server runs
(``archive_command``, ``restore_command``, ``ssl_passphrase_command``...), by name, in
``pg_settings``, in ``SHOW ALL`` (``pg_show_all_settings``) and through ``current_setting``,
whose argument may be computed. For such a login these names are refused wherever they
stand (``CatalogCalls.refused_names``); ``SHOW <name>`` of any other setting still answers.
Another login keeps them all: the server hides the rest from it.
"""

# Constant SQL only.
from __future__ import annotations

from typing import Any

STATEMENT_VIEWS = ("pg_stat_activity", "pg_stat_get_activity", "pg_stat_statements")
ALL_SETTINGS = ("pg_settings", "pg_show_all_settings", "current_setting")
# The settings only a privileged login reads that hold a connection string or a command,
# where a password is often written.
SECRET_SETTINGS = (
    "primary_conninfo",
    "archive_command",
    "archive_cleanup_command",
    "restore_command",
    "recovery_end_command",
    "ssl_passphrase_command",
)
_PRIVILEGES = """
SELECT r.rolsuper OR pg_catalog.pg_has_role(r.oid, 'pg_read_all_stats', 'USAGE'),
  r.rolsuper OR pg_catalog.pg_has_role(r.oid, 'pg_read_all_settings', 'USAGE')
FROM pg_catalog.pg_roles r WHERE r.rolname = current_user
"""
_STATEMENTS = (
    " shows every session's statement text to this login (a superuser, or a member of "
    "pg_read_all_stats), passwords in ALTER ROLE ... PASSWORD among them: the agent does "
    "not read it; pg_locks and pg_blocking_pids() show who waits on whom, and a login "
    "without that privilege reads its other columns"
)
_SETTINGS = (
    " shows this login (a superuser, or a member of pg_read_all_settings) every setting, "
    "primary_conninfo's password among them: ask for one setting by name, SHOW work_mem"
)
_HOLDS_CREDENTIALS = (
    " is a setting that holds a connection string or a command, often with a password: "
    "the agent does not read it"
)


def privileged_refusals(conn: Any) -> dict[str, str]:
    """The names refused to ``conn``'s login, each with the whole reason (none for a login
    without these privileges)."""
    row = conn.execute(_PRIVILEGES, prepare=False).fetchone()
    statements, settings = (bool(row[0]), bool(row[1])) if row else (False, False)
    refused: dict[str, str] = {}
    if statements:
        refused |= {name: name + _STATEMENTS for name in STATEMENT_VIEWS}
    if settings:
        refused |= {name: name + _SETTINGS for name in ALL_SETTINGS}
        refused |= {name: name + _HOLDS_CREDENTIALS for name in SECRET_SETTINGS}
    return refused
