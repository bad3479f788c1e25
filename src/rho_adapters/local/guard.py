"""A guard process that makes a command die with the agent, even after ``kill -9``.

Killing a process group on timeout or cancellation needs the agent alive to do it. When the
agent itself is killed (SIGKILL, OOM killer, a crashed container runtime), nothing is left to
send that signal, and an unrestricted ``bash`` tool would keep running, reparented to pid 1,
while the resumed session tells the model its effects are unknown.

Inside bubblewrap this is the sandbox's job (``--die-with-parent`` and a PID namespace: when
bwrap's init dies, the kernel kills every process in it). Everywhere else each command runs
under this guard, a small Python process started in the command's fresh process group:

* ``PR_SET_PDEATHSIG``: the kernel sends the guard SIGTERM when the agent dies; the guard then
  kills its whole process group with SIGKILL (the command and everything it started that
  stayed in the group);
* ``PR_SET_CHILD_SUBREAPER``: descendants orphaned inside the command (``cmd &`` in a
  subshell, ``setsid cmd &``, a daemon's double fork) are reparented to the guard rather than
  to pid 1, and are killed with it: when the agent dies, and when the command itself ends
  (what it left running would otherwise outlive the call, and the agent after it);
* the guard checks its parent right after arming, so an agent that died while the guard was
  starting is not missed.

The guard forks the command, waits for it, and exits with its status (``128 + signal`` for a
signal, as bash reports it). A command's rlimits (``rlimits.Rlimits.pairs``) are set by the
guard's child between the fork and the exec: the guard is a fresh single-threaded program, so
this is safe where a ``preexec_fn`` in the threaded agent is not; the limits are in force
before the command's first instruction and inherited by all it starts, and the extra
``prlimit`` exec a guarded command had before (about 1 ms of CPU) is gone. A limit that
cannot be set runs nothing: the child says which and exits 126.

It uses only the standard library and starts with ``-I -S``; it starts before every command,
so it imports ``_signal``, the C module under ``signal``: the ``signal`` module builds its
enums at import, which cost 8-12 ms of CPU a command (about 30 % of the guard's; 20 against
30 ms measured per guarded ``/bin/true``). For the same reason it calls ``prctl`` through
``_ctypes``, the C module under ``ctypes``, with the two types it needs declared as ``ctypes``
declares them: ``import ctypes`` builds every C type and loads ``struct``, 3-4 ms of a
guard's 18 (docs/benchmarks.md, ``bench_tool_spawn``); ``resource``, a C module of 0.25 ms,
only when there are limits to set.
"""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Sequence

_SCRIPT = r"""
import _ctypes, _signal, os, sys

class c_int(_ctypes._SimpleCData):  # ctypes.c_int, CDLL's function type and CDLL(None)
    _type_ = "i"

class CFunction(_ctypes.CFuncPtr):
    _flags_ = _ctypes.FUNCFLAG_CDECL
    _restype_ = c_int

class Process:
    _handle = _ctypes.dlopen(None)

# A service (an MCP server) is asked to stop with TERM to its group, which the guard leaves
# to it; the agent's death and an explicit stop reach the guard as USR1 then.
service = sys.argv[2] == "service"
n_limits = int(sys.argv[3])
limits = [spec.split(":") for spec in sys.argv[4:4 + n_limits]]
command = sys.argv[4 + n_limits:]
if limits:
    import resource
STOP = _signal.SIGUSR1 if service else _signal.SIGTERM
prctl = CFunction(("prctl", Process()))
prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
prctl(1, STOP, 0, 0, 0)  # PR_SET_PDEATHSIG

def children():
    try:
        listed = open("/proc/self/task/%d/children" % os.getpid()).read()
        return [int(pid) for pid in listed.split()]
    except (OSError, ValueError):
        return []

def end_strays():
    # What the command left running when it ended and that left its group (setsid, a
    # daemon's double fork) was reparented here: kill it, reap it, and kill what its death
    # reparents here in turn, until nothing is left below.
    while True:
        strays = children()
        if not strays:
            return
        for pid in strays:
            try:
                os.kill(pid, _signal.SIGKILL)
            except OSError:
                pass
        try:
            os.waitpid(-1, 0)
        except ChildProcessError:
            return
        except InterruptedError:
            pass

def stop(*_):
    end_strays()  # orphans reparented here may have left the group (setsid)
    os.killpg(0, _signal.SIGKILL)

_signal.signal(STOP, stop)
if service:
    _signal.signal(_signal.SIGTERM, _signal.SIG_IGN)
if os.getppid() != int(sys.argv[1]):
    stop()
child = os.fork()
if child == 0:
    for sig in (STOP, _signal.SIGTERM, _signal.SIGPIPE, _signal.SIGXFSZ):  # set aside here
        _signal.signal(sig, _signal.SIG_DFL)
    for name, soft, hard in limits:  # the command's own, set before it runs: never exec without
        try:
            resource.setrlimit(getattr(resource, name), (int(soft), int(hard)))
        except (OSError, ValueError) as exc:
            os.write(2, ("rho-agent: cannot set %s to %s:%s for %s: %s\n"
                         % (name, soft, hard, command[0], exc)).encode())
            os._exit(126)
    try:
        os.execvp(command[0], command)
    except OSError as exc:
        os.write(2, ("%s: %s\n" % (command[0], exc.strerror)).encode())
        os._exit(127)
if service:  # the server's pipes are its own: held here, a server that closed its stdout
    os.close(0)  # (or stdin) and ran on was never seen to, and each call waited its timeout
    os.close(1)
while True:
    try:
        pid, status = os.waitpid(-1, 0)
    except ChildProcessError:
        sys.exit(0)
    except InterruptedError:
        continue
    if pid == child:
        code = os.waitstatus_to_exitcode(status)
        end_strays()
        sys.exit(code if code >= 0 else 128 - code)
"""


def guarded(argv: tuple[str, ...], rlimits: Sequence[tuple[str, int, int]] = ()) -> tuple[str, ...]:
    """``argv`` run under the guard: it dies with this process (see the module docstring),
    and runs under ``rlimits`` ((``RLIMIT_*`` name, soft, hard) each, ``Rlimits.pairs``), set
    by the guard's child before the exec."""
    specs = [f"{name}:{soft}:{hard}" for name, soft, hard in rlimits]
    pid = str(os.getpid())
    return (
        sys.executable,
        "-I",
        "-S",
        "-c",
        _SCRIPT,
        pid,
        "command",
        str(len(specs)),
        *specs,
        *argv,
    )


def guarded_service(argv: Sequence[str]) -> tuple[str, ...]:
    """``argv``, a long-lived program (an MCP server), run under the guard in service mode.

    As for a command, the program and what it leaves behind die with this process, and what it
    left running when it exits is killed. Unlike a command's guard, this one ignores TERM sent
    to its group, so the program gets to stop on its own; ``STOP_SERVICE`` sent to the guard
    kills the program and everything below it at once. The guard exits with the program's
    status; a program that cannot be executed exits 127, saying why on stderr."""
    return (sys.executable, "-I", "-S", "-c", _SCRIPT, str(os.getpid()), "service", "0", *argv)


STOP_SERVICE = signal.SIGUSR1
