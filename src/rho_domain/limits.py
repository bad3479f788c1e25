"""Resource limits on every command a profile runs: memory, CPU time, output, files, processes.

A value of the permission profile (``PermissionProfile.limits``, the ``limits:`` block of a
profile YAML). The executors apply it to every command they start, restricted or not: the
local one as rlimits on the command's processes (``RLIMIT_AS``, ``RLIMIT_CPU``,
``RLIMIT_FSIZE``, ``RLIMIT_NPROC``) and by killing the process group once the output passes
``output_bytes``; the Daytona one with ``ulimit`` in the remote command. ``None`` means no limit
of that kind (never the default).

``limit_hit`` names which limit most likely ended a command, from what the kernel and the
program left behind (a signal, a message): rlimits are enforced by the kernel, which does not
tell the parent why a child gave up.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal

import attrs

from rho_domain.value_methods import value_eq, value_hash, value_repr

MiB = 1 << 20
GiB = 1 << 30

LimitKind = Literal["memory", "cpu", "output", "file size"]

_SIGXCPU_EXIT = 128 + 24  # the kernel's soft CPU limit signal, reported as bash does
_SIGXFSZ_EXIT = 128 + 25  # a write past RLIMIT_FSIZE
# What programs print when an allocation fails under RLIMIT_AS (glibc's strerror(ENOMEM),
# GNU coreutils, jq, Python, C++ runtimes, Go, the JVM, V8), matched lowercase.
_OUT_OF_MEMORY = (
    "cannot allocate memory",
    "out of memory",
    "memory exhausted",
    "memoryerror",
    "bad_alloc",
    "failed to allocate",
    "allocation failed",
    "outofmemoryerror",
)

# A write past RLIMIT_FSIZE where SIGXFSZ is ignored (EFBIG), or a full private tmpfs.
_FILE_TOO_LARGE = ("file too large", "no space left on device")


def _positive(name: str) -> Callable[[object, object, float | None], None]:
    def check(_: object, __: object, value: float | None) -> None:
        if value is not None and value <= 0:
            raise ValueError(f"limits.{name}: expected a positive number or null, got {value!r}")

    return check


@attrs.frozen(kw_only=True)
class ResourceLimits:
    """Per-command limits (see the module docstring).

    ``memory_mib``: address space of each process (RLIMIT_AS), in MiB. ``cpu_seconds``: CPU time
    of each process (RLIMIT_CPU; SIGXCPU at the limit, SIGKILL a second later).
    ``output_mib``: output a command may produce before its process group is killed (what is
    *kept* for the model is the tool's own, smaller cap). ``file_size_mib``: the largest file a
    process may write (RLIMIT_FSIZE; without a sandbox a restricted command gets 0 whatever
    this says). ``processes``: how many processes a command may add to those its user already
    runs (RLIMIT_NPROC; the kernel does not apply it to root). ``run_written_mib``: the one
    limit of a run rather than of a command: the bytes the write and edit tools may write in
    one run, every file counted, its sub-agents' writes included (``tools.base.WriteTally``).
    """

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    memory_mib: int | None = attrs.field(default=1024, validator=_positive("memory_mib"))
    # 120 s, the readonly timeout: CPU time counts every thread, and a multi-threaded rg on a
    # large machine spends many CPU seconds per second of wall time.
    cpu_seconds: float | None = attrs.field(default=120.0, validator=_positive("cpu_seconds"))
    output_mib: int | None = attrs.field(default=64, validator=_positive("output_mib"))
    file_size_mib: int | None = attrs.field(default=256, validator=_positive("file_size_mib"))
    processes: int | None = attrs.field(default=256, validator=_positive("processes"))
    # not per command: what the write and edit tools may write in one run, all files together
    run_written_mib: int | None = attrs.field(default=1024, validator=_positive("run_written_mib"))

    @property
    def memory_bytes(self) -> int | None:
        """``memory_mib`` in bytes."""
        return None if self.memory_mib is None else self.memory_mib * MiB

    @property
    def output_bytes(self) -> int | None:
        """``output_mib`` in bytes."""
        return None if self.output_mib is None else self.output_mib * MiB

    @property
    def run_written_bytes(self) -> int | None:
        """``run_written_mib`` in bytes."""
        return None if self.run_written_mib is None else self.run_written_mib * MiB

    @property
    def file_size_bytes(self) -> int | None:
        """``file_size_mib`` in bytes."""
        return None if self.file_size_mib is None else self.file_size_mib * MiB

    def describe(self, kind: LimitKind) -> str:
        """The limit of ``kind`` in words, for a message to the model (``"1024 MiB"``)."""
        value = {
            "memory": self.memory_mib,
            "cpu": self.cpu_seconds,
            "output": self.output_mib,
            "file size": self.file_size_mib,
        }[kind]
        unit = "s of CPU time" if kind == "cpu" else "MiB"
        return f"{value:g} {unit}" if value is not None else "no limit"


def readonly_limits() -> ResourceLimits:
    """Limits for investigation: 1 GiB, 120 s of CPU, 64 MiB of output, 256 MiB files."""
    return ResourceLimits()


def development_limits() -> ResourceLimits:
    """Limits for builds and tests: room for a JVM or V8 (8 GiB of address space, 600 s of
    CPU per process, 16 GiB files, 1024 more processes)."""
    return ResourceLimits(memory_mib=8192, cpu_seconds=600.0, file_size_mib=16384, processes=1024)


def limit_hit(exit_code: int | None, output: str, limits: ResourceLimits) -> LimitKind | None:
    """The limit that most likely ended a command that exited with ``exit_code`` after printing
    ``output`` (the output limit is known for certain by whoever killed it, not here)."""
    if exit_code is None or exit_code == 0:
        return None
    if exit_code == _SIGXCPU_EXIT and limits.cpu_seconds is not None:
        return "cpu"
    if exit_code == _SIGXFSZ_EXIT and limits.file_size_mib is not None:
        return "file size"
    tail = output[-4000:].lower()
    if limits.memory_mib is not None and any(text in tail for text in _OUT_OF_MEMORY):
        return "memory"
    if limits.file_size_mib is not None and any(text in tail for text in _FILE_TOO_LARGE):
        return "file size"
    return None
