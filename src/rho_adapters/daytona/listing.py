"""A directory's entries in the sandbox, described as the local executor describes them.

The toolbox daemon's own listing (``GET /files``) is Go's ``os.Stat`` of each entry: a
symbolic link is described by what it points to (its kind, size and time, wherever the target
is, outside the workspace too) and a dangling one is left out, so the listing told whether a
file outside the workspace existed, how big it was and when it changed. The listing is read
here by ``find -P`` instead, run through the executor as every script is: each entry described
by ``lstat`` (a link is a link, with its own size and time, and its text), nothing followed.
GNU findutils' ``-printf`` must be in the sandbox (as for git_files.py and aliases.py).
"""

from __future__ import annotations

import base64

from rho_adapters.daytona.scripts import q
from rho_domain.errors import ExecutorError, PermissionDenied
from rho_domain.paths import is_temp_name
from rho_domain.ports.executor import FileInfo, FileKind

_DENIED = "!"  # the script's answer for a directory the sandbox's user may not list
_KINDS = {"f": FileKind.FILE, "d": FileKind.DIRECTORY, "l": FileKind.SYMLINK}


def list_script(directory: str) -> str:
    """List the canonical ``directory``: per entry ``<kind> <octal mode> <size> <mtime>``,
    its name and its link text (empty for no link), each ended by NUL, all in one base64 line;
    ``!`` when it cannot be listed. ``-P`` (find's default, said): a link is never followed,
    ``directory`` itself neither (swapped for a link since it was resolved, it lists nothing)."""
    d = q(directory)
    return (
        f"if ! [ -r {d} ] || ! [ -x {d} ]; then echo '{_DENIED}'; exit 0; fi\n"
        f"find -P {d} -mindepth 1 -maxdepth 1 -printf '%y %m %s %T@\\0%f\\0%l\\0' 2>/dev/null"
        " | base64 -w0; echo\n"
    )


def parse_listing(answer: str, shown: str) -> tuple[FileInfo, ...]:
    """The entries ``list_script`` answered for the directory the model calls ``shown``; a
    write's temp file (``paths.is_temp_name``) is left out, as the local listing leaves it."""
    line = answer.strip()
    if line == _DENIED:
        raise PermissionDenied(f"{shown}: permission denied in the sandbox")
    try:
        fields = base64.b64decode(line, validate=True).decode("utf-8", "surrogateescape")
    except ValueError as exc:
        raise ExecutorError(
            f"unreadable listing of {shown} from the sandbox: {line[:80]!r}"
        ) from exc
    words = fields.split("\0")[:-1]
    if len(words) % 3:
        raise ExecutorError(f"unreadable directory listing from the sandbox for {shown}")
    out: list[FileInfo] = []
    for head, name, link in zip(words[::3], words[1::3], words[2::3], strict=True):
        if is_temp_name(name):
            continue
        try:
            kind, mode, size, mtime = head.split(" ")
            out.append(
                FileInfo(
                    path=name if shown == "." else f"{shown}/{name}",
                    name=name,
                    kind=_KINDS.get(kind, FileKind.OTHER),
                    size=int(size),
                    mtime=float(mtime),
                    mode=int(mode, 8) & 0o7777,
                    link_target=link if kind == "l" else None,
                )
            )
        except ValueError as exc:
            raise ExecutorError(f"unreadable directory entry from the sandbox: {head!r}") from exc
    return tuple(out)
