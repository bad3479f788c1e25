"""The built-in relations a read-only statement may not name, per dialect, as data.

Three kinds, each refused where the relation is named (``token_rules``): those holding
password hashes or stored credentials (``*_SECRET_RELATIONS``), those showing other
sessions' statement texts, where a password set by ``ALTER USER ... IDENTIFIED BY`` shows
(``*_STATEMENT_RELATIONS``), and PostgreSQL's options of foreign-data wrappers, servers,
tables and user mappings (``POSTGRES_OPTION_RELATIONS``), and the settings stored for every
role and database (``POSTGRES_SETTING_RELATIONS``). A SELECT of them names no
function, and the engine's read-only transaction does not stop a read. Names are in the
catalog's case (Oracle's upper case); ``name`` is refused wherever it stands,
``schema.name`` after its schema (and, for a schema on the dialect's search path, alone).
PostgreSQL's views over server files are ``postgres_functions.POSTGRES_FILE_VIEWS``.
"""

from __future__ import annotations

from rho_domain.sql.functions import names

# pg_authid.rolpassword and pg_shadow.passwd (SCRAM or md5 verifiers, which log in by
# themselves for md5), pg_user_mapping(s).umoptions (a foreign server's user and password),
# pg_subscription.subconninfo (the publisher's connection string), readable by a superuser
# login. pg_roles and pg_user show '********' instead and stay readable.
POSTGRES_SECRET_RELATIONS = names(
    "pg_authid pg_shadow pg_user_mapping pg_user_mappings pg_subscription"
)

# The options of foreign-data wrappers, servers, tables and user mappings, where a wrapper
# keeps a login's password (a user mapping's; a server's or a table's for a wrapper without
# a validator, or one that takes a connection string: ogr_fdw's datasource, multicorn's
# db_url). pg_foreign_server, pg_foreign_table and pg_foreign_data_wrapper are every login's
# to read; information_schema's user_mapping_options gave a superuser every mapping's
# password (another login its own). information_schema's foreign_servers, foreign_tables
# and user_mappings name the same objects without their options and stay readable.
# A foreign table's columns have options too (pg_attribute.attfdwoptions, shown by
# information_schema's column_options and _pg_foreign_table_columns): the column's name is
# refused wherever it stands, and pg_attribute itself in a database where a column has
# options (pg_catalog_queries.COLUMN_OPTIONS: a whole row shows them with no name written).
POSTGRES_OPTION_RELATIONS = names(
    """
    pg_foreign_data_wrapper pg_foreign_server pg_foreign_table foreign_data_wrapper_options
    foreign_server_options foreign_table_options user_mapping_options
    _pg_foreign_data_wrappers _pg_foreign_servers _pg_foreign_tables _pg_user_mappings
    column_options _pg_foreign_table_columns attfdwoptions
    """
)

# The settings stored for roles and databases (ALTER ROLE app SET app.password = '...',
# ALTER DATABASE other SET ...): pg_db_role_setting is a shared catalog every login reads,
# every database's and role's rows, and pg_roles.rolconfig, pg_user.useconfig show a role's
# whatever the login. A login reads its own settings with current_setting, as the server
# gives them to its session; these columns give it every other role's too. pg_roles and
# pg_user themselves are refused where a stored setting is an extension's or an
# application's (a dotted name: pg_catalog_queries.ROLE_SETTINGS), since a whole row shows
# rolconfig with no name written.
POSTGRES_SETTING_RELATIONS = names("pg_db_role_setting setconfig rolconfig useconfig")

# mysql.user (MySQL, and MariaDB's view of global_priv) holds authentication_string,
# mysql.servers a FEDERATED server's Password, MySQL 8's slave_master_info a replica's
# User_password in plain text, MariaDB's password_reuse_check_history and MySQL 8's
# password_history old hashes (MYSQL.PASSWORD_HISTORY too: names are compared without case,
# as lower_case_table_names=1 or 2 finds them). Their column statistics hold the same
# values: MariaDB's mysql.column_stats (min_value and max_value after ANALYZE TABLE
# mysql.servers PERSISTENT FOR ALL), MySQL 8's histograms.
MYSQL_SECRET_RELATIONS = names(
    """
    mysql.user global_priv mysql.servers slave_master_info password_reuse_check_history
    mysql.password_history
    mysql.column_stats column_statistics
    """
)

