"""The check, inside the sandbox, that every mask bubblewrap mounted is where the scan found
its secret, before the command runs (redfiles28).

Bubblewrap mounts each mask at a path, looked up when it mounts, through directories others
may change: a directory holding a ``.env`` exchanged with a link to another directory between
the scan and the mount (``renameat2`` in a loop) put the mask on the other directory's file
and left the real one bare under its other name (7 of 60 commands printed it with the argv
checks off; under ``read_outside: allow`` a parent of the workspace, which is the machine's,
likewise). Bubblewrap takes no descriptor for where a mount goes, so the stage is first run
through ``/bin/sh``, which, for each directory holding masks, stands in it (``cd``: the
directory is then held, whatever its path names later), checks with the system's ``stat``
(``lstat``, one process a directory) that it is the directory the scan listed (device and
inode, ``Masks.parents``) and that each mask is in place there (``/dev/null``'s device and
inode over a file; a directory on another device than its parent's over a directory), and
runs nothing otherwise (exit 126). A mount stays on the entry it covers when the entry is
renamed, so what the check saw holds while the command runs. Directories only root may change
(owned by root, writable by no one else, up to ``/``: ``/etc``, ``/etc/ssh``) are not checked.
"""

from __future__ import annotations

import os
import shlex
import stat

from rho_adapters.local.held_dirs import system_stat
from rho_adapters.local.masks import Masks
from rho_adapters.local.root_owned import only_root_changes

# k DIRECTORY EXPECTED DEVICE FILES NAME...: entered, DIRECTORY is the one listed (EXPECTED),
# its first FILES names are /dev/null ($N), the rest directories on another DEVICE
_CHECK = """k() {
  d=$1 e=$2 p=$3 n=$4; shift 4
  o=$(cd -- "$d" && exec "$S" -c '%F:%d:%i:' -- . "$@") || return 1
  i=0
  while IFS= read -r l; do
    i=$((i + 1))
    if [ "$i" = 1 ]; then [ "$l" = "$e" ] || return 1
    elif [ "$i" -le $((n + 1)) ]; then [ "$l" = "$N" ] || return 1
    else case $l in "directory:$p:"*) return 1;; directory:*) ;; *) return 1;; esac
    fi
  done <<EOF
$o
EOF
  [ "$i" = $(($# + 1)) ]
}
"""
_FAILED = (
    '{ echo "rho-agent: a directory holding secrets changed while the sandbox hid them: '
    'nothing ran; run it again" >&2; exit 126; }'
)


def mask_checked(masks: Masks, cwd: str) -> tuple[str, ...]:
    """The words that run a sandboxed program (the words after them) once every mask of
    ``masks`` in a directory others may change is checked in place; none when there is no
    such mask. ``cwd``: where the sandbox starts (a directory there or below is entered from
    it, not through the path above it). ``ExecutorError`` when a mask needs checking and the
    system has no ``stat`` (coreutils) to check with: the command does not run unchecked."""
    listed = {path: (dev, ino) for path, dev, ino in masks.parents}
    calls: list[str] = []
    for directory, (files, dirs) in _by_directory(masks).items():
        if only_root_changes(directory) or any(_within(directory, d) for d in masks.dirs):
            continue  # root's; or below a directory mask, whose tmpfs hides it whole
        identity = listed.get(directory) or _identity(directory)
        if identity is None:
            continue  # gone: bubblewrap cannot mount there, and nothing runs
        dev, ino = identity
        names = [os.path.basename(path) for path in (*files, *dirs)]
        words = (_entered(directory, cwd), f"directory:{dev}:{ino}:", str(dev), str(len(files)))
        calls.append(" ".join(shlex.quote(word) for word in (*words, *names)))
    if not calls:
        return ()
    program = system_stat("the sandbox checks the secrets it hides where others may change them")
    null = os.stat(os.devnull)
    head = f"S={shlex.quote(program)} N='character special file:{null.st_dev}:{null.st_ino}:'"
    script = f'{head}\n{_CHECK}{" && ".join(f"k {c}" for c in calls)} || {_FAILED}\nexec "$@"'
    return ("/bin/sh", "-c", script, "rho-masks")


def _by_directory(masks: Masks) -> dict[str, tuple[list[str], list[str]]]:
    """Each directory holding masks: its masked files, then its masked directories."""
    groups: dict[str, tuple[list[str], list[str]]] = {}
    for kind, paths in ((0, masks.files), (1, masks.dirs)):
        for path in paths:
            groups.setdefault(os.path.dirname(path), ([], []))[kind].append(path)
    return groups


def _entered(directory: str, cwd: str) -> str:
    """``directory`` as the check enters it: from the sandbox's working directory when it is
    there or below (through the mount the command stands in), else by its path."""
    if directory == cwd or directory.startswith(cwd.rstrip("/") + "/"):
        return os.path.join(".", os.path.relpath(directory, cwd))
    return directory


def _identity(directory: str) -> tuple[int, int] | None:
    """(device, inode) of what ``directory`` names now, as bubblewrap follows it."""
    try:
        st = os.stat(directory)
    except OSError:
        return None
    return (st.st_dev, st.st_ino) if stat.S_ISDIR(st.st_mode) else None


def _within(path: str, top: str) -> bool:
    return path == top or path.startswith(top.rstrip("/") + "/")
