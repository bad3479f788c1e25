"""What a privileged PostgreSQL login sees that no other does: names the check then refuses.

A superuser, or a member of ``pg_read_all_stats``, sees every session's statement text in
``pg_stat_activity`` (an idle session shows its last one: ``ALTER ROLE ... PASSWORD
'x'``), ``pg_stat_get_activity`` and ``pg_stat_statements``; a login with the privileges of
another login role (``GRANT app TO agent``, the usual way to let it read app's tables) sees
that role's sessions' texts. A superuser, or a member of
``pg_read_all_settings``, reads the settings no other login may: ``primary_conninfo`` (a
standby's connection string, its password included) and the commands the server runs
(``archive_command``, ``restore_command``, ``ssl_passphrase_command``...), by name, in
``pg_settings``, in ``SHOW ALL`` (``pg_show_all_settings``) and through ``current_setting``,
whose argument may be computed. A login that reads the catalogs of credentials (a
superuser, or a member of ``pg_read_all_data``: ``pg_authid.rolpassword``,
``pg_user_mapping.umoptions``, ``pg_subscription.subconninfo``, refused by name to every
login) reads their column statistics too: after an ``ANALYZE`` (``vacuumdb --analyze``,
autovacuum), ``pg_stats.histogram_bounds`` for ``pg_authid`` listed every role's SCRAM
verifier, and ``pg_statistic`` holds the same values. For such a login these names are
refused wherever they stand (``CatalogCalls.refused_names``); ``SHOW <name>`` of any other
setting still answers. Another login keeps the rest: the server hides them from it. The
column statistics are refused to every login: ``pg_stats`` shows a login the columns it may
read, and every login reads the catalogs whose columns the check refuses by name, so after
a database-wide ``ANALYZE`` a plain login read ``pg_db_role_setting.setconfig``'s
``app.password=...`` and ``pg_foreign_server.srvoptions`` in ``histogram_bounds``.
"""

# Constant SQL only.
from __future__ import annotations

from typing import Any

# With the extensions' views that show the same texts, or their plans' and quals' constants,
# to the same logins: Percona's pg_stat_monitor, pg_store_plans, pg_show_plans, pg_qualstats.
STATEMENT_VIEWS = (
    "pg_stat_activity",
    "pg_stat_get_activity",
    "pg_stat_statements",
    "pg_stat_monitor",
    "pg_store_plans",
    "pg_show_plans",
    "pg_qualstats",
    "pg_qualstats_by_query",
)
ALL_SETTINGS = ("pg_settings", "pg_show_all_settings", "current_setting")
# Every column's most common values and histogram bounds, the credential catalogs' too.
STATISTICS = (
    "pg_statistic",
    "pg_stats",
    "pg_statistic_ext_data",
    "pg_stats_ext",
    "pg_stats_ext_exprs",
)
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
# What the refusals below depend on. The catalog's version (``catalog_version``) reads it
# before every statement: a GRANT of pg_read_all_stats, an ALTER ROLE ... SUPERUSER or a
# member role's ALTER ROLE ... LOGIN made on another connection changes no catalog row the
# version counts, and applies to the open session at once. So every function and operator
# is named by its schema (it runs outside ``pg_catalog_only``, as the version does).
PRIVILEGES = """
SELECT r.rolsuper OR pg_catalog.pg_has_role(r.oid, 'pg_read_all_stats', 'USAGE')
  OR EXISTS (SELECT 1 FROM pg_catalog.pg_roles o WHERE o.rolcanlogin
    AND o.oid OPERATOR(pg_catalog.<>) r.oid AND pg_catalog.pg_has_role(r.oid, o.oid, 'USAGE')),
  r.rolsuper OR pg_catalog.pg_has_role(r.oid, 'pg_read_all_settings', 'USAGE'),
  pg_catalog.has_column_privilege('pg_catalog.pg_authid', 'rolpassword', 'SELECT')
  OR pg_catalog.has_column_privilege('pg_catalog.pg_user_mapping', 'umoptions', 'SELECT')
  OR pg_catalog.has_column_privilege('pg_catalog.pg_subscription', 'subconninfo', 'SELECT')
FROM pg_catalog.pg_roles r WHERE r.rolname OPERATOR(pg_catalog.=) current_user
"""
_STATEMENTS = (
    " shows this login other sessions' statement texts (it is a superuser, a member of "
    "pg_read_all_stats, or has the privileges of another login role, whose sessions it "
    "sees), passwords in ALTER ROLE ... PASSWORD among them: the agent does not read it; "
    "pg_locks and pg_blocking_pids() show who waits on whom, and a login without those "
    "privileges reads its other columns"
)
_SETTINGS = (
    " shows this login (a superuser, or a member of pg_read_all_settings) every setting, "
    "primary_conninfo's password among them: ask for one setting by name, SHOW work_mem"
)
_STATISTICS = (
    " holds every column's most common values and histogram bounds, those of pg_authid's "
    "password hashes and pg_user_mapping's stored credentials included, which this login "
    "(a superuser, or a member of pg_read_all_data) may read: the agent does not read it; "
    "count the values you need in the table itself (SELECT col, count(*) ... GROUP BY col)"
)
_STATISTICS_PUBLIC = (
    " holds the most common values and histogram bounds of every column this login may "
    "read, the catalogs' every login reads among them: after an ANALYZE, the settings "
    "stored for other roles (pg_db_role_setting: app.password=...) and the foreign "
    "servers' options, which the agent does not read: count the values you need in the "
    "table itself (SELECT col, count(*) ... GROUP BY col)"
)
_HOLDS_CREDENTIALS = (
    " is a setting that holds a connection string or a command, often with a password: "
    "the agent does not read it"
)


def privileged_refusals(conn: Any) -> dict[str, str]:
    """The names refused to ``conn``'s login, each with the whole reason (only the column
    statistics for a login without these privileges)."""
    row = conn.execute(PRIVILEGES, prepare=False).fetchone()
    statements, settings, credentials = (bool(v) for v in row) if row else (False,) * 3
    why = _STATISTICS if credentials else _STATISTICS_PUBLIC
    refused = {name: name + why for name in STATISTICS}
    if statements:
        refused |= {name: name + _STATEMENTS for name in STATEMENT_VIEWS}
    if settings:
        refused |= {name: name + _SETTINGS for name in ALL_SETTINGS}
        refused |= {name: name + _HOLDS_CREDENTIALS for name in SECRET_SETTINGS}
    return refused
