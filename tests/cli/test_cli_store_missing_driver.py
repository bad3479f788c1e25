"""``--store postgresql://...`` on an install without psycopg names the extra before anything
of the run is shown.

Before: the store checked its driver at its first write, so ``rho-agent --store
postgresql://... "task"`` printed the session header (model, profile, session id) and then
"error: ConfigError: ... psycopg is not installed", followed by "nothing was saved": a run
seemed to have started. ``pgstore.backend_for`` now loads the driver when the store is built.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

from rho_adapters.extras import install_command

SCRIPT = textwrap.dedent(
    """
    import sys
    sys.modules["psycopg"] = None  # as if [postgres] were not installed
    from rho_entry.cli.main import main
    url = "postgresql://rho@127.0.0.1:9/rho"
    model = ["--model", "m", "--base-url", "http://127.0.0.1:9/v1"]
    print("run", main(["--store", url, *model, "hi"]), flush=True)
    print("list", main(["--store", url, "--list"]), flush=True)
    """
)


def test_a_postgres_store_without_psycopg_is_refused_before_the_header(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["run 1", "list 1"], done.stdout + done.stderr
    said = (
        "rho-agent: postgresql://rho@127.0.0.1:9/rho (set by --store): psycopg is not installed "
        f"for the PostgreSQL session store: install it with `{install_command('postgres')}`"
    )
    assert done.stderr.splitlines() == [said, said], done.stderr
