"""A seccomp filter for the sandbox: no new sockets, no io_uring.

The sandbox's network namespace has no interface but loopback, yet a socket *file* on a
read-only mount can still be connected to (Linux checks write permission on the socket, not
the mount), and a daemon listening there (a database, a container runtime, the session bus)
is a way out. Every socket family is refused instead: ``socket()`` fails with EACCES, which
programs that merely try (glibc asking nscd) take in their stride. ``io_uring_setup`` is
refused too (ENOSYS), since io_uring can open sockets without the ``socket`` system call.
Anything that is not the machine's own 64-bit ABI (x32, i386 through ``int 0x80``) fails
with EPERM: those tables have their own numbers for the same calls.

``socket_filter()`` returns the classic BPF program bubblewrap loads with ``--seccomp FD``
(an array of ``struct sock_filter``), or None on an architecture not listed here, where the
sandbox runs without it. A prepared argv names the descriptor ``FILTER_FD``; ``with_filter``
gives each process its own pipe holding the program (bubblewrap reads it to the end).
"""

from __future__ import annotations

import os
import platform
import struct
from collections.abc import Sequence

# AUDIT_ARCH_* and the numbers of socket and io_uring_setup in each ABI.
_ARCHES = {
    "x86_64": (0xC000003E, 41, 425),
    "aarch64": (0xC00000B7, 198, 425),
}
_X32_BIT = 0x40000000
_LD_W_ABS = 0x20  # BPF_LD | BPF_W | BPF_ABS
_JEQ_K = 0x15  # BPF_JMP | BPF_JEQ | BPF_K
_JGE_K = 0x35  # BPF_JMP | BPF_JGE | BPF_K
_RET_K = 0x06  # BPF_RET | BPF_K
_ALLOW = 0x7FFF0000
_ERRNO = 0x00050000
_EPERM, _EACCES, _ENOSYS = 1, 13, 38


def _op(code: int, k: int, jt: int = 0, jf: int = 0) -> bytes:
    return struct.pack("=HBBI", code, jt, jf, k)


def socket_filter(machine: str | None = None) -> bytes | None:
    """The filter for ``machine`` (``platform.machine()`` by default), or None."""
    known = _ARCHES.get(machine or platform.machine())
    if known is None:
        return None
    arch, socket_nr, io_uring_nr = known
    program = [
        _op(_LD_W_ABS, 4),  # seccomp_data.arch
        _op(_JEQ_K, arch, jt=0, jf=5),  # another ABI: to the EPERM at the end
        _op(_LD_W_ABS, 0),  # seccomp_data.nr
        _op(_JGE_K, _X32_BIT, jt=3, jf=0),  # x32 numbers: EPERM
        _op(_JEQ_K, socket_nr, jt=3, jf=0),
        _op(_JEQ_K, io_uring_nr, jt=3, jf=0),
        _op(_RET_K, _ALLOW),
        _op(_RET_K, _ERRNO | _EPERM),
        _op(_RET_K, _ERRNO | _EACCES),
        _op(_RET_K, _ERRNO | _ENOSYS),
    ]
    return b"".join(program)


FILTER = socket_filter()
# Stands for the descriptor of the filter in a prepared argv (``bwrap --seccomp FD``):
# ``with_filter`` opens a pipe per process and puts its number there.
FILTER_FD = "{seccomp-fd}"


def with_filter(argv: Sequence[str]) -> tuple[tuple[str, ...], tuple[int, ...]]:
    """``argv`` with ``FILTER_FD`` replaced by a fresh pipe holding ``FILTER``, and that pipe's
    read end (to pass to the child, and to close here once it has started)."""
    if FILTER_FD not in argv or FILTER is None:
        return tuple(argv), ()
    read_end, write_end = os.pipe2(os.O_CLOEXEC)
    try:
        os.write(write_end, FILTER)  # a few dozen bytes: never blocks
    finally:
        os.close(write_end)
    return tuple(str(read_end) if word == FILTER_FD else word for word in argv), (read_end,)
