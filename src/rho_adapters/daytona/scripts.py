"""The POSIX sh scripts the Daytona executor sends to the sandbox, and their answers' parsers.

Every word that comes from the model (argv words, paths, here-document text, env values) goes
through ``shlex.quote``; the scripts themselves are fixed text. A script reaches the daemon
base64-encoded (``wrap``), so the daemon (which splits the command itself, or gives it to a
shell, by version) sees only ``[A-Za-z0-9+/=]`` and a fixed prefix. The sandbox needs GNU
coreutils (``realpath -m``, ``stat -c``, ``head -c``, ``base64 -w0``), as the Daytona default
images have.

Here: running a command (a pipeline rendered, the restricted and unrestricted wrappers, limits,
the capped output and its trailer), the awk probe, and git's discovery and shadow directory.
The scripts that resolve paths are path_scripts.py.
"""

from __future__ import annotations

import base64
import re
import shlex
from collections.abc import Mapping, Sequence

import attrs

from rho_adapters.daytona.git_files import GIT_FILES
from rho_domain.errors import ExecutorError, PathOutsideWorkspace, ToolError
from rho_domain.ports.executor import Stage
from rho_domain.shell.awk import AwkFlavor, flavor_from_version
from rho_domain.shell.environment import restricted_env
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

SEARCH_PATH = "/usr/local/bin:/usr/bin:/bin"
# Restricted pipelines start from an empty environment (no sandbox env vars, no secrets):
# the domain's rule, as local commands.
RESTRICTED_ENV: Mapping[str, str] = restricted_env(SEARCH_PATH, "/tmp")  # noqa: S108
TRAILER = "\n\x1erho:"
q = shlex.quote


def wrap(script: str) -> str:
    """The one-line command sent to ``/process/execute`` for ``script``.

    Daemons before March 2026 split the command themselves (``parseCommand``: words on
    spaces, a quote kept only by the other kind, no shell) and exec the words; newer ones
    give the text to a shell (sh, bash or zsh) on its stdin. Both get the same argv from
    this line: ``sh -c DECODER sh CHUNK...``. The script travels base64-encoded in chunks
    (``[A-Za-z0-9+/=]``: nothing either daemon or any shell reads as syntax), each chunk a
    word of its own below Linux's 128 KiB limit on one argument; ``DECODER`` joins them,
    clears the positional parameters and runs the script with ``eval`` (the whole text,
    parsed by sh) with stdin from /dev/null, so the exit status is the script's.
    """
    encoded = base64.b64encode(script.encode()).decode()
    chunks = [encoded[at : at + _CHUNK] for at in range(0, len(encoded), _CHUNK)]
    return " ".join(["sh", "-c", f"'{_DECODER}'", "sh", *chunks])


# The decoder is single-quoted for both daemons: it holds no single quote and no newline.
_DECODER = (
    'rho_script=$(printf %s "$@" | base64 -d) || exit 125; set --; eval "$rho_script" </dev/null'
)
# Characters of base64 per argument: a multiple of 4 (no chunk starts with padding), well
# below MAX_ARG_STRLEN (131072 bytes with the terminating NUL).
_CHUNK = 98_304


def render_stage(stage: Stage, stdin_file: str | None) -> str:
    """One pipeline stage as sh text; ``stdin_file`` is the resolved ``stdin_path``."""
    words = " ".join(q(word) for word in stage.argv)
    if stdin_file is not None:
        words += f" <{q(stdin_file)}"
    if stage.stdout_null:
        words += " >/dev/null"
    if stage.stderr == "null":
        words += " 2>/dev/null"
    elif stage.stderr == "stdout":
        words += " 2>&1"
    if stage.stdin_data is not None:
        # printf is a builtin writing to a pipe: no temp file, works under `ulimit -f 0`.
        return f"{{ printf '%s' {q(stage.stdin_data)} | {words}; }}"
    return words


def render_pipeline(stages: Sequence[Stage], stdin_files: Sequence[str | None]) -> str:
    """A validated pipeline as one shell line, each stage quoted (with its ``<`` file, if any)."""
    return " | ".join(render_stage(s, f) for s, f in zip(stages, stdin_files, strict=True))


def exports(env: Mapping[str, str]) -> str:
    """``export NAME=value;`` commands (values quoted) for an environment."""
    return "".join(f"export {key}={q(value)}; " for key, value in env.items())


def restricted_inner(
    pipeline: str, cwd: str, env: Mapping[str, str], git: GitShadow | None = None
) -> str:
    """A validated pipeline in a fresh environment, unable to write files (``ulimit -f 0``).

    With ``git``, the shadow common directory is built first and removed afterwards.
    """
    body = f"ulimit -f 0 2>/dev/null; {exports(env)}cd -- {q(cwd)} && {pipeline}"
    if git is not None:
        body = f"{git.prelude()}{body}; rc=$?; rm -rf -- {q(git.directory)}; exit $rc"
    assignments = " ".join(f"{k}={q(v)}" for k, v in RESTRICTED_ENV.items())
    return f"env -i {assignments} /bin/sh -c {q(body)}"


