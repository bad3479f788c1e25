"""The directories a command starts in and sees, held open from the walk that judged them.

The executor judges a command's working directory and the sandbox's roots by walking their
real paths from ``/`` without following a link (``confine.Tree``), but the process then took
them by path again: ``Popen(cwd=path)`` and bubblewrap's ``--ro-bind-try ROOT ROOT`` follow
whatever the path is when they run, so a parent swapped for a link after the walk (``mv
~/code ~/old; ln -s /elsewhere ~/code``) started the command in ``/elsewhere/app``, or showed
``/elsewhere/app`` as the workspace inside the sandbox, where the masks found for the real
one do not fit (redshell26).

Now the walk itself opens them: ``held_cwd`` opens the working directory and
``roots_by_descriptor`` each root the sandbox binds, and the process takes each by its
descriptor (``/proc/self/fd/N``: the child's ``chdir`` runs before it closes its inherited
descriptors; bubblewrap binds the directory the descriptor holds, ``--ro-bind-fd``, and
closes it before the command starts: a descriptor the command inherits leads, through
``/proc/self/fd/N``, into the host's mount of its directory, where no mask of the sandbox
is, so ``cat /proc/self/fd/*/.env`` printed the workspace's ``.env``, redfiles28). A
directory replaced by a link meanwhile fails the walk (``ExecutorError`` naming it); a read
root gone is dropped, as ``--ro-bind-try`` drops it. ``run_held`` starts the processes that
inspect before a command (git's discovery, its objects' types) the same way (redfiles27).
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Sequence
from typing import Any

from rho_adapters.local.confine import Tree
from rho_domain.errors import ExecutorError

_BIND_TRY = "--ro-bind-try"  # the sandbox's roots (``sandbox.bwrap_args``)
_BIND_FD = "--ro-bind-fd"  # bubblewrap closes the descriptor once bound
_FDS = "/proc/self/fd"
NO_PROC = (
    "commands start in the directory the executor judged by its descriptor, under "
    f"{_FDS}, and this process sees no /proc (a container or chroot without it): nothing "
    "ran; mount it (mount -t proc proc /proc) to run commands; the file tools still work"
)


def held_cwd(cwd: str) -> int:
    """The working directory at the real path ``cwd``, walked to (see the module docstring):
    the caller's to close once the child has started; ``ExecutorError`` naming it when it
    is gone or a directory on its path is a link now, or when this machine has no ``/proc``
    (``NO_PROC``: the child could not start in it; no fallback takes it by path again)."""
    if not os.path.isdir(_FDS):
        raise ExecutorError(NO_PROC)
    return _walked(cwd)


def roots_by_descriptor(
    argv: Sequence[str], roots: Sequence[str]
) -> tuple[tuple[str, ...], tuple[int, ...]]:
    """``argv`` (a bubblewrap command line, or any other, unchanged) with each of ``roots``
    (real paths: the workspace, the read roots) it binds (``--ro-bind-try ROOT ROOT``) taken
    from a descriptor of the walked directory (``--ro-bind-fd N ROOT``: bubblewrap closes it
    before the command starts), and those descriptors: the caller passes them to the child
    and closes them once it has started. The program directories it binds are
    not walked: a link on their path is theirs (``.venv/bin``), and no secret's wall."""
    words, opened = list(argv), []
    try:
        for i in range(len(words) - 2):
            if words[i] == _BIND_TRY and words[i + 1] == words[i + 2] and words[i + 1] in roots:
                if not os.path.lexists(words[i + 1]):  # a root gone: not shown, as before
                    continue
                opened.append(fd := _walked(words[i + 1]))
                words[i : i + 2] = [_BIND_FD, str(fd)]
    except BaseException:
        for fd in opened:
            os.close(fd)
        raise
    return tuple(words), tuple(opened)


