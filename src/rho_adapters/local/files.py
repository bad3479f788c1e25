"""File operations on a confined tree: read, write, list, stat (synchronous; run in a thread,
but for a small directory's listing, ``small_names``).

* read: ``O_RDONLY|O_NOFOLLOW|O_NONBLOCK`` relative to the parent descriptor, then ``fstat``:
  only regular files are read, so FIFOs and devices never block; at most ``length`` bytes.
* write: the final component must not be a symlink nor a file with other hard links. The data
  goes into an unnamed file that gets its name only once whole (``rho_adapters.unnamed``):
  create-only links it to the target (which fails on any existing name, a dangling symlink
  too: no check-then-write race), overwrite links it to a hidden temp name renamed over the
  target (atomic, permission bits kept but set-user-ID, set-group-ID and sticky; owner,
  group, ACL and user attributes kept as far as the process may; never through a link). A
  write killed midway leaves no half file and no ``.rho-tmp`` name. Without ``O_TMPFILE``:
  an ``O_EXCL`` create, or a named temp file renamed over the target.
"""

from __future__ import annotations

import contextlib
import os
import stat

from rho_adapters import unnamed
from rho_adapters.local.confine import Resolved
from rho_domain.errors import PermissionDenied, ToolError
from rho_domain.paths import is_temp_name, temp_name
from rho_domain.ports.executor import FileInfo, FileKind

_READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
_CREATE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
# What a replaced file keeps of its mode: the read, write and execute bits. Never set-user-ID,
# set-group-ID or sticky: new content does not inherit the privilege the old content had (the
# kernel clears both on a write by another than root; a setuid-root file edited by an agent
# running as root kept them, so whatever the model wrote ran as root for every user).
KEPT = 0o777


def kind_of(mode: int) -> FileKind:
    """The ``FileKind`` of a ``st_mode``."""
    if stat.S_ISREG(mode):
        return FileKind.FILE
    if stat.S_ISDIR(mode):
        return FileKind.DIRECTORY
    if stat.S_ISLNK(mode):
        return FileKind.SYMLINK
    return FileKind.OTHER


def open_regular(res: Resolved, shown: str) -> int:
    """Open the resolved final component for reading; refuse anything but a regular file."""
    if not res.name:
        raise ToolError(f"{shown} is a directory")
    try:
        fd = os.open(res.name, _READ_FLAGS, dir_fd=res.dir_fd)
    except FileNotFoundError:
        raise ToolError(f"no such file: {shown}") from None
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):
        os.close(fd)
        what = "a directory" if stat.S_ISDIR(st.st_mode) else "not a regular file (FIFO/device)"
        raise ToolError(f"{shown} is {what}; it cannot be read")
    os.set_blocking(fd, True)
    return fd


