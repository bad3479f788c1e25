"""What a command reads on standard input, in the destructive-command check
(``shell.destructive``): its own redirections, and the descriptors an ``exec`` with only
redirections opened for the rest of the line (``exec < x; bash`` runs ``x`` as ``bash x``;
``exec 3< x; bash <&3`` too).

Contract: ``opened_files(redirections, inherited)``, the file each descriptor reads after
them; ``standard_input(command, opened, piped=)``, what the command reads (a ``Stdin``) and
the file it is fed, or None; ``through_descriptors(argv, opened)``, the words with a
descriptor's path (``/dev/fd/3``, ``/proc/self/fd/3``) read as the file it holds.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Mapping, Sequence

from rho_domain.shell.destructive_code import STDIN_FILES, Stdin
from rho_domain.shell.destructive_words import Arg
from rho_domain.shell.syntax_tree import Redirection, SimpleCommand


def opened_files(
    redirections: Sequence[Redirection], inherited: Mapping[int, str]
) -> dict[int, str]:
    """The file each descriptor reads after ``redirections``, from ``inherited`` (what an
    ``exec`` opened): ``< x`` and ``<> x``, ``<&N`` copying descriptor N; a here-document, a
    close or a write ends the entry."""
    opened = dict(inherited)
    for redirection in redirections:
        fd = redirection.fd
        if fd is None:
            fd = 0 if redirection.op.startswith("<") else 1
        target = redirection.target
        if redirection.op in ("<", "<>") and target:
            opened[fd] = posixpath.normpath(target)
        elif (
            redirection.op in ("<&", ">&") and target and target.isdigit() and int(target) in opened
        ):
            opened[fd] = opened[int(target)]
        else:
            opened.pop(fd, None)
    return opened


def standard_input(
    command: SimpleCommand, opened: Mapping[int, str], *, piped: bool
) -> tuple[Stdin, str | None]:
    """What ``command`` reads on standard input (a pipe, a file, a here-document's text, or
    nothing: the tool's stdin is empty; its last redirection of descriptor 0 wins, over a
    pipe) and the file it is fed (``sh < x`` runs ``x`` as ``sh x``), given the descriptors
    ``opened`` after its redirections."""
    stdin: Stdin = "pipe" if piped else ""
    own = False
    for redirection in command.redirections:
        if redirection.fd not in (None, 0) or not redirection.op.startswith("<"):
            continue
        own = True
        if redirection.heredoc is not None:
            stdin = redirection.heredoc
        elif redirection.op in ("<", "<>"):
            stdin = "pipe" if redirection.target in STDIN_FILES else "file"
    read = opened.get(0)
    if stdin in ("", "pipe") and read and read not in STDIN_FILES and (own or not piped):
        stdin = "file"  # exec < x earlier, or 0<&3 to what 3< x opened
    return stdin, read if stdin == "file" else None


def through_descriptors(argv: Sequence[Arg], opened: Mapping[int, str]) -> tuple[Arg, ...]:
    """``argv`` with each word naming a descriptor's file (``/dev/fd/N``, ``/proc/self/fd/N``,
    ``/proc/thread-self/fd/N``, ``/dev/stdin``) replaced by the file ``opened`` says it reads:
    ``exec 3< x; source /dev/fd/3`` and ``bash /proc/self/fd/3 3< x`` run ``x``."""
    named = []
    for word in argv:
        match = _DESCRIPTOR_PATH.fullmatch(posixpath.normpath(word)) if word else None
        fd = (0 if match.group(1) is None else int(match.group(1))) if match else None
        named.append(opened.get(fd, word) if fd is not None else word)
    return tuple(named)


# /dev/stdin is descriptor 0 (group 1 None); /dev/fd/N and /proc's links are descriptor N
_DESCRIPTOR_PATH = re.compile(r"/dev/stdin|(?:/dev/fd|/proc/(?:self|thread-self)/fd)/(\d+)")
