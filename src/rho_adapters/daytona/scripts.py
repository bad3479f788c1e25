"""The POSIX sh scripts the Daytona executor sends to the sandbox, and their answers' parsers.

Every word that comes from the model (argv words, paths, here-document text, env values) goes
through ``shlex.quote``; the scripts themselves are fixed text. A script reaches the daemon
base64-encoded (``wrap``), so the daemon's login shell sees only ``[A-Za-z0-9+/=]`` and a
fixed prefix, whatever the daemon version. The sandbox needs GNU coreutils (``realpath -m``,
``stat -c``, ``head -c``, ``base64 -w0``), as the Daytona default images have.
"""

from __future__ import annotations

import base64
import shlex
from collections.abc import Mapping, Sequence

import attrs

from rho_domain.errors import ExecutorError
from rho_domain.ports.executor import Stage
from rho_domain.shell.git import HARDENING

SEARCH_PATH = "/usr/local/bin:/usr/bin:/bin"
# Restricted pipelines start from an empty environment (no sandbox env vars, no secrets).
RESTRICTED_ENV: Mapping[str, str] = {
    "PATH": SEARCH_PATH,
    "LC_ALL": "C.UTF-8",
    "LANG": "C.UTF-8",
    "HOME": "/tmp",  # noqa: S108 - the sandbox's own /tmp, not the host's
    "TMPDIR": "/tmp",  # noqa: S108
    "PAGER": "cat",
    "GIT_PAGER": "cat",
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": "/dev/null",
    "GIT_TERMINAL_PROMPT": "0",
    "GIT_OPTIONAL_LOCKS": "0",
}
TRAILER = "\n\x1erho:"
q = shlex.quote


def wrap(script: str) -> str:
    """The one-line command sent to ``/process/execute`` for ``script``."""
    encoded = base64.b64encode(script.encode()).decode()
    return f"sh -c \"$(printf %s '{encoded}' | base64 -d)\" </dev/null"


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


def restricted_inner(pipeline: str, cwd: str, env: Mapping[str, str]) -> str:
    """A validated pipeline in a fresh environment, unable to write files (``ulimit -f 0``)."""
    body = f"ulimit -f 0 2>/dev/null; {exports(env)}cd -- {q(cwd)} && {pipeline}"
    assignments = " ".join(f"{k}={q(v)}" for k, v in RESTRICTED_ENV.items())
    return f"env -i {assignments} /bin/sh -c {q(body)}"


def shell_inner(command: str, cwd: str, env: Mapping[str, str]) -> str:
    """An unrestricted command line, run by bash when the image has it (else sh)."""
    fixed = {"PAGER": "cat", "GIT_PAGER": "cat", "GIT_TERMINAL_PROMPT": "0", **env}
    return (
        f"({exports(fixed)}cd -- {q(cwd)} || exit 1; "
        f"if command -v bash >/dev/null 2>&1; then exec bash --noprofile --norc -c {q(command)}; "
        f"else exec sh -c {q(command)}; fi)"
    )


def capped(inner: str, cap: int) -> str:
    """Run ``inner`` with stdout+stderr merged; keep ``cap`` bytes, count the rest.

    The answer ends with ``TRAILER`` + ``<exit code>:<omitted bytes>``; only the last trailer
    counts, so output that imitates one changes nothing.
    """
    return (
        "d=$(mktemp -d) || exit 99\n"
        f'{{ {inner}; echo $? >"$d/rc"; }} </dev/null 2>&1 | '
        f'{{ head -c {int(cap)}; wc -c >"$d/n"; }}\n'
        'printf \'\\n\\036rho:%s:%s\\n\' "$(cat "$d/rc")" "$(tr -d \' \' <"$d/n")"\n'
        'rm -rf "$d"\n'
    )


@attrs.frozen
class Captured:
    """A ``capped`` command's answer: exit code, output, and how many bytes were cut."""

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


