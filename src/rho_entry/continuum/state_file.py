"""A continuum run's state on disk: ``<config dir>/continuum/<run id>.json``, written whole
or not at all (a temporary file beside it, then a rename), read back with its path named in
every error."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

from rho_domain.continuum.state import ContinuumState
from rho_domain.errors import ConfigError
from rho_domain.secrets import DEFAULT_POLICY
from rho_entry.config.yaml_text import read_config_text


def state_path(directory: Path, run_id: str) -> Path:
    """Where run ``run_id``'s state lives in ``directory``."""
    return directory / f"{run_id}.json"


def save_state(path: Path, state: ContinuumState) -> None:
    """Write ``state`` to ``path`` atomically (a reader sees the old file or the new one)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as file:
            json.dump(state.to_dict(), file, indent=2)
            file.write("\n")
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def given_state(text: str) -> Path:
    """The state file ``--state`` names; ``ConfigError`` when the secrets policy names its
    real path: ``--state .env`` (or ``~/.ssh/id_rsa``) was overwritten with the run's JSON."""
    if (why := DEFAULT_POLICY.refusal(os.path.realpath(text))) is not None:
        raise ConfigError(f"--state {text}: {why}; the state file is written over, give another")
    return Path(text)


def load_state(path: Path) -> ContinuumState:
    """The state stored at ``path``; ``ConfigError`` naming the file when it cannot be read
    (read as every file the user names is: a FIFO or an endless file is refused)."""
    where = f"continuum state {path}"
    text = read_config_text(path, where=where, what="the state file")
    try:
        return ContinuumState.from_dict(json.loads(text))
    except ValueError as exc:
        raise ConfigError(f"{where}: {exc} (give another with --state)") from exc


def latest_state(directory: Path) -> Path:
    """The most recently written state file in ``directory``; ``ConfigError`` when none."""
    found = sorted(directory.glob("*.json"), key=lambda p: p.stat().st_mtime_ns)
    if not found:
        raise ConfigError(
            f"--resume: no continuum run is recorded in {directory}; start one without "
            "--resume, or name its state file with --state"
        )
    return found[-1]
