"""The bubblewrap sandbox of restricted commands: what a command sees, and what it cannot do.

A wall that holds without the argv checks (tests/tools/test_sandbox_alone.py runs commands in it
with the checks off):

* the machine read-only (``--ro-bind / /``), or, for a profile that reads only its workspace
  and read roots (``read_outside_workspace: deny``), only the system directories programs
  need (``SYSTEM_DIRS``: /usr, /lib, /etc...) besides those roots; with a private ``/tmp``
  and ``/dev/shm`` (tmpfs, bounded by the file-size limit: nothing reaches the disk), its own
  ``/dev`` and a ``/proc`` of its own PID namespace (no ``/proc/<agent>/environ``), ``/run``
  empty (no daemon sockets);
* every home directory hidden (an empty, read-only tmpfs), except the workspace, the extra
  read roots and program directories that live there, shown again read-only;
* every secret below what stays visible hidden as well: the policy's concrete locations and
  what ``SecretScan`` finds by walking the workspace and read roots (names at any depth,
  symlink targets, hard links, sockets);
* all namespaces unshared (network, PID, IPC, UTS, cgroup, user; no new user namespace inside),
  no socket at all (the seccomp filter of ``seccomp.py``: a socket file in view would reach a
  host daemon), every capability dropped, a new terminal session (no TIOCSTI), death with the
  agent;
* an environment built from nothing (``--clearenv`` then ``--setenv``), so no variable of the
  agent (API keys) reaches any program.

What it does not do: limit memory, CPU or output (``limits.py`` does, outside), or hide data
that contains a secret under another form (a committed ``.env`` inside ``.git/objects``: the
git rules of the argv checks keep that out).
"""

from __future__ import annotations

import errno
import os
import stat
import subprocess
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import attrs

from rho_adapters.local.masks import Masks
from rho_adapters.local.seccomp import FILTER, FILTER_FD, with_filter
from rho_domain.errors import ExecutorError
from rho_domain.secret_patterns import git_reads
from rho_domain.secrets import (
    HOME_SECRETS,
    SYSTEM_SECRETS,
    SecretPolicy,
)
from rho_domain.service_secrets import MASKED_GLOBS
from rho_domain.value_methods import value_eq, value_hash, value_repr

if TYPE_CHECKING:  # the walk is imported by the first sandboxed command (runner.py)
    from rho_adapters.local.secret_scan import SecretScan

SANDBOX_TMP = "/tmp"  # noqa: S108 - a private tmpfs inside the sandbox, not the host /tmp
# The sandbox mounts its own /proc, /dev and an empty /run and /tmp: a mask there is moot.
_OWN_MOUNTS = ("/proc", "/dev", "/run", SANDBOX_TMP)
# Without these (bubblewrap before 0.8, or a setuid bubblewrap), the rest still holds.
USERNS_ARGS = ("--unshare-user", "--disable-userns")
# What a command loses when bubblewrap is missing or cannot run: said once, at start.
UNPROTECTED = (
    "bubblewrap (bwrap) is not available or cannot run here, so restricted commands run "
    "WITHOUT the sandbox: no mount masking of secrets (reads rely on the argv checks only), "
    "no network isolation, no PID isolation (commands can see the agent's processes); "
    "install it with `apt install bubblewrap` and allow user namespaces"
)


