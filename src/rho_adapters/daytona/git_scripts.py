"""The sh scripts that find a repository for git in the Daytona sandbox and build its shadow.

Before any git stage runs, ``git_discovery`` asks the sandbox (one request) where git finds
the repository, its config listing, the other real paths git reads it from and the files
with several names inside it (``git_files.GIT_FILES``); ``parse_git_discovery`` and
``parse_git_places`` read that answer, raising ``ExecutorError`` when it is unreadable and
``PathOutsideWorkspace`` for a quoted alternates line. ``GitShadow`` is the shadow common
directory git stages then run through (its config filtered, never the repository's own), and
``object_types_script`` asks git the type of the objects a stage names, through that shadow.
Every word from the model is quoted (``scripts.q``); the scripts run in ``RESTRICTED_ENV``.
"""

from __future__ import annotations

import base64
from collections.abc import Sequence

import attrs

from rho_adapters.daytona.git_files import GIT_FILES
from rho_adapters.daytona.scripts import RESTRICTED_ENV, q
from rho_domain.errors import ExecutorError, PathOutsideWorkspace
from rho_domain.shell.git import HARDENING
from rho_domain.shell.git_repo import (
    CONFIG_NAME,
    MAX_ALTERNATES_DEPTH,
    PREFLIGHT,
    SHARED,
    GitRepo,
    git_environment,
    parse_preflight,
)
from rho_domain.value_methods import value_eq, value_hash, value_repr


def git_discovery(cwd: str) -> str:
    """Where git finds the repository from ``cwd``, and its config file's listing.

    Answer, one base64 line each: ``PREFLIGHT``'s output, the nearest directory holding
    ``.git`` (the work tree), the ``--list -z`` listing, the other real paths git reads the
    repository from (``parse_git_places``), the links and files with several names inside
    the repository's directories (``git_files.parse_git_files``).
    Both read; neither runs a program the repository names.
    """
    assignments = " ".join(f"{k}={q(v)}" for k, v in RESTRICTED_ENV.items())
    git = f"env -i {assignments} git"
    # The shell splits the answer into its lines and climbs the directories itself: a
    # ``sed -n Np`` per line and a ``dirname`` per level were a process each, for every git
    # command (six levels up from a workspace that is no repository).
    return (
        f"cd -P -- {q(cwd)} 2>/dev/null || {{ echo; exit 0; }}\n"
        f"p=$({git} {' '.join(q(a) for a in PREFLIGHT)} 2>/dev/null)\n"
        "printf '%s' \"$p\" | base64 -w0; echo\n"
        'd=$PWD; while [ ! -e "$d/.git" ] && [ ! -L "$d/.git" ] && [ "$d" != / ]; do '
        "d=${d%/*}; d=${d:-/}; done\n"
        '{ [ -e "$d/.git" ] || [ -L "$d/.git" ]; } && printf \'%s\' "$d" | base64 -w0; echo\n'
        "g=; c=; w=; { IFS= read -r g; IFS= read -r c; IFS= read -r w; } <<EOF\n$p\nEOF\n"
        f'[ -n "$c" ] && {git} config --file "$c/config" --no-includes --list -z 2>/dev/null'
        " | base64 -w0\n"
        f"echo\n{_GIT_PLACES}{GIT_FILES}"
        "exit 0\n"
    )


# The real paths git reads a repository from besides its own directories: each shared entry
# of the common directory ($c) and the object directories its alternates borrow, as deep as
# git follows them (a quoted alternates line, which git unquotes, is reported as '"'). One
# realpath resolves every shared entry there is (one per entry was four or five processes
# more for every git command).
_GIT_PLACES = (
    'if [ -n "$c" ]; then pl=$({\n'
    f"  set --; for n in {' '.join(SHARED)}; do\n"
    '    if [ -e "$c/$n" ] || [ -L "$c/$n" ]; then set -- "$@" "$c/$n"; fi; done\n'
    '  [ $# -eq 0 ] || realpath -m -- "$@"\n'
    '  todo=$(realpath -m -- "$c/objects"); k=0\n'
    f'  while [ -n "$todo" ] && [ $k -lt {MAX_ALTERNATES_DEPTH} ]; do\n'
    "    next=$(while IFS= read -r o; do\n"
    '      [ -f "$o/info/alternates" ] || continue\n'
    '      while IFS= read -r a || [ -n "$a" ]; do case $a in "" | "#"*) ;;\n'
    '        \'"\'*) echo \'"\' ;; /*) realpath -m -- "$a" ;; *) realpath -m -- "$o/$a" ;;\n'
    '      esac; done <"$o/info/alternates"\n'
    "    done <<EOF\n$todo\nEOF\n"
    "    )\n"
    "    printf '%s\\n' \"$next\"; todo=\n"
    "    while IFS= read -r o; do case $o in '' | '\"') ;; *) todo=\"${todo:+$todo\n}$o\" ;; esac\n"
    "    done <<EOF\n$next\nEOF\n"
    "    k=$((k + 1))\n"
    "  done\n"
    "}); printf '%s' \"$pl\" | base64 -w0; fi; echo\n"
)