def resolve_script(
    path: str, read_range: tuple[int, int | None] | None, roots: Sequence[str]
) -> str:
    """Canonicalise ``path`` (all symlinks, missing components allowed) and describe it.

    Answer: ``<L|-> <mode hex> <size> <mtime>`` (``L``: ``path`` itself is a symlink; mode
    ``-`` when missing), then with ``read_range`` a base64 line of those bytes (read only from
    a regular file below one of ``roots``: FIFOs never block), then the canonical path.
    """
    lines = [
        f"p=$(realpath -m -- {q(path)}) || exit 3",
        f"if [ -L {q(path)} ]; then l=L; else l=-; fi",
        "if [ -e \"$p\" ]; then s=$(stat -c '%f %s %Y' -- \"$p\") || exit 4; else s='- 0 0'; fi",
        'printf \'%s %s\\n\' "$l" "$s"',
    ]
    if read_range is not None:
        offset, length = read_range
        take = f" | head -c {int(length)}" if length is not None else ""
        inside = "|".join(f"{q(r)}|{q(r)}/*" for r in roots)
        lines.append(
            f'case "$p" in {inside}) if [ -f "$p" ]; then '
            f'tail -c +{int(offset) + 1} -- "$p"{take} | base64 -w0; fi;; esac; echo'
        )
    lines.append("printf '%s' \"$p\"")
    return "\n".join(lines) + "\n"


def realpaths_script(cwd: str, words: Sequence[str]) -> str:
    """For each word, in ``cwd``: ``- `` when it names nothing, else ``d``/``f`` and the
    base64 of its canonical path (every symlink resolved), one line per word."""
    body = "".join(
        f"w={q(word)}\n"
        'if [ -e "$w" ] || [ -L "$w" ]; then\n'
        '  if [ -d "$w" ]; then k=d; else k=f; fi\n'
        '  printf \'%s \' "$k"; realpath -m -- "$w" | head -c -1 | base64 -w0; echo\n'
        "else echo -; fi\n"
        for word in words
    )
    return f"cd -- {q(cwd)} || exit 3\n{body}"


def object_types_script(cwd: str, objects: Sequence[str]) -> str:
    """``git cat-file --batch-check`` of ``objects`` in ``cwd``: one type (or ``... missing``)
    per line, in an empty environment with git's hardening."""
    names = "".join(f"{o}\n" for o in objects)
    assignments = " ".join(f"{k}={q(v)}" for k, v in RESTRICTED_ENV.items())
    git = " ".join(q(w) for w in ("git", *HARDENING, "cat-file", "--batch-check=%(objecttype)"))
    return f"cd -- {q(cwd)} || exit 3\nprintf '%s' {q(names)} | env -i {assignments} {git}\n"


def parse_realpaths(answer: str) -> list[tuple[str, bool] | None]:
    """The lines of ``realpaths_script``: (canonical path, is a directory) or None."""
    out: list[tuple[str, bool] | None] = []
    for line in answer.splitlines():
        kind, _, encoded = line.partition(" ")
        if kind == "-":
            out.append(None)
        elif kind in ("d", "f"):
            out.append((base64.b64decode(encoded).decode("utf-8", "surrogateescape"), kind == "d"))
        else:
            raise ExecutorError(f"unreadable path answer from the sandbox: {line!r}")
    return out


@attrs.frozen
class Resolved:
    """What ``resolve_script`` reported. ``mode`` is the st_mode, or None when missing."""

    canonical: str
    is_link: bool
    mode: int | None
    size: int
    mtime: float
    data: bytes | None


def parse_resolved(answer: str, *, with_data: bool) -> Resolved:
    """Parse the resolve script's answer for one path (and its bytes, ``with_data``)."""
    head, _, rest = answer.partition("\n")
    data: bytes | None = None
    if with_data:
        encoded, _, rest = rest.partition("\n")
        data = base64.b64decode(encoded) if encoded else None
    try:
        link, mode, size, mtime = head.split(" ")
        return Resolved(
            canonical=rest,
            is_link=link == "L",
            mode=None if mode == "-" else int(mode, 16),
            size=int(size),
            mtime=float(mtime),
            data=data,
        )
    except ValueError as exc:
        raise ExecutorError(f"unreadable path description from the sandbox: {head!r}") from exc
