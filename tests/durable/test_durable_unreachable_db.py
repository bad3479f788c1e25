"""A ``--durable-db`` PostgreSQL server that refuses the connection is named in our words.

Before: ``rho-agent worker --durable-db postgresql://...`` said "cannot open the durable
runs' database ...: (psycopg.OperationalError) connection failed: ... (Background on this
error at: https://sqlalche.me/e/21/e3q8); check ...", SQLAlchemy's wrapping of the driver's
error; ``rho-agent queue`` printed DBOS's warning "Could not connect to postgres database to
verify existence of rho. Continuing..." before its own. Now each says the driver's words once.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

SCRIPT = textwrap.dedent(
    """
    import sys
    from rho_entry.cli.main import main
    db = "postgresql://rho:hunter2@127.0.0.1:9/rho"  # port 9: refused at once
    for argv in (["worker", "--durable-db", db], ["queue", "--durable-db", db, "enqueue", "x"]):
        print(argv[0], main(argv), flush=True)
    """
)


def test_an_unreachable_durable_db_is_said_without_dbos_and_sqlalchemy_noise(
    tmp_path: Path,
) -> None:
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        cwd=tmp_path,
    )
    assert done.stdout.splitlines() == ["worker 1", "queue 1"], done.stdout + done.stderr
    lines = done.stderr.splitlines()
    refused = (
        "cannot open the durable runs' database postgresql://rho:***@127.0.0.1:9/rho: "
        'connection failed: connection to server at "127.0.0.1", port 9 failed: Connection '
        "refused Is the server running on that host and accepting TCP/IP connections?"
    )
    assert [line.split(": ", 1)[0] for line in lines] == [
        "rho-agent worker",
        "rho-agent queue",
    ], done.stderr
    assert all(refused in line for line in lines), done.stderr
    for noise in ("sqlalche.me", "OperationalError", "Continuing", "hunter2"):
        assert noise not in done.stderr
