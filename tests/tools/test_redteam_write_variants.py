"""The write rules re-tried with variants nobody had seen (red-team pass varwrite16b).

Before, on the three backends, under ``file_write: full``:

* names as an NTFS disk opens them (a workspace on /mnt/c, ntfs-3g, Samba's streams module):
  ``.env::$DATA`` is ``.env`` itself (its unnamed data stream), ``.git::$INDEX_ALLOCATION``
  the directory ``.git``; ``.bashrc::$DATA``, ``x.pth::$DATA``, ``.mcp.json::$DATA`` were
  written; a short name with a trailing dot or a stream (``ENV~1.``, ``GIT~1::$DATA``)
  escaped the short-name shape;
* environments made without pyvenv.cfg (virtualenv before 20, a pipx venv over it: only
  ``bin/activate`` says what they are), tox's and nox's directories, Composer's
  ``vendor/bin`` and Bundler's ``vendor/bundle``: ``old/bin/pip`` and
  ``vendor/bin/phpunit`` were overwritten, the next run of them runs the model's code.

Now ``paths.folded`` drops an NTFS stream's type, ``is_short_name`` judges the folded name,
``bin/activate`` is an environment's marker, and ``.tox``, ``.nox``, ``vendor/bin`` and
``vendor/bundle`` are installed code by name."""

from __future__ import annotations

from pathlib import Path

import pytest
from write_backends import writer

from rho_adapters.daytona import DaytonaExecutor
from rho_adapters.fakes import FakeDaytona
from rho_adapters.local import LocalExecutor
from rho_domain.errors import SensitivePath
from rho_domain.permissions import FileWriteMode
from rho_domain.ports.executor import Executor

PLANTED = {
    "old/bin/activate": b"# virtualenv 16\n",
    "old/bin/pip": b"#!/bin/sh\nexec python -m pip\n",
    "vendor/bin/phpunit": b"#!/usr/bin/env php\n",
}
CASES = [
    (".env::$DATA", "secrets file"),
    (".git::$INDEX_ALLOCATION/config", "agents never write"),
    (".git:$I30:$INDEX_ALLOCATION/hooks/pre-commit", "agents never write"),
    (".bashrc::$DATA", "shell configuration"),
    ("x.pth::$DATA", "Python runs at every start"),
    (".mcp.json::$DATA", "agent, editor"),
    ("ENV~1.", "Windows short"),
    ("GIT~1::$DATA/config", "Windows short"),
    # NTFS's upcase table: the dotless i (U+0131) is I, .g\u0131t is .git (redmcp22)
    (".g\u0131t/hooks/pre-commit", "agents never write"),
    (".\u0131dea/workspace.xml", "agents never write"),
    ("old/bin/pip", "Python or conda environment"),
    ("old/lib/python2.7/site.py", "Python or conda environment"),
    (".tox/py39/bin/pytest", "installed code"),
    (".nox/tests/bin/pytest", "installed code"),
    ("vendor/bin/phpunit", "vendor/bin/"),
    ("vendor/bundle/ruby/3.2.0/gems/rake/lib/rake.rb", "vendor/bundle/"),
]


def _build(backend: str, ws: Path) -> Executor:
    return writer(backend, ws, FileWriteMode.FULL, PLANTED)


@pytest.mark.parametrize("backend", ["local", "daytona", "memory"])
async def test_ntfs_spellings_and_environments_without_pyvenv_cfg_are_never_written(
    tmp_path: Path, backend: str
) -> None:
    executor = _build(backend, tmp_path)
    refused: dict[str, str] = {}
    try:
        for path, why in CASES:
            with pytest.raises(SensitivePath) as caught:
                await executor.write(path, b"import os; os.system('id')\n", overwrite=True)
            refused[path] = why if why in str(caught.value) else str(caught.value)
        # a project's own bin/ and vendor/ and a name with a colon are written as before
        for path in ("tools/bin/run", "vendor/lib/util.go", "notes/a:b.md"):
            await executor.write(path, b"ok\n", overwrite=True)
    finally:
        await executor.aclose()
    assert refused == dict(CASES)
    if backend != "memory":
        for name, data in PLANTED.items():
            assert (tmp_path / name).read_bytes() == data
        assert not (tmp_path / ".tox").exists()
        assert not (tmp_path / "vendor/bundle").exists()


READ_SPELLINGS = [
    (".e\u200cnv", "secrets file (.env)"),  # HFS+ ignores U+200C: .env
    (".env::$DATA", "secrets file (.env)"),  # NTFS: .env's own data stream
    (".SSH::$INDEX_ALLOCATION/config", "secret location (*/.ssh)"),  # NTFS: the directory
    ("ENV~1", "Windows short (8.3) name"),  # NTFS: .env or .envrc, its text cannot say
    ("keys/\u0131d_rsa", "an SSH private key"),  # NTFS: the dotless i is I (redmcp22)
]


@pytest.mark.parametrize("backend", ["local", "daytona"])
async def test_secrets_spelled_as_a_disk_compares_names_are_never_read(
    tmp_path: Path, backend: str
) -> None:
    """Before (varwrite16b): the secrets policy casefolded names and nothing more, so the read
    tool returned each of these files (planted here under the spelling, as a disk that
    folds it would open the secret). Now the policy judges each component as
    ``names.folded`` does and refuses a short name, as the write rules do."""
    for name, _ in READ_SPELLINGS:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_bytes(b"API_KEY=s3cret\n")
    (tmp_path / "notes.md").write_bytes(b"ok\n")
    if backend == "local":
        executor: Executor = LocalExecutor(str(tmp_path))
    else:
        fake = FakeDaytona()
        executor = DaytonaExecutor(
            fake.settings(working_dir=str(tmp_path)), transport=fake.transport
        )
    refused: dict[str, str] = {}
    try:
        for name, why in READ_SPELLINGS:
            with pytest.raises(SensitivePath) as caught:
                await executor.read(name)
            refused[name] = why if why in str(caught.value) else str(caught.value)
        assert await executor.read("notes.md") == b"ok\n"
    finally:
        await executor.aclose()
    assert refused == dict(READ_SPELLINGS)


async def test_a_write_refused_through_a_link_leaves_no_directory(tmp_path: Path) -> None:
    """Before (varwrite16b): under ``full``, with ``lib -> sitecustomize`` (a link to a
    directory not made yet), ``lib/helper.py`` was refused once resolved, but the walk had
    judged ``sitecustomize`` as a file's name before making it, and an empty
    ``sitecustomize/`` stayed (a namespace package Python's site imports). Now each directory
    is judged as the file's directory before it is made."""
    (tmp_path / "lib").symlink_to("sitecustomize")
    (tmp_path / "pkg").symlink_to("usercustomize")
    executor = LocalExecutor(str(tmp_path), file_write=FileWriteMode.FULL)
    try:
        for path in ("lib/helper.py", "pkg/sub/mod.py"):
            with pytest.raises(SensitivePath, match="code Python runs at every start"):
                await executor.write(path, b"import os\n", overwrite=True)
    finally:
        await executor.aclose()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["lib", "pkg"]
