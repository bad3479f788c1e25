"""The POSIX sh scripts the Daytona executor sends to the sandbox, and their answers' parsers.

Every word that comes from the model (argv words, paths, here-document text, env values) goes
through ``shlex.quote``; the scripts themselves are fixed text. A script reaches the daemon
base64-encoded (``wrap``), so the daemon (which splits the command itself, or gives it to a
shell, by version) sees only ``[A-Za-z0-9+/=]`` and a fixed prefix. The sandbox needs GNU
coreutils (``realpath -m``, ``stat -c``, ``head -c``, ``base64 -w0``), as the Daytona default
images have.

Here: running a command (a pipeline rendered, the restricted and unrestricted wrappers, limits,
the capped output and its trailer) and the awk probe. The scripts that resolve paths are
path_scripts.py; git's discovery and shadow directory are git_scripts.py.
"""

from __future__ import annotations

import base64
import re
import shlex
from collections.abc import Awaitable, Callable, Mapping, Sequence

import attrs

from rho_adapters.daytona.leftovers import LATE, deadline_body
from rho_domain.errors import ExecutorError, ToolError
from rho_domain.ports.executor import Stage
from rho_domain.shell.awk import AwkFlavor, flavor_from_version
from rho_domain.shell.environment import restricted_env
from rho_domain.value_methods import value_eq, value_hash, value_repr

SEARCH_PATH = "/usr/local/bin:/usr/bin:/bin"
# Restricted pipelines start from an empty environment (no sandbox env vars, no secrets):
# the domain's rule, as local commands.
RESTRICTED_ENV: Mapping[str, str] = restricted_env(SEARCH_PATH, "/tmp")  # noqa: S108
TRAILER = "\n\x1erho:"
q = shlex.quote
Run = Callable[[str], Awaitable[str]]  # one of our scripts in the sandbox, its output


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

    ``ToolError`` for a script holding a NUL: the decoder's command substitution drops it,
    so the sandbox would run another text than the one built (a here-document's NUL
    vanished; a shell string's joined the words around it).
    """
    if "\0" in script:
        raise ToolError(
            "a NUL character cannot reach the Daytona sandbox's shell (it would be dropped "
            "and another text run): remove it from the command or here-document"
        )
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
    pipeline: str, cwd: str, env: Mapping[str, str], around: Callable[[str], str] | None = None
) -> str:
    """A validated pipeline in a fresh environment, unable to write files (``ulimit -f 0``).

    With ``around`` (``git_scripts.GitShadow.around``), the body runs inside it: git's shadow
    common directory built first and removed afterwards.
    """
    body = f"ulimit -f 0 2>/dev/null; {exports(env)}cd -- {q(cwd)} && {pipeline}"
    if around is not None:
        body = around(body)
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


def capped(
    inner: str,
    cap: int,
    limit: int | None = None,
    *,
    deadline: float | None = None,
    mark: str | None = None,
) -> str:
    """Run ``inner`` with stdout+stderr merged; keep ``cap`` bytes, count the rest up to
    ``limit`` bytes in all, where reading stops (the command then dies of SIGPIPE).

    The answer ends with ``TRAILER`` + ``<exit code>:<omitted bytes>``; only the last trailer
    counts, so output that imitates one changes nothing.

    ``deadline`` (seconds): the sandbox ends the command itself ``DEADLINE_GRACE`` s after
    it (``leftovers.deadline_body``), and the trailer's exit code is then ``LATE``, which no
    exit of the command's own can spell (a command exiting 124 or 137 by itself was reported
    timed out). ``mark`` (a token): every process the command starts carries the call's
    marks (``leftovers``), and those still running when it ended or was ended (``setsid cmd
    &``, ``nohup``, a daemon's double fork: out of its process group) are killed, as the
    local executor's guard kills them; before, one holding the output pipe held the call
    past its deadline.
    """
    rest = "" if limit is None else f"head -c {max(0, int(limit) - int(cap))} | "
    body = (
        f'{inner}; echo $? >"$d/rc";' if deadline is None else deadline_body(inner, deadline, mark)
    )
    # The trailer's two numbers are read with the shell's own read (which also drops the
    # blanks some wc put before the count): a $(cat ...) and a $(tr ...) were two more
    # processes for every command.
    return (
        "d=$(mktemp -d) || exit 99\n"
        f"{{ {body} }} </dev/null 2>&1 | "
        f'{{ head -c {int(cap)}; {rest}wc -c >"$d/n"; }}\n'
        'read -r rc <"$d/rc"; read -r n <"$d/n"\n'
        'printf \'\\n\\036rho:%s:%s\\n\' "$rc" "$n"\n'
        'rm -rf "$d"\n'
    )


@attrs.frozen
class Captured:
    """A ``capped`` command's answer: exit code, output, and how many bytes were cut;
    ``late`` when its own deadline ended it (``exit_code`` is then ``timeout``'s 124)."""

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    exit_code: int
    output: str
    omitted: int
    late: bool = False


def parse_capped(result: str) -> Captured:
    """Split a ``capped`` answer into output, exit code and omitted byte count."""
    at = result.rfind(TRAILER)
    if at < 0:
        raise ExecutorError(f"the sandbox answered without a status line: {result[-200:]!r}")
    code, _, omitted = result[at + len(TRAILER) :].strip().partition(":")
    late = code == LATE
    try:
        return Captured(
            exit_code=124 if late else int(code),
            output=result[:at],
            omitted=int(omitted or 0),
            late=late,
        )
    except ValueError as exc:
        raise ExecutorError(f"unreadable status line from the sandbox: {code!r}") from exc


_ENV_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


def checked_env(env: Mapping[str, str]) -> dict[str, str]:
    """A command's environment, each name checked before it is put in a script."""
    for key in env:
        if not _ENV_KEY.match(key):
            raise ToolError(f"invalid environment variable name {key!r}")
    return dict(env)
