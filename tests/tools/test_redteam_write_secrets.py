"""Secrets are never read and never written (red-team pass redwrite16).

Before: the write check of every executor applied the never-written rules and the few
secret *names* of ``paths.is_secret_name`` (``.env``, ``.netrc``, SSH keys), not the secrets
policy the reads obey. So, in a workspace that holds a home directory, ``write`` under
``file_write: full`` replaced what no tool may read: the agent's own configuration
(``.config/rho-agent/settings.yaml``, its profiles and hooks: a wider profile or a command at
the next run; also under ``$RHO_AGENT_HOME``, a location of the executor's), gh's config
(its ``!`` aliases are shell commands), pass's ``.gpg-id`` (the key new passwords are
encrypted to), gcloud's and Azure's configuration, cargo's and terraform's registry tokens,
keyrings, and files named as secrets (``credentials``, ``*.pem``, shell histories); under
create-only a new ``credentials.json``. Now each executor judges the path as given and as
found by the same policy as a read."""

from __future__ import annotations

from pathlib import Path

import pytest

from rho_adapters.daytona import DaytonaExecutor
from rho_adapters.fakes import FakeDaytona, MemoryExecutor
from rho_adapters.local import LocalExecutor
from rho_domain.errors import SensitivePath
from rho_domain.permissions import FileWriteMode
from rho_domain.ports.executor import Executor

NEVER = "secrets are never written"
SECRETS = (
    ".config/rho-agent/settings.yaml",
    ".config/rho-agent/profiles/wide.yaml",
    ".config/gh/config.yml",
    ".password-store/.gpg-id",
    ".config/gcloud/configurations/config_default",
    ".azure/config",
    ".cargo/credentials.toml",
    ".terraform.d/credentials.tfrc.json",
    ".local/share/keyrings/login.keyring",
    "deploy/credentials",
    "certs/server.PEM",
    ".bash_history",
)


def _build(backend: str, ws: Path, mode: FileWriteMode) -> Executor:
    if backend == "memory":
        return MemoryExecutor(root=str(ws), file_write=mode)
    if backend == "local":
        return LocalExecutor(str(ws), file_write=mode, secret_locations=(str(ws / "agent-home"),))
    fake = FakeDaytona()
    settings = fake.settings(working_dir=str(ws))
    return DaytonaExecutor(settings, file_write=mode, transport=fake.transport)


@pytest.mark.parametrize("backend", ["local", "daytona", "memory"])
async def test_a_secret_is_never_written(tmp_path: Path, backend: str) -> None:
    executor = _build(backend, tmp_path, FileWriteMode.FULL)
    own = ("agent-home/settings.yaml",) if backend == "local" else ()
    refused: dict[str, bool] = {}
    try:
        for path in (*SECRETS, *own):
            with pytest.raises(SensitivePath) as caught:
                await executor.write(path, b"aliases:\n  co: '!id'\n", overwrite=True)
            refused[path] = NEVER in str(caught.value)
        await executor.write("certs/server.pem.example", b"template\n", overwrite=True)
    finally:
        await executor.aclose()
    assert refused == dict.fromkeys((*SECRETS, *own), True)
    if backend != "memory":  # nothing on disk but the template: no directory made on the way
        assert [str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*")] == [
            "certs",
            "certs/server.pem.example",
        ]


async def test_create_only_creates_no_secret(tmp_path: Path) -> None:
    executor = _build("local", tmp_path, FileWriteMode.CREATE_ONLY)
    try:
        with pytest.raises(SensitivePath, match=NEVER):
            await executor.write("credentials.json", b"{}\n", overwrite=False)
    finally:
        await executor.aclose()
    assert not (tmp_path / "credentials.json").exists()