def run_held(
    argv: Sequence[str], cwd: str, roots: Sequence[str], **options: Any
) -> subprocess.CompletedProcess[Any]:
    """``subprocess.run(argv, **options)`` started in the directory walked to at the real
    path ``cwd``, each of ``roots`` a bubblewrap ``argv`` binds taken from a descriptor of
    the directory walked to (see the module docstring); the descriptors are closed after it
    ran. Raises what ``held_cwd`` and ``subprocess.run`` raise."""
    opened = [held_cwd(cwd)]
    try:
        argv, held = roots_by_descriptor(argv, roots)
        opened.extend(held)
        return subprocess.run(argv, cwd=descriptor_path(opened[0]), pass_fds=held, **options)
    finally:
        for fd in opened:
            os.close(fd)


# A sandboxed stage started below a root: bubblewrap's ``--chdir`` looks the directory up
# by path when the sandbox starts (``sub`` exchanged for a link to ``/etc`` started ``cd sub
# && cat hostname`` in ``/etc``, redfiles27), so the stage first checks that it stands in
# the directory held (its device and inode, given as numbers: a descriptor passed in stayed
# open in the command, a way around every mask, redfiles28) and runs nothing elsewhere.
_SHELL = "/bin/sh"
_CHECK = (
    '[ "$("$1" -c %d:%i .)" = "$0" ] || { echo "rho-agent: the directory changed while the '
    'sandbox started: nothing ran; run it again" >&2; exit 126; }; shift; exec "$@"'
)
_HELD = "held-cwd"  # the directory's device:inode, once spawn_pipeline holds it
_STATS = ("/usr/bin/stat", "/bin/stat")  # the system's, never one a PATH entry may plant


def system_stat(why: str) -> str:
    """The system's ``stat`` (coreutils), which the sandbox's checks run; ``ExecutorError``
    naming ``why`` it is needed and where it was looked for when there is none: a check
    that cannot run refuses the command, never lets it run unchecked."""
    stat = next((path for path in _STATS if os.access(path, os.X_OK)), None)
    if stat is None:
        raise ExecutorError(
            f"{why} with coreutils' stat, and none is at {' or '.join(_STATS)}: install coreutils"
        )
    return stat


def cwd_checked(argv: Sequence[str]) -> tuple[str, ...]:
    """``argv`` (a program's, after the sandbox's prefix) run once its working directory is
    checked to be the one held (``cwd_by_identity`` fills in which). ``ExecutorError`` when
    the system has no ``stat`` (coreutils) to check with."""
    stat = system_stat("a sandboxed command below the workspace's root checks where it stands")
    return (_SHELL, "-c", _CHECK, _HELD, stat, *argv)


def checked_below_roots(
    argv: Sequence[str], cwd: str, roots: Sequence[str], *, allow: bool
) -> tuple[str, ...]:
    """``argv`` (a sandboxed stage's program) ``cwd_checked`` where bubblewrap's ``--chdir``
    may lead elsewhere: below a root, and anywhere under ``read_outside: allow`` (the
    machine's own directories above a root); unchanged otherwise."""
    if cwd not in roots or allow:
        return cwd_checked(argv)
    return tuple(argv)


def cwd_by_identity(argv: Sequence[str], fd: int) -> tuple[str, ...]:
    """``argv`` with ``cwd_checked``'s check told the device and inode of the held working
    directory ``fd`` (unchanged when ``argv`` has no check). No descriptor is passed."""
    words = list(argv)
    for i in range(len(words) - 3):
        if words[i : i + 4] == [_SHELL, "-c", _CHECK, _HELD]:
            st = os.fstat(fd)
            words[i + 3] = f"{st.st_dev}:{st.st_ino}"
            break
    return tuple(words)


def descriptor_path(fd: int) -> str:
    """The path a process (this one, or a child that inherited ``fd``) opens ``fd``'s file
    by: the file itself, whatever its path names now."""
    return f"{_FDS}/{fd}"


def _walked(real: str) -> int:
    try:
        return Tree(real, real=True).open_root()
    except ExecutorError:
        raise
    except OSError as exc:
        raise ExecutorError(f"cannot open the directory {real}: {exc.strerror}") from None
