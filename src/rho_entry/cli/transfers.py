"""``--upload``, ``--download``, ``--dockerfile`` and ``--snapshot``: the operator's files in and
out of the executor, and how a Daytona sandbox is built.

``--upload LOCAL:REMOTE`` (repeatable; split on the last colon): a file, or a directory copied
recursively (``.git``, ``node_modules``, ``__pycache__``, ``.venv``, ``venv`` and ``.tox``
skipped, as the public implementation does), into the executor before the agent runs, through
``Executor.upload`` (a Daytona sandbox: anywhere in it; the local backend: inside the
workspace). The operator's act, so the profile's write mode does not apply; but no secret
leaves this machine: a named file the secrets policy refuses (``.env``, keys, credentials,
anything under ``~/.ssh``..., judged by its real path) stops the launch, and one found inside
a directory is skipped and named, as is a link there to a file outside that directory.
``--download REMOTE:LOCAL`` (repeatable) copies a file the agent left (read through
``Executor.read``, so the profile's read rules and the secrets policy apply) to this machine
after the run; an existing LOCAL is kept unless ``--force``.
``--dockerfile FILE`` / ``--snapshot NAME`` (one of them) choose how the sandbox is built and
imply ``--backend daytona``.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import attrs

from rho_domain.errors import ConfigError, RhoError
from rho_domain.ports.executor import Executor
from rho_domain.secrets import SecretPolicy
from rho_domain.value_methods import value_eq, value_hash, value_repr
from rho_entry.config.home import expanded

if TYPE_CHECKING:  # built with the first --upload
    from rho_domain.ports.commands import FileUpload

SKIPPED_DIRS = frozenset({".git", "node_modules", "__pycache__", ".venv", "venv", ".tox"})
MAX_UPLOAD_BYTES = 1 << 30  # all files of one launch: beyond it, package them in the image


@attrs.frozen(kw_only=True)
class Transfers:
    """What ``--upload``/``--download``/``--dockerfile``/``--snapshot`` asked for."""

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    uploads: tuple[tuple[Path, str], ...] = ()
    downloads: tuple[tuple[str, Path], ...] = ()
    dockerfile: str | None = None  # the Dockerfile's text
    snapshot: str | None = None
    force: bool = False

    @property
    def builds_sandbox(self) -> bool:
        """Whether the sandbox is built from a Dockerfile or a snapshot named here."""
        return self.dockerfile is not None or self.snapshot is not None


def _split(spec: str, flag: str, example: str) -> tuple[str, str]:
    head, colon, tail = spec.rpartition(":")
    if not colon or not head or not tail:
        raise ConfigError(f"{flag} {spec!r}: expected {example}")
    return head, tail


def parse_transfers(
    uploads: Sequence[str],
    downloads: Sequence[str],
    *,
    dockerfile: str | None,
    snapshot: str | None,
    force: bool = False,
) -> Transfers:
    """Validate the flags (files are read later, by ``read_uploads``); ``ConfigError`` says
    what to fix."""
    if dockerfile is not None and snapshot is not None:
        raise ConfigError("--dockerfile and --snapshot exclude each other: give one")
    text = None
    if dockerfile is not None:
        from rho_entry.config.yaml_text import read_config_text

        where = f"--dockerfile {dockerfile}"  # a directory was "no such file"; read bounded
        text = read_config_text(expanded(dockerfile), where=where, what="the Dockerfile")
    ups = []
    for spec in uploads:
        local, remote = _split(spec, "--upload", "LOCAL:REMOTE (./data:/home/daytona/data)")
        source = expanded(local)
        if not source.exists():
            raise ConfigError(f"--upload {spec!r}: {local} does not exist")
        ups.append((source, remote))
    downs = []
    for spec in downloads:
        remote, local = _split(spec, "--download", "REMOTE:LOCAL (report.md:./report.md)")
        downs.append((remote, expanded(local)))
    return Transfers(
        uploads=tuple(ups),
        downloads=tuple(downs),
        dockerfile=text,
        snapshot=snapshot or None,
        force=force,
    )


def read_uploads(
    transfers: Transfers,
    policy: SecretPolicy,
    notice: Callable[[str], None],
    *,
    limit: int = MAX_UPLOAD_BYTES,
) -> tuple[FileUpload, ...]:
    """The files to upload, read from this machine, at most ``limit`` bytes in all
    (``_read_file``). A named secret raises ``ConfigError``; one inside an uploaded directory
    is skipped and ``notice`` says so, as is a link there to a file outside that directory
    (a repository's ``docs/x -> ../../..``: the operator named the directory, not what its
    links reach)."""
    from rho_domain.ports.commands import FileUpload

    files: list[FileUpload] = []
    total = 0
    for source, remote in transfers.uploads:
        if reason := policy.refusal(os.path.realpath(source)) or policy.refusal(str(source)):
            raise ConfigError(
                f"--upload {source}: refused, a secret is never uploaded ({reason}); "
                "pass the value to the sandbox another way"
            )
        inside = os.path.realpath(source)
        for path, target in _walk(source, remote):
            real = os.path.realpath(path)
            if reason := policy.refusal(real) or policy.refusal(str(path)):
                notice(f"--upload: skipped {path}: a secret is never uploaded ({reason})")
                continue
            if path != source and os.path.commonpath([real, inside]) != inside:
                notice(
                    f"--upload: skipped {path}: a link to {real}, outside {source} (name "
                    "that file in an --upload of its own to send it)"
                )
                continue
            data = _read_file(path, limit - total)
            total += len(data)
            files.append(FileUpload(path=target, data=data))
    return tuple(files)


def _read_file(path: Path, room: int) -> bytes:
    """The bytes of the regular file ``path``, ``ConfigError`` for anything else or past
    ``room`` bytes. Opened without blocking and judged on what was opened: before, a FIFO
    blocked the launch for ever and ``/dev/zero`` was read until memory ran out, as was a
    file of any size before the total was checked."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        raise ConfigError(f"--upload {path}: {exc.strerror}") from exc
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise ConfigError(f"--upload {path}: not a regular file (a FIFO, a device...)")
        data = b"" if info.st_size > room else handle.read(room + 1)  # it may have grown
        if info.st_size > room or len(data) > room:
            raise ConfigError(
                f"--upload: more than {MAX_UPLOAD_BYTES >> 20} MiB in all with {path}; build "
                "the files into the image (--dockerfile) or a snapshot instead"
            )
    return data


