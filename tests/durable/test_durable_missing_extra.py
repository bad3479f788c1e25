"""Without the ``dbos`` extra, every durable command names the extra, never a traceback.

``rho-agent worker --durable-db runs.sqlite`` and ``rho-agent queue ... enqueue`` on an
install without ``[dbos]`` printed a ModuleNotFoundError traceback for ``sqlalchemy`` (DBOS's
dependency, imported at the top of ``durable/system_db.py`` and ``durable/heartbeat.py``
before any check). Each module of ``rho_adapters.durable`` now checks the extra first.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

from rho_adapters.extras import install_command

SCRIPT = textwrap.dedent(
    """
    import importlib, pkgutil, sys
    import rho_adapters.durable as durable
    sys.modules["dbos"] = sys.modules["sqlalchemy"] = None  # as if [dbos] were not installed
    from rho_domain.errors import MissingExtra
    for module in pkgutil.iter_modules(durable.__path__):
        try:
            importlib.import_module(f"rho_adapters.durable.{module.name}")
        except MissingExtra as exc:
            assert "[dbos]'`" in str(exc), exc
        except ImportError as exc:
            print(f"{module.name}: {exc!r}")
    from rho_entry.cli.main import main
    db = sys.argv[1]
    for argv in (["worker", "--durable-db", db], ["queue", "--durable-db", db, "enqueue", "x"]):
        print(argv[0], main(argv))
    """
)


def test_the_durable_commands_name_the_extra_without_it(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(tmp_path / "runs.sqlite")],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["worker 1", "queue 1"], done.stdout + done.stderr
    assert done.stderr.count(install_command("dbos")) == 2, done.stderr
    assert "Traceback" not in done.stderr
