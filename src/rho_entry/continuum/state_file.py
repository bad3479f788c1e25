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


def latest_state(directory: Path, working_dir: Path) -> Path:
    """The most recently written state file in ``directory`` of a run in ``working_dir`` (its
    recorded ``working_dir``, resolved); ``ConfigError`` when there is none. Any run's latest
    was taken before: ``--resume`` in one repository went on with another's run, its
    session count and config written over."""
    target = working_dir.resolve()
    found = sorted(directory.glob("*.json"), key=lambda p: p.stat().st_mtime_ns)
    for path in reversed(found):
        if _recorded_dir(path) == target:
            return path
    others = f" ({len(found)} for other directories: name one with --state)" if found else ""
    raise ConfigError(
        f"--resume: no continuum run of {target} is recorded in {directory}{others}; start "
        "one without --resume, or name its state file with --state"
    )


def _recorded_dir(path: Path) -> Path | None:
    """The resolved ``working_dir`` a state file records (None when it cannot be read)."""
    try:
        config = json.loads(path.read_text(encoding="utf-8")).get("config", {})
        return Path(str(config.get("working_dir", "."))).resolve()
    except (OSError, ValueError, AttributeError):
        return None
