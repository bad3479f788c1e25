"""Rlimits on a command, set by a launcher in front of it rather than in a ``preexec_fn``.

``limited(argv, ...)`` prefixes ``argv`` with util-linux's ``prlimit`` (a small C program that
sets its own limits and execs the command) or, where that is missing, with a few lines of
Python (``-I -S``) that do the same. Either way the limits are set after ``fork`` by a fresh
program, not by Python code running in the forked child of a threaded agent, and they are
inherited by everything the command starts: bubblewrap and its sandbox, the guard and bash.

Limits set: ``RLIMIT_AS`` (memory), ``RLIMIT_CPU`` (soft at the limit, hard a second later:
SIGXCPU, then SIGKILL), ``RLIMIT_FSIZE``, ``RLIMIT_NPROC`` and no core dumps. A command can
lower them, never raise them (hard = soft, and the sandbox drops every capability).
"""

from __future__ import annotations

import contextlib
import math
import os
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

import attrs

from rho_domain.value_methods import value_eq, value_hash, value_repr

if TYPE_CHECKING:
    from rho_domain.limits import ResourceLimits

_LAUNCHER = r"""
import os, resource, signal, sys
for name in ("SIGPIPE", "SIGXFSZ"):  # Python ignores them; the command must not inherit that
    signal.signal(getattr(signal, name), signal.SIG_DFL)
n = int(sys.argv[1])
for spec in sys.argv[2:2 + n]:
    name, soft, hard = spec.split(":")
    resource.setrlimit(getattr(resource, name), (int(soft), int(hard)))
try:
    os.execvp(sys.argv[2 + n], sys.argv[2 + n:])
except OSError as exc:
    os.write(2, ("%s: %s\n" % (sys.argv[2 + n], exc.strerror)).encode())
    os._exit(127)
"""

_PRLIMIT_NAMES = {
    "RLIMIT_AS": "as",
    "RLIMIT_CPU": "cpu",
    "RLIMIT_FSIZE": "fsize",
    "RLIMIT_NPROC": "nproc",
    "RLIMIT_CORE": "core",
}


@attrs.frozen(kw_only=True)
class Rlimits:
    """The rlimits of one command, in the kernel's units (bytes, seconds, processes);
    ``None`` leaves that limit as the agent has it."""

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    memory: int | None = None
    cpu_seconds: float | None = None
    file_size: int | None = None
    processes: int | None = None

    def pairs(self) -> list[tuple[str, int, int]]:
        """(resource name, soft, hard) for each limit set, core dumps off always, none past
        the agent's own hard limit (``_within_own``)."""
        return [_within_own(*pair) for pair in self._asked()]

    def _asked(self) -> list[tuple[str, int, int]]:
        out = [("RLIMIT_CORE", 0, 0)]
        if self.memory is not None:
            out.append(("RLIMIT_AS", self.memory, self.memory))
        if self.cpu_seconds is not None:
            soft = max(1, math.ceil(self.cpu_seconds))
            out.append(("RLIMIT_CPU", soft, soft + 1))
        if self.file_size is not None:
            out.append(("RLIMIT_FSIZE", self.file_size, self.file_size))
        if self.processes is not None:
            out.append(("RLIMIT_NPROC", self.processes, self.processes))
        return out


def _within_own(name: str, soft: int, hard: int) -> tuple[str, int, int]:
    """A limit no looser than the agent's own hard one, which a process without
    CAP_SYS_RESOURCE cannot raise: under the user's ``ulimit -f 100000`` (soft and hard) the
    profile's 1 GiB file size made prlimit fail ("failed to set the FSIZE resource limit:
    Operation not permitted"), and the Python launcher too, so every command failed; so did a
    ``ulimit -v`` or ``-t`` under the profile's memory or CPU. The user's limit stands."""
    import resource

    own = resource.getrlimit(getattr(resource, name))[1]
    if own == resource.RLIM_INFINITY:
        return name, soft, hard
    return name, min(soft, own), min(hard, own)


def profile_rlimits(limits: ResourceLimits, *, file_size: int | None) -> Rlimits:
    """The profile's ``limits`` as one command's rlimits, ``file_size`` decided by the caller.
    RLIMIT_NPROC counts per user, so its limit is this user's processes now plus the
    profile's (none for root)."""
    processes = limits.processes
    nproc = None
    if processes is not None and os.getuid() != 0:  # the kernel exempts root anyway
        nproc = _user_process_count() + processes
    return Rlimits(
        memory=limits.memory_bytes,
        cpu_seconds=limits.cpu_seconds,
        file_size=file_size,
        processes=nproc,
    )


def _user_process_count() -> int:
    uid = os.getuid()
    count = 0
    with contextlib.suppress(OSError):
        for entry in os.scandir("/proc"):
            if entry.name.isdigit():
                with contextlib.suppress(OSError):
                    count += entry.stat().st_uid == uid
    return count


def limited(argv: Sequence[str], limits: Rlimits, *, prlimit: str | None) -> tuple[str, ...]:
    """``argv`` run under ``limits``: through ``prlimit`` (its absolute path) when there is
    one, else through the Python launcher."""
    pairs = limits.pairs()
    if prlimit is not None:
        options = [f"--{_PRLIMIT_NAMES[name]}={soft}:{hard}" for name, soft, hard in pairs]
        return (prlimit, *options, "--", *argv)
    specs = [f"{name}:{soft}:{hard}" for name, soft, hard in pairs]
    return (sys.executable, "-I", "-S", "-c", _LAUNCHER, str(len(specs)), *specs, *argv)
