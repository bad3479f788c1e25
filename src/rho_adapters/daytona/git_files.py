"""The files git opens by itself inside its repository, listed in the Daytona sandbox.

``GIT_FILES`` is the fifth part of ``git_scripts.git_discovery``'s answer (it reads the shell
variables that script set: ``$p`` the preflight, ``$d`` the directory holding ``.git``,
``$c`` the common directory, ``$pl`` the shared entries and alternates); ``parse_git_files``
reads it into the ``RepositoryFiles`` that ``check_repository_files`` judges, as
``local/git_shadow.py`` walks them on this machine.
"""

from __future__ import annotations

import base64
import shlex

from rho_domain.errors import ExecutorError
from rho_domain.shell.git_repo import (
    MAX_REPOSITORY_ENTRIES,
    OBJECT_DATA,
    UNOPENED,
    WORK_TREE_FILES,
    RepositoryFiles,
)

q = shlex.quote

# What git opens by itself inside its own directories (the git and common directories, and
# the places above that are directories outside them, not the work tree):
# ``L<path>\0<real path>\0`` for each symbolic link, and ``H<path>\0`` for each file with
# several names but ``OBJECT_DATA`` (``objects/info/alternates`` is judged); ``UNOPENED`` at a
# directory's top is skipped (``check_repository_files``, as ``local/git_shadow.py``); and
# ``H<path>\0`` for each of the work tree's ``WORK_TREE_FILES`` with several names (locally,
# ``stage_reads`` finds them among the workspace's aliases).
_UNOPENED_TESTS = " -o ".join(f'-path "$r"/{q(n)}' for n in sorted(UNOPENED))
_FIND_LINKS = f'find -P "$r" -regextype posix-extended \\( {_UNOPENED_TESTS} \\) -prune '
_FIND_LINKS += "-o -type l -printf 'L%p\\0' -exec realpath -mz -- {} \\;"
_FIND_LINKED = f"-o -type f -links +1 ! -regex {q(OBJECT_DATA)} -printf 'H%p\\0' 2>/dev/null"
_WORK_TREE_TESTS = " -o ".join(f"-iname {q(n)}" for n in sorted(WORK_TREE_FILES))
GIT_FILES = (
    'if [ -n "$c" ]; then\n'
    # one realpath for the three (one each was two processes more for every git command)
    "cr=; { IFS= read -r g; IFS= read -r cr; IFS= read -r w; } <<EOF\n"
    '$(realpath -m -- "$g" "$c" ${w:+"$w"})\nEOF\n'
    "{ {\n"
    '  printf \'H%s\\n\' "$g"; [ "$cr" = "$g" ] || printf \'H%s\\n\' "$cr"\n'
    "  while IFS= read -r e; do printf 'L%s\\n' \"$e\"; done <<EOF\n$pl\nEOF\n"
    "} | while IFS= read -r e; do\n"
    "  r=${e#?}\n"
    '  [ -n "$r" ] && [ -d "$r" ] && [ "$r" != "$w" ] || continue\n'
    "  case $e in\n"
    f"    H*) {_FIND_LINKS} {_FIND_LINKED} ;;\n"
    f'    *) case $r in "$g"/* | "$cr"/*) ;; *) {_FIND_LINKS} {_FIND_LINKED} ;; esac ;;\n'
    "  esac\n"
    "done\n"
    # the files git reads by itself in the work tree, when they have several names
    # (the directory holding .git, $d: the toplevel git says honours core.worktree)
    f'{{ [ -e "$d/.git" ] || [ -L "$d/.git" ]; }} && find -P "$d" -name .git -prune -o '
    f"\\( {_WORK_TREE_TESTS} \\) "
    "-type f -links +1 -printf 'H%p\\0' 2>/dev/null\n"
    f"}} | head -z -n {2 * MAX_REPOSITORY_ENTRIES + 1} | base64 -w0; fi; echo\n"
)


def parse_git_files(answer: str) -> RepositoryFiles:
    """The links and files with several names of a ``git_discovery`` answer's fifth line
    (``GIT_FILES``)."""
    line = [*answer.split("\n"), "", "", "", "", ""][4]
    try:
        raw = base64.b64decode(line.strip(), validate=True)
    except ValueError as exc:
        raise ExecutorError(f"unreadable git discovery from the sandbox: {line[:80]!r}") from exc
    records = raw.decode("utf-8", "surrogateescape").split("\0")
    if len(records) > 2 * MAX_REPOSITORY_ENTRIES:
        return RepositoryFiles(complete=False)
    links: list[tuple[str, str]] = []
    linked: list[str] = []
    i = 0
    while i < len(records):
        record = records[i]
        i += 1
        if record.startswith("L") and i < len(records):
            links.append((record[1:], records[i]))
            i += 1
        elif record.startswith("H"):
            linked.append(record[1:])
    return RepositoryFiles(links=tuple(dict.fromkeys(links)), linked=tuple(dict.fromkeys(linked)))
