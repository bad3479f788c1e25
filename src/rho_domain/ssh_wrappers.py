r"""The wrapper scripts git runs as ssh (``GIT_SSH``, a ``core.sshCommand``'s program): which
files are scripts, and which of their command lines to read as ``core.sshCommand``.

Before probeshell25b the executors read only the lines naming ssh of a file with no NUL
byte within its first 64 KiB, on every backend, and a key such a script gives stayed
readable when:

* the script held a NUL byte (the shell skips it: ``#\0`` on a comment line) or was padded
  past 64 KiB with comments: "a program", not read, though ``sh`` runs it;
* its ssh line went on after a backslash (``exec ssh \`` then ``-i deploy/key "$@"``);
* the key was set in a variable first (``KEY=deploy/key`` then ``exec ssh -i "$KEY"``);
* the program was spelled so no word read ``ssh`` (``"${SSH:-ssh}" -i deploy/key``), or the
  wrapper was Python (``os.execvp("ssh", ["ssh", "-i", "deploy/key"])``);
* it ran a second wrapper (``exec bin/inner "$@"``) whose ssh line gives the key.

A program is now only what the kernel runs itself (an ELF file whose header it loads: a
file starting ``\x7fELF`` it refuses, git runs with the shell); every other file is a
script, its NUL bytes dropped, refused past ``WRAPPER_BYTES`` (``ExecutorError``: what it
names past the bound is unknown), and every command line of it is read (``wrapper_commands``),
whose paths the executors read as wrappers in turn (at most ``MAX_WRAPPERS``). Still not a
shell: a key the script computes (``$(cat keypath)``, a path built from ``$0``) is not seen.
Pure: bytes and text in, values out.
"""

from __future__ import annotations

import posixpath
import re
from typing import Literal

from rho_domain.errors import ExecutorError
from rho_domain.first_use import FirstUse

__all__ = [
    "MAX_WRAPPERS",
    "WRAPPER_BYTES",
    "on_search_path",
    "too_many_wrappers",
    "wrapper_commands",
    "wrapper_script",
]

WRAPPER_BYTES = 64 * 1024  # a wrapper script git runs as ssh (a few lines): past it, refused
MAX_WRAPPERS = 64  # wrapper scripts read per executor, each one's wrappers included
_ELF = b"\x7fELF"  # the one binary format the kernel runs here: a program, no script
_CONTINUED = FirstUse(r"\\\r?\n")  # a backslash ending a line: the command goes on
# a variable the script sets to a literal (``KEY=deploy/key``, ``export KEY="a b"``)
_ASSIGNED = FirstUse(
    r"(?:^|[\s;&|(])(?:export\s+|readonly\s+|local\s+)?([A-Za-z_][A-Za-z0-9_]*)="
    r"(\"[^\"`\\]*\"|'[^']*'|[^\s;&|()\"'`\\]*)",
    re.MULTILINE,
)
# $NAME, ${NAME}, and ${NAME:-word} (also -, :=, =): the word when the script sets none
_USED = FirstUse(r"\$(?:\{([A-Za-z_][A-Za-z0-9_]*)(?::?[-=]([^}]*))?\}|([A-Za-z_][A-Za-z0-9_]*))")
_VARIANTS = 16  # a variable set to several values: the script read once per value, at most
# what ends a command or separates a Python call's arguments: never part of a key's path
_SEPARATORS = str.maketrans(dict.fromkeys(";|&()[],", " "))


def wrapper_script(head: bytes, path: str) -> str | None:
    """The text of the file ``path`` git would run as ssh, from its first bytes ``head``
    (at least ``WRAPPER_BYTES + 1`` of them when it has that many): None for a program the
    kernel runs itself (an ELF header it loads); else a script, run by its ``#!`` or by the
    shell after ``ENOEXEC``, whose NUL bytes the shell skips (dropped here too);
    ``ExecutorError`` when the script is past ``WRAPPER_BYTES`` (what it names past the
    bound is unknown)."""
    if _loadable_elf(head):
        return None
    if len(head) > WRAPPER_BYTES:
        raise ExecutorError(
            f"the script {path}, which git runs as ssh, is larger than {WRAPPER_BYTES} bytes: "
            "rho-agent cannot tell which keys it gives ssh, so it refuses to run; shorten "
            "it (a wrapper is a few lines) or have git run ssh itself"
        )
    return head.replace(b"\0", b"").decode("utf-8", "replace")