def _walk(source: Path, remote: str) -> list[tuple[Path, str]]:
    """(local file, remote path) for a file, or for every file below a directory (links to
    directories not followed; the skipped directories left out)."""
    if not source.is_dir():
        return [(source, remote)]
    out: list[tuple[Path, str]] = []
    for top, dirs, names in os.walk(source):
        dirs[:] = sorted(d for d in dirs if d not in SKIPPED_DIRS)
        for name in sorted(names):
            path = Path(top) / name
            if path.is_file():
                relative = path.relative_to(source).as_posix()
                out.append((path, f"{remote.rstrip('/')}/{relative}"))
    return out


async def upload(
    executor: Executor, files: Sequence[FileUpload], notice: Callable[[str], None]
) -> None:
    """Put ``files`` into ``executor``; ``RhoError`` becomes a ``ConfigError`` naming it."""
    if not files:
        return
    try:
        await executor.upload(files)
    except RhoError as exc:
        raise ConfigError(f"--upload failed: {exc}") from exc
    size = sum(len(f.data) for f in files)
    notice(f"uploaded {len(files)} file(s), {size:,} bytes")


async def download(executor: Executor, transfers: Transfers, notice: Callable[[str], None]) -> int:
    """Copy each ``--download`` file here, each replaced whole (a failed write leaves none
    cut short); the number that failed (each said)."""
    from rho_adapters.unnamed import write_whole

    failed = 0
    for remote, local in transfers.downloads:
        try:
            if local.exists() and not transfers.force:
                raise ConfigError(f"{local} exists (--force replaces it)")
            data = await executor.read(remote)
            local.parent.mkdir(parents=True, exist_ok=True)
            write_whole(local, data)  # a failed write leaves no half file
        except (RhoError, OSError) as exc:
            failed += 1
            notice(f"--download {remote}: {exc}")
            continue
        notice(f"downloaded {remote} -> {local} ({len(data):,} bytes)")
    return failed
