"""A SQLite alias never opens a file the secrets policy names, whatever link leads there.

Browsers and cloud tools keep credentials in SQLite files (gcloud's ``credentials.db``,
Firefox's ``cookies.sqlite``, Chromium's ``Login Data``), which every file tool refuses. The
SQLite adapter opened its configured path as given: a repository's ``app.db`` committed as a
link to ``../.config/gcloud/credentials.db`` gave the agent every refresh token in it through
``SELECT * FROM credentials``. The path is now resolved through its links, judged by the
policy, and the resolved file is what SQLite opens.
"""

from __future__ import annotations

import shutil
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
            finally:
                await db.aclose()
    plain = attrs.evolve(sqlite_server.config, path=str(repo / "plain.db"))
    db = adapter(attrs.evolve(sqlite_server, config=plain))
    try:
        result = await db.query("SELECT count(*) FROM users", max_rows=1, timeout=5)
        assert result.rows == ((20,),)
    finally:
        await db.aclose()