# A login with PROCESS sees every thread's statement, a running ALTER USER ...
# IDENTIFIED BY 'password' too; one without sees only its own, so little is lost.
# The general and slow logs keep every statement; SHOW ENGINE INNODB STATUS is classify's.
# The sys schema's views over them (its lock waits show the waiter's and the blocker's
# statements) are refused by name, wherever the adapter cannot read their queries.
# events_statements_summary_by_digest: MySQL 8's QUERY_SAMPLE_TEXT; query_cache_info: the
# MariaDB plugin's view of every cached SELECT, as its session wrote it.
# user_variables_by_thread: every session's user variables and their values (an
# application's SET @password = ...), where information_schema.USER_VARIABLES shows the
# login its own. innodb_locks' and MySQL 8's data_locks' LOCK_DATA: the primary key values
# of the rows other sessions lock, of tables this login may not read (measured: a PROCESS
# login read a reset token keying a row of a database it had no privilege on). The InnoDB
# full-text index tables show the words indexed in the table innodb_ft_aux_table names,
# any table's, to the same login (measured: a note's words, read without SELECT on it).
MYSQL_STATEMENT_RELATIONS = names(
    """
    innodb_locks performance_schema.data_locks innodb_ft_index_cache innodb_ft_index_table
    processlist innodb_trx general_log slow_log events_statements_current
    events_statements_history events_statements_history_long prepared_statements_instances
    events_statements_summary_by_digest performance_schema.threads sys.session
    x$processlist x$session innodb_lock_waits x$innodb_lock_waits schema_table_lock_waits
    x$schema_table_lock_waits query_cache_info user_variables_by_thread
    """
)

# SYS.USER$ (PASSWORD: the 10g hash; SPARE4: the S: and T: verifiers), USER_HISTORY$ (old
# ones), LINK$ (a database link's stored password), XS$VERIFIERS (Real Application
# Security users'), SCHEDULER$_CREDENTIAL (a credential's password), CDB_LOCAL_ADMINAUTH$
# (12.2+: the verifiers of a pluggable database's local SYSDBA users), readable by a login
# with SELECT ANY DICTIONARY; DBA_USERS and ALL_USERS show no hash since 11g and stay
# readable.
ORACLE_SECRET_RELATIONS = names(
    "USER$ USER_HISTORY$ LINK$ XS$VERIFIERS SCHEDULER$_CREDENTIAL CDB_LOCAL_ADMINAUTH$"
)
# Every cached cursor's text and the bind values captured with it, an instance's (V$) or
# every instance's (GV$), by view or by its public synonym (V_$): the cursors' texts under
# other names (SQLAREA_PLAN_HASH, SQLSTATS_PLAN_HASH, DB_OBJECT_CACHE, whose NAME is a
# cursor's text), the values the optimizer peeked at (SQL_PLAN's OTHER_XML), the audit
# trails written as XML files and the unified one.
_ORACLE_CURSOR_VIEWS = names(
    """
    SQL SQLAREA SQLTEXT SQLTEXT_WITH_NEWLINES SQLSTATS OPEN_CURSOR SQL_BIND_CAPTURE
    SQL_MONITOR SQLAREA_PLAN_HASH SQLSTATS_PLAN_HASH DB_OBJECT_CACHE SQL_PLAN
    SQL_PLAN_STATISTICS_ALL XML_AUDIT_TRAIL UNIFIED_AUDIT_TRAIL
    """
)
# AWR's copies of texts, binds and plans; the audit trails' SQL_TEXT and SQL_BIND(S) (the
# standard, fine-grained, unified and common ones, their tables and the views over them);
# SQL tuning sets' and plan baselines' statements and binds.
_ORACLE_DBA_STATEMENT_VIEWS = names(
    """
    DBA_HIST_SQLTEXT DBA_HIST_SQLBIND DBA_HIST_SQL_PLAN DBA_AUDIT_TRAIL DBA_AUDIT_OBJECT
    DBA_AUDIT_STATEMENT DBA_AUDIT_EXISTS DBA_FGA_AUDIT_TRAIL DBA_COMMON_AUDIT_TRAIL
    DBA_SQLSET_STATEMENTS DBA_SQLSET_BINDS DBA_SQLSET_PLANS DBA_SQL_PLAN_BASELINES
    """
)
# A container database has a CDB_ view for every DBA_ one, showing every pluggable
# database's rows: each is refused with its DBA_ twin.
ORACLE_STATEMENT_RELATIONS = (
    frozenset(
        {
            f"{prefix}{view}"
            for prefix in ("V$", "GV$", "V_$", "GV_$")
            for view in _ORACLE_CURSOR_VIEWS
        }
    )
    | _ORACLE_DBA_STATEMENT_VIEWS
    | {"CDB_" + view.removeprefix("DBA_") for view in _ORACLE_DBA_STATEMENT_VIEWS}
    | names("UNIFIED_AUDIT_TRAIL CDB_UNIFIED_AUDIT_TRAIL AUD$ AUD$UNIFIED FGA_LOG$")
    # the fixed tables under the cursor views, which a login AS SYSDBA reads by name
    | names(
        """
        X$KGLCURSOR_CHILD X$KGLCURSOR_CHILD_SQLID X$KGLCURSOR_CHILD_SQLIDPH X$KGLNA X$KGLNA1
        X$KGLOB X$KGLLK X$KQLFBC X$KKSSQLSTAT
        """
    )
)

