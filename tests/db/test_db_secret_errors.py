"""A database password never reaches the error the model (and the trace) reads.

libpq quotes the connection string it could not parse: a ``dsn`` whose password comes from
``${VAR}`` and which holds a typo (an unclosed IPv6 bracket, a bad percent escape, a keyword
without its ``=``) failed with the password in the message, and a ``DatabaseError``'s text is
the tool result the model sees and the trace stores. The adapter knows its secrets (the
``password_env`` value, the dsn's password); the one place driver errors enter
(``db/errors.translate``) hides them and any ``scheme://user:password@`` it quotes.
"""

from __future__ import annotations

import importlib.util

import pytest

from rho_adapters.db import open_databases
from rho_domain.config import DatabaseConfig
from rho_domain.errors import DatabaseError
from rho_domain.permissions import DatabaseMode

if importlib.util.find_spec("psycopg") is None:  # found, not imported: psycopg costs 0.15 s
    pytest.skip("needs psycopg (the postgres extra)", allow_module_level=True)

SECRET = "S3cret-pw-7f1e"
ENVIRON = {"APP_DB_PW": SECRET, "OTHER_PW": "0ther-pw-91ab"}


@pytest.mark.parametrize(
    ("dsn", "said"),
    [
        ("postgresql://agent:${APP_DB_PW}@[::1/app", "IPv6 host address"),
        ("postgresql://agent:${APP_DB_PW}%zz@127.0.0.1/app", "percent-encoded"),
        ("host=127.0.0.1 dbname=app password:${APP_DB_PW}", 'missing "="'),
    ],
)
async def test_a_dsn_typo_does_not_show_its_password(dsn: str, said: str) -> None:
    config = DatabaseConfig(engine="postgres", dsn=dsn, password_env="OTHER_PW")
    (database,) = open_databases(
        {"app": config}, mode=DatabaseMode.READONLY, environ=ENVIRON
    ).values()
    with pytest.raises(DatabaseError) as caught:
        await database.query("SELECT 1", max_rows=1, timeout=5)
    message = str(caught.value)
    assert said in message  # the driver's words are kept, so the user can fix the dsn
    assert message.startswith("app: ")
    assert SECRET not in message
    assert "***" in message