def _loadable_elf(head: bytes) -> bool:
    """Whether the kernel would load ``head``'s file as an ELF program: its header passes
    the checks that refuse it with ``ENOEXEC`` (``binfmt_elf``), after which git and the
    shell run a file as a script: the magic then ssh lines is a script, not a program."""
    if len(head) < 64 or not head.startswith(_ELF) or head[6] != 1 or head[5] not in (1, 2):
        return False
    order: Literal["little", "big"] = "little" if head[5] == 1 else "big"
    wide = {1: False, 2: True}.get(head[4])
    if wide is None or int.from_bytes(head[16:18], order) not in (2, 3):  # EXEC, DYN
        return False
    at, size = (54, 56) if wide else (42, 32)  # e_phentsize's offset, a header's size
    entry = int.from_bytes(head[at : at + 2], order)
    count = int.from_bytes(head[at + 2 : at + 4], order)
    return entry == size and 0 < count * size <= 65536


def wrapper_commands(script: str) -> tuple[str, ...]:
    """Every command line of ``script`` (a wrapper's text), each to read as
    ``core.sshCommand`` is: not only those naming ssh, lines a backslash continues joined,
    each ``$NAME`` the script sets filled with it (``KEY=deploy/key``; set to several
    values, the script is read once with each), ``${NAME:-word}`` with ``word`` when the
    script sets no ``NAME``, and the characters that end a command or part a call's
    arguments (``;|&()[],``) blanks."""
    joined = _CONTINUED().sub(" ", script)
    values: dict[str, list[str]] = {}
    for name, value in _ASSIGNED().findall(joined):
        value = value[1:-1] if value[:1] in "\"'" and len(value) > 1 else value
        values.setdefault(name, []).append(value)
    lines: list[str] = []
    for at in range(min(max(map(len, values.values()), default=1), _VARIANTS)):

        def value_of(m: re.Match[str], at: int = at) -> str:
            name = m[1] or m[3]
            if name in values:
                return values[name][min(at, len(values[name]) - 1)]
            return m[2] if m[2] is not None else m[0]

        text = _USED().sub(value_of, joined)
        lines += (line.translate(_SEPARATORS).strip() for line in text.splitlines())
    return tuple(dict.fromkeys(line for line in lines if line))


def on_search_path(name: str, search_path: str, bases: tuple[str, ...]) -> tuple[str, ...]:
    """Where the shell may find the program ``name`` (a bare name) on ``search_path`` (a
    ``PATH``): each entry's ``name``, an empty entry being the working directory and a
    relative one below it, both placed below each of ``bases`` (where git runs ssh: the
    repository's top). Every one, not only the first the shell would take (which that is
    depends on what is executable there: fail closed)."""
    found: list[str] = []
    for entry in search_path.split(":"):
        if entry.startswith("/"):
            found.append(posixpath.join(entry, name))
        else:
            found += [posixpath.join(base, entry or ".", name) for base in bases]
    return tuple(dict.fromkeys(found))


def too_many_wrappers(first: str) -> ExecutorError:
    """The refusal when wrappers run more than ``MAX_WRAPPERS`` wrapper scripts, ``first``
    the first left unread (what it names is unknown: fails closed)."""
    return ExecutorError(
        f"the wrapper scripts git runs as ssh run more than {MAX_WRAPPERS} scripts, {first} "
        "the first left unread: rho-agent cannot tell which keys those give ssh, so it "
        "refuses to run; have git run ssh or one wrapper script"
    )