def read_bytes(res: Resolved, shown: str, offset: int, length: int | None) -> bytes:
    """At most ``length`` bytes from ``offset`` of the regular file ``res`` names; ``shown``
    is the path for messages."""
    fd = open_regular(res, shown)
    try:
        if length is None:
            length = os.fstat(fd).st_size - offset
        chunks: list[bytes] = []
        while length > 0:
            chunk = os.pread(fd, min(length, 1 << 20), offset)
            if not chunk:
                break
            chunks.append(chunk)
            offset += len(chunk)
            length -= len(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def info(res: Resolved, rel: str, name: str) -> FileInfo:
    """Describe the final component (following it when the walk already resolved it)."""
    st = os.stat(res.name or ".", dir_fd=res.dir_fd, follow_symlinks=False)
    return _info(st, rel, name, None)


def _info(st: os.stat_result, rel: str, name: str, link: str | None) -> FileInfo:
    return FileInfo(
        path=rel,
        name=name,
        kind=kind_of(st.st_mode),
        size=st.st_size,
        mtime=st.st_mtime,
        mode=stat.S_IMODE(st.st_mode),
        link_target=link,
    )


# A directory is "small" (``small_names``) when its size says one block and it names at most
# SMALL_ENTRIES entries: listing it costs a few microseconds a name, less than handing the
# listing to a worker thread and back (the executor lists such a one on the event loop).
SMALL_DIR_BYTES = 4096
SMALL_ENTRIES = 64


def small_names(dir_fd: int) -> list[str] | None:
    """The names in the directory open as ``dir_fd`` if it is small (see ``SMALL_ENTRIES``),
    else None. Bounded however large the directory: its size is read first (``fstat``), so
    a directory of many blocks is never read here."""
    if os.fstat(dir_fd).st_size > SMALL_DIR_BYTES:
        return None
    names = os.listdir(dir_fd)
    return names if len(names) <= SMALL_ENTRIES else None


def list_entries(dir_fd: int, rel: str, names: list[str] | None = None) -> tuple[FileInfo, ...]:
    """The entries of the directory open as ``dir_fd`` (links not followed), sorted by name;
    ``rel`` is its workspace path; ``names``: its names, already read (else read here).
    A write's temp file (``paths.is_temp_name``), which a write killed midway leaves where
    the filesystem has no ``O_TMPFILE``, is not a workspace file: left out, as Daytona's
    listing leaves it out (``list`` and ``glob`` both list through here)."""
    out: list[FileInfo] = []
    for name in os.listdir(dir_fd) if names is None else names:
        if is_temp_name(name):
            continue
        try:
            st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
        except FileNotFoundError:
            continue  # removed while listing
        link = os.readlink(name, dir_fd=dir_fd) if stat.S_ISLNK(st.st_mode) else None
        out.append(_info(st, f"{rel}/{name}" if rel not in ("", ".") else name, name, link))
    return tuple(out)


def write_bytes(res: Resolved, shown: str, data: bytes, *, overwrite: bool) -> bool:
    """Write ``data`` to the final component; return True when a file was replaced."""
    if not res.name:
        raise ToolError(f"{shown} is a directory")
    try:
        st: os.stat_result | None = os.stat(res.name, dir_fd=res.dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        st = None
    if st is not None:
        if stat.S_ISLNK(st.st_mode):
            raise PermissionDenied(f"{shown} is a symbolic link; writing through links is refused")
        if not stat.S_ISREG(st.st_mode):
            raise ToolError(f"{shown} exists and is not a regular file")
        if not overwrite:
            raise PermissionDenied(f"{shown} already exists and may not be overwritten")
        if st.st_nlink > 1:
            raise PermissionDenied(f"{shown} has other hard links; refusing to write it")
    fd = unnamed.unnamed(res.dir_fd, 0o666)
    if fd is not None:
        _write_all(fd, data, res, None, replaced=st if overwrite else None, close=False)
        try:
            if overwrite:
                unnamed.link_over(fd, res.dir_fd, res.name, _temp(res))
            else:
                unnamed.link(fd, res.dir_fd, res.name)
        except FileExistsError:
            if overwrite:
                raise
            raise PermissionDenied(f"{shown} already exists and may not be overwritten") from None
        finally:
            os.close(fd)
        return st is not None
    if not overwrite:
        try:
            fd = os.open(res.name, _CREATE_FLAGS, 0o666, dir_fd=res.dir_fd)
        except FileExistsError:
            raise PermissionDenied(f"{shown} already exists and may not be overwritten") from None
        _write_all(fd, data, res, res.name)
        return False
    tmp = _temp(res)
    fd = os.open(tmp, _CREATE_FLAGS, 0o666, dir_fd=res.dir_fd)
    _write_all(fd, data, res, tmp, replaced=st)
    unnamed.replace(tmp, res.dir_fd, res.name)
    return st is not None


def _temp(res: Resolved) -> str:
    return temp_name(res.name, os.urandom(6).hex())  # as secrets.token_hex(6)


def _write_all(
    fd: int,
    data: bytes,
    res: Resolved,
    name: str | None,
    replaced: os.stat_result | None = None,
    *,
    close: bool = True,
) -> None:
    """Write ``data`` to ``fd`` and sync it; on failure close ``fd`` and remove ``name`` (None:
    an unnamed file, which goes with its descriptor). ``close``: close ``fd`` after success."""
    try:
        unnamed.write_all(fd, data)
        if replaced is not None:
            _keep_identity(fd, res, replaced)
            os.fchmod(fd, stat.S_IMODE(replaced.st_mode) & KEPT)
        os.fsync(fd)
    except BaseException:
        os.close(fd)
        if name is not None:
            with contextlib.suppress(OSError):
                os.unlink(name, dir_fd=res.dir_fd)
        raise
    if close:
        os.close(fd)


# What a replaced file keeps besides its mode: its ACL and its user's attributes. Never
# security.* (a file capability is set-user-ID's twin; an SELinux label is policy's) nor
# trusted.*.
_KEPT_XATTRS = ("system.posix_acl_access",)
_KEPT_XATTR_PREFIX = "user."


def _keep_identity(fd: int, res: Resolved, old: os.stat_result) -> None:
    """Give the temp file ``fd`` the owner, group, ACL and user attributes of the file it
    replaces, as far as the process may (an agent run as root replacing a user's file left
    it root's, which its user could no longer write; a process that may not chown keeps
    its own)."""
    if (old.st_uid, old.st_gid) != (os.geteuid(), os.getegid()):
        with contextlib.suppress(PermissionError):
            os.fchown(fd, old.st_uid, old.st_gid)
    try:
        source = os.open(res.name, _READ_FLAGS, dir_fd=res.dir_fd)
    except OSError:
        return  # unreadable to this process: nothing more is kept
    try:
        for key in os.listxattr(source):
            if key in _KEPT_XATTRS or key.startswith(_KEPT_XATTR_PREFIX):
                with contextlib.suppress(OSError):
                    os.setxattr(fd, key, os.getxattr(source, key))
    except OSError:
        pass  # a filesystem without extended attributes
    finally:
        os.close(source)