# Which awk runs: "gawk" when installed (first line), else awk's own version line.
AWK_PROBE = (
    f"PATH={SEARCH_PATH}\n"
    "if command -v gawk >/dev/null 2>&1; then echo gawk; exit 0; fi\n"
    "echo awk; awk -W version </dev/null 2>&1 | head -n 1; exit 0\n"
)


def parse_awk_probe(answer: str) -> tuple[str, AwkFlavor]:
    """``("gawk", "gawk")`` when gawk is installed, else ``("awk", flavor of awk)``."""
    first, _, rest = answer.strip().partition("\n")
    if first == "gawk":
        return "gawk", "gawk"
    return "awk", flavor_from_version(rest)


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


def shell_inner(command: str, cwd: str, env: Mapping[str, str]) -> str:
    """An unrestricted command line, run by bash when the image has it (else sh)."""
    fixed = {"PAGER": "cat", "GIT_PAGER": "cat", "GIT_TERMINAL_PROMPT": "0", **env}
    return (
        f"({exports(fixed)}cd -- {q(cwd)} || exit 1; "
        f"if command -v bash >/dev/null 2>&1; then exec bash --noprofile --norc -c {q(command)}; "
        f"else exec sh -c {q(command)}; fi)"
    )


def ulimited(inner: str, memory_bytes: int | None, cpu_seconds: float | None) -> str:
    """``inner`` in a subshell under ``ulimit -v`` (KiB) and ``ulimit -t`` (seconds), the two
    limits whose units every ``sh`` agrees on. The file-size limit of restricted commands is
    ``restricted_inner``'s ``ulimit -f 0``; the Daytona sandbox bounds the rest."""
    settings = ""
    if memory_bytes is not None:
        settings += f"ulimit -v {max(1, memory_bytes // 1024)} 2>/dev/null; "
    if cpu_seconds is not None:  # soft below hard: SIGXCPU first, as on the local machine
        cpu = max(1, int(cpu_seconds + 0.999))
        settings += f"ulimit -H -t {cpu + 1} 2>/dev/null; ulimit -S -t {cpu} 2>/dev/null; "
    return f"({settings}{inner})" if settings else inner


def capped(inner: str, cap: int, limit: int | None = None) -> str:
    """Run ``inner`` with stdout+stderr merged; keep ``cap`` bytes, count the rest up to
    ``limit`` bytes in all, where reading stops (the command then dies of SIGPIPE).

    The answer ends with ``TRAILER`` + ``<exit code>:<omitted bytes>``; only the last trailer
    counts, so output that imitates one changes nothing.
    """
    rest = "" if limit is None else f"head -c {max(0, int(limit) - int(cap))} | "
    # The trailer's two numbers are read with the shell's own read (which also drops the
    # blanks some wc put before the count): a $(cat ...) and a $(tr ...) were two more
    # processes for every command.
    return (
        "d=$(mktemp -d) || exit 99\n"
        f'{{ {inner}; echo $? >"$d/rc"; }} </dev/null 2>&1 | '
        f'{{ head -c {int(cap)}; {rest}wc -c >"$d/n"; }}\n'
        'read -r rc <"$d/rc"; read -r n <"$d/n"\n'
        'printf \'\\n\\036rho:%s:%s\\n\' "$rc" "$n"\n'
        'rm -rf "$d"\n'
    )


@attrs.frozen
class Captured:
    """A ``capped`` command's answer: exit code, output, and how many bytes were cut."""

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    exit_code: int
    output: str
    omitted: int


def parse_capped(result: str) -> Captured:
    """Split a ``capped`` answer into output, exit code and omitted byte count."""
    at = result.rfind(TRAILER)
    if at < 0:
        raise ExecutorError(f"the sandbox answered without a status line: {result[-200:]!r}")
    code, _, omitted = result[at + len(TRAILER) :].strip().partition(":")
    try:
        return Captured(exit_code=int(code), output=result[:at], omitted=int(omitted or 0))
    except ValueError as exc:
        raise ExecutorError(f"unreadable status line from the sandbox: {code!r}") from exc


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
    return (
        f"cd -- {q(cwd)} || exit 3\n{shadow.prelude()}{check}; rc=$?; "
        f"rm -rf -- {q(shadow.directory)}; exit $rc\n"
    )


_ENV_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


def checked_env(env: Mapping[str, str]) -> dict[str, str]:
    """A command's environment, each name checked before it is put in a script."""
    for key in env:
        if not _ENV_KEY.match(key):
            raise ToolError(f"invalid environment variable name {key!r}")
    return dict(env)