# Vertica's search path ends with its system schemas, so v_catalog.passwords is read as
# passwords too (where no schema before them has one). PASSWORDS holds every user's
# password hash and salt (a superuser's to read; a hash and its salt log in as the user).
# CRYPTOGRAPHIC_KEYS shows a key's text (a TLS private key, PEM) to its owner and to a
# login granted USAGE on it (a superuser sees only that it exists).
VERTICA_PATH_SCHEMAS = names("v_catalog v_monitor v_internal")
# CONFIGURATION_PARAMETERS (and CONFIGURATION_CHANGES, each change with its value) show a
# superuser every parameter's value: DataSSLParams and SSLPrivateKey hold the server's TLS
# private key, AWSAuth an S3 secret key, LDAPLinkBindPswd the LDAP bind password.
# CLIENT_AUTH_PARAMS shows the authentication records' parameters (an LDAP bind password).
VERTICA_SECRET_RELATIONS = names(
    """
    v_catalog.passwords v_catalog.cryptographic_keys v_monitor.configuration_parameters
    v_monitor.configuration_changes v_catalog.client_auth_params
    """
)
# A session's current and last statement, every request's text, the profiled queries'; a
# transaction's description (the statement that began it: LOCKS' TRANSACTION_DESCRIPTION,
# TRANSACTIONS' DESCRIPTION), a plan's lines with the statement's constants
# (QUERY_PLAN_PROFILES' PATH_LINE), the queries given to the Database Designer.
VERTICA_STATEMENT_RELATIONS = names(
    """
    v_monitor.sessions v_monitor.query_requests v_monitor.query_profiles v_monitor.locks
    v_monitor.transactions v_monitor.query_plan_profiles v_monitor.design_queries
    """
)
# v_internal is the server's own: the Data Collector's tables (dc_requests_issued keeps
# every user's statement texts, dc_explain_plans their plans, dc_errors their errors...,
# some 200 of them, more each release) and the catalog's (vs_*) under the views above. The
# whole schema is refused, and on the search path its tables' names alone, by the prefixes
# they all carry (an application's dc_ table is named with its schema).
VERTICA_INTERNAL_SCHEMAS = {"v_internal": ("dc_", "vs_")}
