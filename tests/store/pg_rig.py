"""A real PostgreSQL for the session-store tests, started once per test process.

It is the database tests' server (``tests/db/db_servers.shared_postgres``: a temporary cluster
on a free loopback port, as ``rho-db`` when the tests run as root), shared with ``tests/db``
and with every module that imports ``pg_server_url``. Each test gets its own schema
(``search_path`` in the URL), so tests never see each other's sessions.
"""

from __future__ import annotations

import sys
import uuid
from pathlib import Path
from urllib.parse import quote

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "db"))

from db_servers import shared_postgres


@pytest.fixture(scope="session")
def pg_server_url(request: pytest.FixtureRequest) -> str:
    """``postgresql://postgres@127.0.0.1:PORT/rho`` of the process's one server."""
    config = shared_postgres(request).config
    return f"postgresql://{config.user}@{config.host}:{config.port}/{config.database}"


def schema_url(server_url: str) -> str:
    """A new, empty schema on the server, as a store URL whose ``search_path`` is it."""
    import psycopg

    schema = f"t_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(server_url, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {schema}")
    return f"{server_url}?options={quote(f'-csearch_path={schema}')}"


def as_a_host(url: str) -> str:
    """``url`` (a ``schema_url``) whose connections say they write this build's schema, as a
    host's do: hand edits that claim for another host are then taken (schema 3 refuses a
    claim from a connection that says nothing of its schema, an earlier version's)."""
    from rho_adapters.pgstore.schema import DECLARED, SCHEMA_VERSION

    assert "?options=" in url, url
    assert "&" not in url, url  # its options end the URL
    return f"{url}{quote(f' -c{DECLARED}={SCHEMA_VERSION}')}"


def named(url: str, name: str) -> str:
    """``url`` (with a query already) whose connections carry ``name`` as their
    ``application_name``: what ``connections`` counts them by."""
    return f"{url}&application_name={quote(name)}"


def connections(server_url: str, name: str) -> int:
    """How many connections named ``name`` (``named``) the server has now."""
    import psycopg

    with psycopg.connect(server_url, autocommit=True) as conn:
        row = conn.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE application_name = %s", (name,)
        ).fetchone()
    assert row is not None
    return int(row[0])


@pytest.fixture
def pg_url(pg_server_url: str) -> str:
    """A store URL of its own for this test."""
    return schema_url(pg_server_url)
