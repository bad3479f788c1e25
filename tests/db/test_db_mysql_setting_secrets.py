"""MariaDB settings and tables that hold a credential, read by any login.

Every login reads every global setting, with no privilege. A server started with
``--file-key-management-filekey=PASSPHRASE`` (the passphrase of the file holding its
data-at-rest encryption keys) showed it to the agent four ways: ``SELECT @@...``, ``SHOW
VARIABLES``, ``information_schema.GLOBAL_VARIABLES`` and ``SYSTEM_VARIABLES``. On a server
that sets such a setting they are refused (``mysql_settings.py``); one that sets none, the
suite's shared server, keeps ``SHOW VARIABLES``.

A FEDERATED table is another server's: a read logs in there as the login its
``CONNECTION`` names, and ``SHOW CREATE TABLE`` printed that login's password. Refused
where named, as PostgreSQL's foreign tables are. So is a SPHINX table (MariaDB's ha_sphinx),
whose read connects to the searchd its ``CONNECTION`` names, any host, and sends it the
search: it passed the check.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from db_servers import running_mariadb
from db_support import Server, adapter, free_port

from rho_domain.errors import DatabaseError, StatementRefused

PASSPHRASE = "hunter2-filekey"
READS = [
    "SELECT @@file_key_management_filekey",
    "SELECT @@GLOBAL.`FILE_KEY_MANAGEMENT_FILEKEY`",
    "SHOW GLOBAL VARIABLES LIKE 'file\\_key%'",
    "SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_VARIABLES",
    "SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_VAR\u0130ABLES",  # U+0130 is i there
    "SELECT GLOBAL_VALUE FROM information_schema.SYSTEM_VARIABLES",
]


@pytest.fixture(scope="module")
def keyed_mariadb(
    machine_cache: Path | None, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Server]:
    """A MariaDB of this file's own, started with the file key plugin and its passphrase
    (a server option: the shared server cannot be given one)."""
    openssl = shutil.which("openssl")
    if openssl is None:
        pytest.skip("openssl is not installed (it encrypts the plugin's key file)")
    where = tmp_path_factory.mktemp("filekey")
    plain, keys = where / "keys.txt", where / "keys.enc"
    plain.write_text("1;a7addd9adea9978fda19f21e6be987880e68ac92632ca052e5bb42b1a506939a\n")
    subprocess.run(
        [openssl, "enc", "-aes-256-cbc", "-md", "sha1", "-pass", f"pass:{PASSPHRASE}",
         "-in", str(plain), "-out", str(keys)],
        check=True,
        capture_output=True,
    )  # fmt: skip
    options = (
        "--plugin-load-add=file_key_management",
        f"--file-key-management-filename={keys}",
        f"--file-key-management-filekey={PASSPHRASE}",
    )
    with running_mariadb(machine_cache, options) as server:
        yield server


async def test_a_setting_holding_a_credential_is_refused(keyed_mariadb: Server) -> None:
    checked, unchecked = adapter(keyed_mariadb), adapter(keyed_mariadb, check=False)
    try:
        for sql in READS:
            rows = repr((await unchecked.query(sql, max_rows=2000, timeout=10)).rows)
            assert PASSPHRASE in rows, (sql, rows[:300])
            with pytest.raises(StatementRefused, match="file_key_management_filekey, which"):
                await checked.query(sql, max_rows=2000, timeout=10)
        # another setting by its name still answers
        result = await checked.query("SELECT @@max_connections", max_rows=1, timeout=10)
        assert result.rows[0][0] > 0
    finally:
        for db in (checked, unchecked):
            await db.aclose()


async def test_a_server_setting_none_keeps_its_settings_list(mariadb_server: Server) -> None:
    db = adapter(mariadb_server)
    try:
        result = await db.query("SHOW VARIABLES LIKE 'max\\_connections'", max_rows=5, timeout=10)
        assert result.rows[0][0] == "max_connections"
    finally:
        await db.aclose()


@pytest.fixture
def federated_table(mariadb_server: Server) -> Iterator[None]:
    """``rho.fed_users``, a FEDERATED table over ``rho.users`` through a login of its own."""
    admin = mariadb_server.admin()
    admin.autocommit(True)
    cursor = admin.cursor()
    cursor.execute("SELECT 1 FROM information_schema.ENGINES WHERE ENGINE = 'FEDERATED'")
    if not cursor.fetchall():  # kept installed: UNINSTALL waits for every reader's end
        cursor.execute("INSTALL SONAME 'ha_federatedx'")
    port = mariadb_server.config.port
    for sql in (
        "CREATE USER IF NOT EXISTS 'rho_remote18'@'127.0.0.1' IDENTIFIED BY 'hunter2-fed'",
        "GRANT SELECT ON rho.users TO 'rho_remote18'@'127.0.0.1'",
        "CREATE TABLE fed_users (id INT, name VARCHAR(100)) ENGINE=FEDERATED "
        f"CONNECTION='mysql://rho_remote18:hunter2-fed@127.0.0.1:{port}/rho/users'",
    ):
        cursor.execute(sql)
    try:
        yield
    finally:
        cursor.execute("DROP TABLE IF EXISTS fed_users")
        cursor.execute("DROP USER IF EXISTS 'rho_remote18'@'127.0.0.1'")
        admin.close()


async def test_a_federated_table_is_refused(mariadb_server: Server, federated_table: None) -> None:
    checked, unchecked = adapter(mariadb_server), adapter(mariadb_server, check=False)
    try:
        shown = await unchecked.query("SHOW CREATE TABLE fed_users", max_rows=1, timeout=10)
        assert "hunter2-fed" in repr(shown.rows)
        read = await unchecked.query("SELECT name FROM fed_users", max_rows=1, timeout=10)
        assert read.rows == (("user1",),)
        for sql in ("SHOW CREATE TABLE fed_users", "SELECT name FROM rho.`FED_USERS`"):
            with pytest.raises(StatementRefused, match="fed_users is a FEDERATED table"):
                await checked.query(sql, max_rows=1, timeout=10)
    finally:
        for db in (checked, unchecked):
            await db.aclose()


async def test_a_sphinx_table_is_refused(mariadb_server: Server) -> None:
    """The unchecked read shows the server connecting where the table says (nothing listens
    there, so it fails at once); the checked one is refused."""
    admin = mariadb_server.admin()
    admin.autocommit(True)
    cursor = admin.cursor()
    cursor.execute("SELECT 1 FROM information_schema.ENGINES WHERE ENGINE = 'SPHINX'")
    if not cursor.fetchall():  # kept installed: UNINSTALL waits for every reader's end
        cursor.execute("INSTALL SONAME 'ha_sphinx'")
    port = free_port()
    cursor.execute(
        "CREATE TABLE rho_sx (id BIGINT UNSIGNED NOT NULL, weight INT NOT NULL, "
        "query VARCHAR(255) NOT NULL, INDEX(query)) ENGINE=SPHINX "
        f"CONNECTION='sphinx://127.0.0.1:{port}/idx'"
    )
    checked, unchecked = adapter(mariadb_server), adapter(mariadb_server, check=False)
    try:
        with pytest.raises(DatabaseError, match=r"connect to searchd \(host=127.0.0.1, errno=111"):
            await unchecked.query("SELECT id FROM rho_sx WHERE query = 'x'", max_rows=1, timeout=10)
        for sql in ("SELECT id FROM rho_sx WHERE query = 'x'", "SELECT id FROM rho.`RHO_SX`"):
            with pytest.raises(StatementRefused, match="rho_sx is a SPHINX table: a read connects"):
                await checked.query(sql, max_rows=1, timeout=10)
    finally:
        for db in (checked, unchecked):
            await db.aclose()
        cursor.execute("DROP TABLE IF EXISTS rho_sx")
        admin.close()