def parse_git_places(answer: str) -> tuple[str, ...]:
    """The real paths of a ``git_discovery`` answer's fourth line (``_GIT_PLACES``); raises
    ``PathOutsideWorkspace`` for a quoted alternates line (its path is not read here)."""
    line = [*answer.split("\n"), "", "", "", ""][3]
    try:
        text = base64.b64decode(line.strip()).decode("utf-8", "surrogateescape")
    except ValueError as exc:
        raise ExecutorError(f"unreadable git discovery from the sandbox: {line[:80]!r}") from exc
    places = [p for p in text.split("\n") if p]
    if '"' in places:
        raise PathOutsideWorkspace(
            "git: the repository's objects/info/alternates lists a quoted path; the "
            "repository's borrowed objects are not read"
        )
    return tuple(dict.fromkeys(places))


def parse_git_discovery(answer: str) -> tuple[GitRepo | None, str]:
    """The repository (or None) and the config listing from a ``git_discovery`` answer."""
    lines = [*answer.split("\n"), "", ""][:3]
    try:
        found, dot_git, listing = (
            base64.b64decode(line.strip()).decode("utf-8", "surrogateescape") for line in lines
        )
    except ValueError as exc:
        shown = lines[0][:80]
        raise ExecutorError(f"unreadable git discovery from the sandbox: {shown!r}") from exc
    return parse_preflight(found, dot_git or None), listing


@attrs.frozen
class GitShadow:
    """The shadow common directory to build in the sandbox before git stages run."""

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    directory: str
    repo: GitRepo | None
    config: str

    def environment(self) -> dict[str, str]:
        """The variables git stages need to use this directory (``git_environment``)."""
        return git_environment(self.repo, self.directory)

    def prelude(self) -> str:
        """Shell commands that build the directory (exit 1 if it exists), ending in ``; ``."""
        d = q(self.directory)
        lines = [f"mkdir -m 700 -- {d} || exit 1"]
        if self.repo is not None:
            lines.append(f"printf '%s' {q(self.config)} >{d}/{CONFIG_NAME}")
            for name in SHARED:
                target = q(f"{self.repo.common_dir}/{name}")
                lines.append(
                    f"if [ -e {target} ] || [ -L {target} ]; then ln -s -- {target} {d}/{name}; fi"
                )
        return "; ".join(lines) + "; "

    def around(self, body: str) -> str:
        """``body`` (sh text) run after ``prelude``, the directory removed afterwards; the
        exit status is ``body``'s."""
        return f"{self.prelude()}{body}; rc=$?; rm -rf -- {q(self.directory)}; exit $rc"


def object_types_script(cwd: str, objects: Sequence[str], shadow: GitShadow | None = None) -> str:
    """``git cat-file --batch-check`` of ``objects`` in ``cwd``: one type (or ``... missing``)
    per line, in an empty environment with git's hardening; with ``shadow``, through the
    shadow common directory (built first, removed after), as the git stages themselves run."""
    names = "".join(f"{o}\n" for o in objects)
    env = {**RESTRICTED_ENV, **(shadow.environment() if shadow is not None else {})}
    assignments = " ".join(f"{k}={q(v)}" for k, v in env.items())
    git = " ".join(q(w) for w in ("git", *HARDENING, "cat-file", "--batch-check=%(objecttype)"))
    check = f"printf '%s' {q(names)} | env -i {assignments} {git}"
    if shadow is None:
        return f"cd -- {q(cwd)} || exit 3\n{check}\n"
    return f"cd -- {q(cwd)} || exit 3\n{shadow.around(check)}\n"
