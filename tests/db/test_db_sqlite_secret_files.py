"""A SQLite alias never opens a file the secrets policy names, whatever link leads there.

Browsers and cloud tools keep credentials in SQLite files (gcloud's ``credentials.db``,
Firefox's ``cookies.sqlite``, Chromium's ``Login Data``), which every file tool refuses. The
SQLite adapter opened its configured path as given: a repository's ``app.db`` committed as a
link to ``../.config/gcloud/credentials.db`` gave the agent every refresh token in it through
``SELECT * FROM credentials``. The path is now resolved through its links, judged by the
policy, and the resolved file is what SQLite opens.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import sqlite3
from pathlib import Path

import attrs
import pytest
from db_support import Server, adapter

from rho_domain.errors import SensitivePath
from rho_domain.permissions import DatabaseMode


@pytest.mark.asyncio
async def test_a_secret_sqlite_file_is_refused_by_its_path_or_through_a_link(
    sqlite_server: Server,
) -> None:
    seeded = Path(str(sqlite_server.config.path))
    secret = sqlite_server.workdir / "home" / ".config" / "gcloud" / "credentials.db"
    secret.parent.mkdir(parents=True)
    shutil.copyfile(seeded, secret)  # a real SQLite file: the read would succeed
    cookies = sqlite_server.workdir / "cookies.sqlite"
    shutil.copyfile(seeded, cookies)
    repo = sqlite_server.workdir / "repo"
    repo.mkdir()
    (repo / "app.db").symlink_to("../home/.config/gcloud/credentials.db")
    (repo / "data.db").symlink_to(cookies)
    (repo / "plain.db").symlink_to(seeded)  # a link to an ordinary file still reads
    cases = {
        repo / "app.db": "credentials.db",
        repo / "data.db": "cookies.sqlite",
        cookies: "cookies.sqlite",
    }
    for mode in (DatabaseMode.READONLY, DatabaseMode.MUTATIONS):
        for path, named in cases.items():
            server = attrs.evolve(
                sqlite_server, config=attrs.evolve(sqlite_server.config, path=str(path))
            )
            db = adapter(server, mode=mode, check=False)
            try:
                with pytest.raises(SensitivePath) as info:
                    await db.query("SELECT count(*) FROM users", max_rows=1, timeout=5)
                said = str(info.value)
                assert named in said, said
                assert "the agent never reads" in said, said
                # one sentence: it read "{path} is '{real}' is a secrets file ..."
                assert f"`path` {str(path)!r}: '" in said, said
                assert " is '" not in said, said
            finally:
                await db.aclose()
    plain = attrs.evolve(sqlite_server.config, path=str(repo / "plain.db"))
    db = adapter(attrs.evolve(sqlite_server, config=plain))
    try:
        result = await db.query("SELECT count(*) FROM users", max_rows=1, timeout=5)
        assert result.rows == ((20,),)
    finally:
        await db.aclose()


# A credential store's table, as its tool makes it (the columns the judge looks for, and
# others), in a copy of the seeded file: users still answers, so a read would succeed.
STORES = {
    "credentials.db": "CREATE TABLE credentials (account_id TEXT PRIMARY KEY, value BLOB)",
    "Cookies": "CREATE TABLE cookies (creation_utc INTEGER, host_key TEXT, name TEXT, "
    "value TEXT, encrypted_value BLOB)",
    "key4.db": "CREATE TABLE nssPrivate (id PRIMARY KEY UNIQUE ON CONFLICT ABORT, a0)",
}


def _store(path: Path, seeded: Path, table: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(seeded, path)
    with contextlib.closing(sqlite3.connect(path)) as conn:
        conn.execute(table)
        conn.commit()
    return path


@pytest.mark.asyncio
async def test_a_credential_store_under_a_name_the_policy_does_not_know_is_refused(
    sqlite_server: Server,
) -> None:
    """A second name of gcloud's credentials.db (a hard link), an Electron application's
    cookie jar (~/.config/Slack/Cookies, Chromium's format, which no name rule knows) and a
    key database's copy opened the file; each is now known by its table."""
    seeded = Path(str(sqlite_server.config.path))
    home = sqlite_server.workdir / "home"
    gcloud = _store(home / ".config/gcloud/credentials.db", seeded, STORES["credentials.db"])
    slack = _store(home / ".config/Slack/Cookies", seeded, STORES["Cookies"])
    repo = sqlite_server.workdir / "repo"
    repo.mkdir()
    os.link(gcloud, repo / "app.db")
    (repo / "data.db").symlink_to(slack)
    keys = _store(repo / "fixtures.db", seeded, STORES["key4.db"])
    # an application's own table of that name, without the store's columns, still reads
    plain = _store(repo / "plain.db", seeded, "CREATE TABLE credentials (id, name)")
    cases = {
        repo / "app.db": "gcloud's credentials.db",
        repo / "data.db": "table cookies",
        keys: "NSS key database",
    }
    for mode in (DatabaseMode.READONLY, DatabaseMode.MUTATIONS):
        for path, named in cases.items():
            config = attrs.evolve(sqlite_server.config, path=str(path))
            db = adapter(attrs.evolve(sqlite_server, config=config), mode=mode, check=False)
            try:
                with pytest.raises(SensitivePath) as info:
                    await db.query("SELECT count(*) FROM users", max_rows=1, timeout=5)
                said = str(info.value)
                assert named in said, said
                assert "the agent never reads" in said, said
            finally:
                await db.aclose()
    config = attrs.evolve(sqlite_server.config, path=str(plain))
    db = adapter(attrs.evolve(sqlite_server, config=config))
    try:
        result = await db.query("SELECT count(*) FROM credentials", max_rows=1, timeout=5)
        assert result.rows == ((0,),)
    finally:
        await db.aclose()


@pytest.mark.asyncio
async def test_a_sqlite_file_is_judged_by_the_executors_policy(
    sqlite_server: Server, tmp_path: Path
) -> None:
    """The judgement used the policy without homes or the agent's own directories: a SQLite
    file in a hidden entry of the agent's home (``~/.app/data.db``, where tools keep
    credentials under any name) or in its configuration directory (``RHO_AGENT_HOME``,
    sessions and keys) was opened, while every file tool refused it. The wiring gives the
    local executor's policy; without a local executor (Daytona's judges the sandbox's
    paths), this machine's homes, the environment's ``HOME`` and the agent's directory."""
    import rho_agent
    from rho_adapters.fakes import MemoryExecutor, MemorySessionStore, ScriptedModel
    from rho_domain.config import DatabaseConfig
    from rho_entry.wiring import build_ports

    home, own, work = tmp_path / "home", tmp_path / "agent-home", tmp_path / "work"
    for where in (home / ".app", own, work):
        where.mkdir(parents=True)
    seeded = Path(str(sqlite_server.config.path))
    hidden, config_db = home / ".app" / "data.db", own / "notes.db"
    for copy in (hidden, config_db):
        shutil.copyfile(seeded, copy)
    env = {"HOME": str(home), "RHO_AGENT_HOME": str(own), "PATH": os.defpath}
    cases = (
        (hidden, None, "hidden entry of the home directory"),
        (config_db, None, "secret location"),
        (hidden, MemoryExecutor(), "hidden entry of the home directory"),
        (config_db, MemoryExecutor(), "secret location"),
    )
    for path, executor, said in cases:
        config = rho_agent.AgentConfig(
            working_dir=str(work),
            databases={"app": DatabaseConfig(engine="sqlite", path=str(path))},
        )
        ports = build_ports(
            rho_agent.Agent(config).definition,
            model=ScriptedModel([]),
            store=MemorySessionStore(),
            executor=executor,
            environ=env,
        )
        try:
            with pytest.raises(SensitivePath) as info:
                await ports.databases["app"].query("SELECT 1", max_rows=1, timeout=5)
        finally:
            for owned in ports.owned:
                await owned.aclose()
        assert said in str(info.value), info.value
        assert str(path) in str(info.value), info.value
