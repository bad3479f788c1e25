"""What a Daytona shell command leaves running ends with its call: the marks each of its
processes carries, the sweep that kills those still running, and the deadline's script that
runs the command and then the sweep (``scripts.capped``).

Each mark is inherited through fork, exec and ``setsid``, and is the call's own (a command of
another call, running beside it in the sandbox, carries another):

* ``RHO_CALL_MARK=<token>`` in the environment: lost to ``env -i``;
* descriptor 8 open on a file of the call's: lost to a program that closes its descriptors
  (a daemon closing every one of its own);
* the soft limit on file locks set to a number of the call's (``limit_mark``): Linux has not
  enforced that limit since 2.4.25, so it changes nothing for a program; lost only to one
  that sets that limit itself. The script sets it with ``ulimit -w`` (dash) or ``-x``
  (bash); a shell with neither leaves the other two marks.

No process group, session or parent survives ``setsid``, and a cgroup or PID namespace per
call needs privileges the sandbox's user lacks.
"""

from __future__ import annotations

import hashlib
import math
import re
import shlex

DEADLINE_GRACE = 1
"""Seconds past a command's timeout at which its own deadline (``capped``'s) ends it."""

CALL_MARK = "RHO_CALL_MARK"
"""The environment variable that marks every process of one shell command (``capped``'s
``mark``): what the command left running is found by it and killed when the call ends."""

MARK_FD = 8
"""The descriptor every process of one shell command inherits, open on a file of that call's
(``capped``'s ``mark``): a program that clears its environment (``env -i setsid cmd &``) keeps
it, unless it closes its descriptors too."""

LATE = "late"
"""The trailer's exit code of a command its own deadline ended (``Captured.late``)."""


def limit_mark(mark: str) -> int:
    """The soft file-locks limit every process of the call ``mark`` starts with: a number of
    ten digits drawn from ``mark``, which no limit anyone sets by hand looks like."""
    digest = hashlib.sha256(mark.encode()).digest()
    return 1_000_000_000 + int.from_bytes(digest[:4], "big") % 1_000_000_000


# The longest script ``deadline_body`` gives its shell as an argument: Linux takes 128 KiB in
# one (MAX_ARG_STRLEN); half, so that the environment and the other words always fit too.
ARGUMENT_BYTES = 65_536


def deadline_body(inner: str, timeout: float, mark: str | None) -> str:
    """``capped``'s body with a deadline: GNU ``timeout`` leads a process group of its own,
    sends it TERM ``DEADLINE_GRACE`` s after ``timeout`` and KILL a second later (daemons
    that only answer 408 at the timeout, or none, left the command running). The script
    reaches the inner ``sh`` as its argument, or on its stdin when longer than
    ``ARGUMENT_BYTES`` (``printf`` is a builtin: no argument limit), which runs it in a
    subshell (an ``exit`` in it ends only that) and writes its status to ``$d/ran``; no
    status there, and ``timeout`` ended by its signal (124, or 137 after the KILL), is
    ``LATE``. Then the processes marked ``mark`` are killed (``_sweep``), here and
    by a watcher in a session of its own (``setsid``, where the image has it): a daemon that
    kills the command's process group at the timeout (408) kills this script too, never
    ``timeout``'s group nor what left it."""
    seconds = max(1, math.ceil(timeout)) + DEADLINE_GRACE
    # A script that fits in one argument is given as one (``$1``): on stdin it cost a
    # ``cat`` a command (1.1-1.3 ms of the sandbox's CPU), which a longer one still pays.
    given = len(inner.encode()) <= ARGUMENT_BYTES
    run = '(eval "$1") </dev/null; echo $? >"$0"'
    if not given:
        run = f"rho_inner=$(cat) || exit 125; {run.replace('$1', '$rho_inner')}"
    marked = ""
    if mark is not None:
        locks = limit_mark(mark)  # only the command's: the sweeping shell must not match
        run = f"ulimit -S -w {locks} 2>/dev/null || ulimit -S -x {locks} 2>/dev/null; {run}"
        marked = f"{CALL_MARK}={shlex.quote(mark)} "
    started = f"{marked}timeout -k 1 {seconds} sh -c '{run}' \"$d/ran\""
    if given:
        started += f" {shlex.quote(inner)}"
    else:
        started = f"printf '%s' {shlex.quote(inner)} | {started}"
    if mark is None:
        ended = f"{started}; rho_t=$?; "
    else:
        watcher = f'while kill -0 "$1" 2>/dev/null; do sleep 1; done; {_sweep(mark, "$2")}'
        ended = (
            f'{started} {MARK_FD}>"$d/mark" & rho_pid=$!; '
            "if command -v setsid >/dev/null 2>&1; then "
            f'setsid sh -c {shlex.quote(watcher)} sh "$rho_pid" "$d" </dev/null >/dev/null '
            "2>&1 & fi; "
            f'wait "$rho_pid"; rho_t=$?; {_sweep(mark, "$d")}'
        )
    return (
        f"{ended}"
        'if [ -s "$d/ran" ]; then read -r rho_t <"$d/ran"; '
        f'elif [ "$rho_t" = 124 ] || [ "$rho_t" = 137 ]; then rho_t={LATE}; fi; '
        'echo "$rho_t" >"$d/rc";'
    )


def _sweep(mark: str, directory: str) -> str:
    """Kill every process that carries one of the call ``mark``'s marks, twice (one may have
    forked meanwhile): its environment's ``CALL_MARK=mark`` or its file-locks limit
    (``limit_mark``), one ``grep -z`` over both files of every process (two greps cost
    twice the CPU of one); its ``MARK_FD`` on ``<directory>/mark`` (``(deleted)`` once the
    script removed it; that one descriptor only: all of every process's cost 4 times the
    CPU). A grep or find that cannot (``-z``, ``-lname``) says nothing."""
    said = shlex.quote(f"^{CALL_MARK}={re.escape(mark)}$")
    locks = f"'Max file locks +{limit_mark(mark)} '"
    found = (
        f"grep -l -s -z -E -e {said} -e {locks} /proc/[0-9]*/environ /proc/[0-9]*/limits "
        "2>/dev/null; "
        f'find /proc/[0-9]*/fd/{MARK_FD} -maxdepth 0 -lname "{directory}/mark*" 2>/dev/null'
    )
    return (
        f"for rho_round in 1 2; do for rho_p in $({found}); do rho_p=${{rho_p#/proc/}}; "
        'kill -9 "${rho_p%%/*}" 2>/dev/null; done; done; '
    )
