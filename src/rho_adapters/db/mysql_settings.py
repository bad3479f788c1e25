"""What the MariaDB/MySQL check refuses by name on one server: the settings holding a
credential that it sets, and the tables that are another server's.

Every login reads every global setting (``SELECT @@name``, ``SHOW VARIABLES``,
``information_schema.GLOBAL_VARIABLES`` and ``SYSTEM_VARIABLES``, MySQL's
``performance_schema.global_variables``), with no privilege: on a server started with
``--file-key-management-filekey=PASSPHRASE`` (the passphrase of the file that holds the
data-at-rest encryption keys) the agent's login read it in four ways. The server hides some
such settings (``wsrep_sst_auth`` shows ``********``), not these. ``secret_settings`` reads,
once per connection, which of them this server sets; the check then refuses their names and
every way to read all settings (as it refuses ``primary_conninfo`` and ``SHOW ALL`` to a
PostgreSQL login that reads every setting); a server that sets none loses nothing.

A ``FEDERATED``, ``CONNECT`` or ``SPIDER`` table is another server's: a read logs in there as
the login its ``CONNECTION`` names, and ``SHOW CREATE TABLE`` printed that login's password
(``mysql://remote:PASSWORD@host/db/t``) to the agent; refused where named, as PostgreSQL's
foreign tables are (``MysqlDatabase._views`` finds them before each statement).
"""

from __future__ import annotations

from typing import Any

# Settings whose value is a credential when set (lower case, as the check folds names).
SECRET_SETTINGS = (
    "file_key_management_filekey",  # the key file's passphrase (unless "FILE:path")
    "hashicorp_key_management_token",  # a Vault token
    "s3_access_key",
    "s3_secret_key",
    "authentication_ldap_sasl_bind_root_pwd",  # MySQL Enterprise's LDAP bind passwords
    "authentication_ldap_simple_bind_root_pwd",
)
# Every relation or word that lists all settings with their values.
ALL_SETTINGS = (
    "variables",  # SHOW [GLOBAL | SESSION] VARIABLES [LIKE | WHERE ...]
    "global_variables",
    "session_variables",
    "system_variables",
    "variables_by_thread",
    "persisted_variables",
)


def secret_settings(cursor: Any) -> dict[str, str]:
    """The refusals for this server (``CatalogCalls.refused_names``): each secret setting it
    sets (to more than asterisks), and every way to list all settings, by name; ``{}`` when it
    sets none. ``cursor``: a plain cursor of the connection."""
    names = ", ".join(f"'{name}'" for name in SECRET_SETTINGS)  # constants, not values
    cursor.execute(f"SHOW GLOBAL VARIABLES WHERE Variable_name IN ({names})")
    found = sorted(
        str(name).lower() for name, value in cursor.fetchall() if str(value or "").strip("*")
    )
    if not found:
        return {}
    why = (
        f"this server sets {', '.join(found)}, which holds a credential (a passphrase, a "
        "token, a key): the agent does not read it, nor the lists of every setting that "
        "show it (SHOW VARIABLES, information_schema.GLOBAL_VARIABLES...); read another "
        "setting by its name, SELECT @@max_connections"
    )
    return dict.fromkeys((*found, *ALL_SETTINGS), why)


# Engines whose tables are another server's (information_schema.TABLES.ENGINE). SphinxSE
# (MariaDB's ha_sphinx) sends each read's search to the searchd its CONNECTION names, any
# host and port (measured: the server connected to the test's listener).
# An S3 table is not among them: it reads the table's own archived pages from the one
# bucket the administrator set at startup (s3_host_name, s3_bucket, s3_access_key are
# global and not dynamic; a table names no host), as a local table reads its files;
# s3_secret_key is refused as a setting above.
REMOTE_ENGINES = ("FEDERATED", "CONNECT", "SPIDER", "SPHINX")


def remote_refusal(name: str, engine: str) -> str:
    """Why the table ``name`` of the remote ``engine`` is refused."""
    if engine == "SPHINX":
        return (
            f"the table {name} is a SPHINX table: a read connects to the searchd server its "
            "connection names, any host, and sends it the read's search; query that "
            "server directly"
        )
    return (
        f"the table {name} is a {engine} table: a read logs in to another server as the "
        "login its connection names, and SHOW CREATE TABLE prints that login's password; "
        "give that server an alias of its own"
    )