def _within(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


@attrs.frozen(kw_only=True)
class Layout:
    """Where a sandbox's view differs from the machine's: ``hidden`` trees (homes) and the
    ``visible`` roots shown again inside them or inside the private ``/tmp``. ``system``
    non-empty (a profile that reads only its workspace and read roots): the machine is NOT
    shown, only these system directories (what programs need to start) and ``visible``."""

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    hidden: tuple[str, ...]
    visible: tuple[str, ...]
    system: tuple[str, ...] = ()

    def shows(self, path: str) -> bool:
        """Whether ``path`` is part of the sandbox's view of the host."""
        if any(_within(path, root) for root in self.visible):
            return True
        if any(_within(path, top) for top in (*_OWN_MOUNTS, *self.hidden)):
            return False
        return not self.system or any(_within(path, d) for d in self.system)


# What a program needs to start (its binary, libraries, the loader's cache, /etc/alternatives,
# the password database): all a confined sandbox shows of the machine besides its roots.
SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc")


def layout(
    roots: Sequence[str],
    search_path: Sequence[str],
    policy: SecretPolicy,
    *,
    confined: bool = False,
) -> Layout:
    """The layout for workspace and read ``roots`` (real paths, walked to when the executor
    was made: resolved again, a parent swapped for a link named another tree); homes are
    hidden unless a root is one of them or above it; the roots and the program directories
    that hiding would remove (a checkout's ``.venv/bin`` under /tmp or a home) are shown
    again. ``confined``
    (``read_outside_workspace: deny``): only ``SYSTEM_DIRS``, the roots and the program
    directories outside the system directories are shown."""
    real_roots = tuple(roots)
    if confined:
        system = tuple(d for d in SYSTEM_DIRS if os.path.lexists(d))
        real_system = tuple(os.path.realpath(d) for d in system)
        programs = tuple(
            d
            for d in search_path
            if os.path.isdir(d)
            and not any(_within(os.path.realpath(d), top) for top in real_system)
        )
        visible = tuple(dict.fromkeys((*real_roots, *programs)))
        return Layout(hidden=(), visible=visible, system=system)
    hidden = tuple(
        home
        for home in dict.fromkeys(os.path.realpath(h) for h in policy.homes)
        if home != "/"
        and os.path.isdir(home)
        and not any(_within(home, root) for root in real_roots)
    )
    covered = (*_OWN_MOUNTS, *hidden)
    programs = tuple(
        d for d in search_path if os.path.isdir(d) and any(_within(d, top) for top in covered)
    )
    return Layout(hidden=hidden, visible=tuple(dict.fromkeys((*real_roots, *programs))))


def concrete_secrets(policy: SecretPolicy) -> tuple[str, ...]:
    """The policy's concrete secret locations of this machine (they may not exist)."""
    import glob  # with the first sandboxed command: its import compiles two expressions

    return tuple(
        dict.fromkeys(
            (
                *SYSTEM_SECRETS,
                *(os.path.join(h, rel) for h in policy.homes for rel in HOME_SECRETS),
                *policy.locations,
                *glob.glob("/etc/ssh/ssh_host_*_key"),
                *(f for pattern in MASKED_GLOBS for f in glob.glob(pattern)),
            )
        )
    )


def scan(
    scanner: SecretScan,
    view: Layout,
    policy: SecretPolicy,
    extra: Sequence[str] = (),
    *,
    held: Sequence[str] = (),
) -> Masks:
    """Everything to hide in ``view``: the concrete locations that exist and what the walk of
    its visible roots (and ``extra`` directories, the command's own) finds; ``held``: the
    roots the executor walked to, and ``extra`` is too (``SecretScan.masks``)."""
    known = concrete_secrets(policy)
    found = scanner.masks((*view.visible, *extra), known, held=(*held, *extra))
    files: list[str] = []
    dirs: list[str] = []
    for location in known:
        try:
            mode = os.lstat(location).st_mode
        except OSError:
            continue
        if stat.S_ISDIR(mode):
            dirs.append(location)
        elif stat.S_ISREG(mode):
            files.append(location)
    # A repository's config, index and objects stay readable: git reads them (a mask made
    # every git command fail, or see every file deleted); the argv checks, the file tools
    # and the walkers refuse them.
    shown = [p for p in dict.fromkeys((*files, *found.files)) if view.shows(p)]
    return Masks(
        files=tuple(p for p in shown if not git_reads(p)),
        dirs=tuple(
            p for p in dict.fromkeys((*dirs, *found.dirs)) if view.shows(p) and not git_reads(p)
        ),
        parents=found.parents,
    )


def bwrap_args(
    view: Layout,
    masks: Masks,
    *,
    cwd: str,
    env: Mapping[str, str],
    binds: Sequence[str] = (),
    tmp_bytes: int | None = None,
    userns: bool = True,
    seccomp_fd: str | None = None,
) -> list[str]:
    """The arguments for ``bwrap`` (before ``--``). ``binds`` (the git shadow directory) come
    after the masks, so no mask covers them; they hold only a filtered config and symlinks,
    which resolve inside the sandbox, where a hidden target stays hidden. ``tmp_bytes`` bounds
    each private tmpfs; ``seccomp_fd`` is the descriptor the filter of ``seccomp.py`` is read
    from (no socket can be opened)."""
    size = ("--size", str(tmp_bytes)) if tmp_bytes is not None else ()
    # Confined, the root is bwrap's own tmpfs: read-only once the mount points are made.
    read_only = (*(("/",) if view.system else ()), "/run", *view.hidden, *masks.dirs)
    return [
        "--unshare-all", *(USERNS_ARGS if userns else ()),
        *(_system_binds(view.system) if view.system else ("--ro-bind", "/", "/")),
        "--dev", "/dev",
        *size, "--tmpfs", "/dev/shm",  # noqa: S108 - the sandbox's own, in its /dev
        "--proc", "/proc",
        *size, "--tmpfs", SANDBOX_TMP,
        "--tmpfs", "/run",
        *(arg for home in view.hidden for arg in ("--tmpfs", home)),
        # -try: a read root removed mid-session (a log directory rotated away) failed every
        # command, `ls` in the workspace too ("bwrap: Can't find source path"); a root that
        # is gone is simply not there
        *(arg for root in view.visible for arg in ("--ro-bind-try", root, root)),
        *(arg for d in masks.dirs for arg in ("--tmpfs", d)),
        *(arg for f in masks.files for arg in ("--ro-bind", "/dev/null", f)),
        *(arg for root in binds for arg in ("--ro-bind", root, root)),
        # Created empty and writable for the mount points above; nothing may write there now.
        *(arg for top in read_only for arg in ("--remount-ro", top)),
        *(("--seccomp", seccomp_fd) if seccomp_fd is not None else ()),
        "--cap-drop", "ALL",
        "--die-with-parent", "--new-session",
        "--clearenv",
        *(arg for name, value in env.items() for arg in ("--setenv", name, value)),
        "--chdir", cwd,
    ]  # fmt: skip


def _system_binds(system: Sequence[str]) -> tuple[str, ...]:
    """``--ro-bind`` of each system directory, ``--symlink`` of each that is a link (merged
    /usr: /bin -> usr/bin)."""
    out: list[str] = []
    for directory in system:
        if os.path.islink(directory):
            out += ["--symlink", os.readlink(directory), directory]
        else:
            out += ["--ro-bind", directory, directory]
    return tuple(out)


def probe(program: str) -> tuple[bool, bool] | None:
    """Which optional walls the bwrap at ``program`` runs with here, (user namespace of its
    own, seccomp filter), the most first; None when it does not run at all (not installed
    properly, or no namespaces allowed). ``ExecutorError`` when this process has no file
    descriptor left to start it (``ulimit -n 8``; before, taken for a bwrap that cannot run:
    commands ran without the sandbox for the rest of the process, the notice saying to
    install it; or a variant with fewer walls was taken for the most it can do)."""
    empty = Layout(hidden=(), visible=())
    variants = [(True, True), (False, True), (True, False), (False, False)]
    for userns, seccomp in variants if FILTER is not None else variants[2:]:
        args = bwrap_args(
            empty,
            Masks(),
            cwd="/",
            env={},
            userns=userns,
            seccomp_fd=FILTER_FD if seccomp else None,
        )
        argv, fds = with_filter([program, *args, "--", "/bin/true"])
        try:
            done = subprocess.run(argv, capture_output=True, timeout=10, check=False, pass_fds=fds)
        except OSError as exc:
            if exc.errno in (errno.EMFILE, errno.ENFILE):
                raise _no_descriptors(program) from exc
            return None
        except subprocess.TimeoutExpired:
            return None
        finally:
            for fd in fds:
                os.close(fd)
        if done.returncode == 0:
            return userns, seccomp
        if b"Too many open files" in done.stderr:
            raise _no_descriptors(program)
    return None


def _no_descriptors(program: str) -> ExecutorError:
    import resource  # only on this rare path

    limit = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    return ExecutorError(
        f"bubblewrap ({program}) could not be started to sandbox restricted commands: this "
        f"process has no file descriptor left (Too many open files; its limit, ulimit -n, is "
        f"{limit}): raise it (ulimit -n 1024) or close what holds them; bubblewrap is "
        "installed, and commands are not run without it"
    )
