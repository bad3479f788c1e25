"""Programs that run code handed to them, in the destructive-command check (``shell.destructive``).

* shells (sh, bash, zsh, ...): a ``-c`` string is parsed and judged in turn; so is a
  here-document or here-string they read. Code from a pipe (``curl ... | sh``, also through
  ``/dev/stdin``) asks: this check cannot see it. A script file is its own business, like
  ``./script``, unless this command line wrote it (``shell.destructive`` checks that);
* ``eval``: its words, joined, are parsed and judged;
* ``source`` / ``.``: code from a pipe asks;
* ``at`` / ``batch``: the shell script they queue is read from standard input (``-f FILE``
  aside), so a here-document is parsed and judged and a pipe asks, as into a shell: the
  job runs later, under ``/bin/sh``, with nobody asked;
* interpreters (python, perl, ruby, node, php, ...): inline code (``-c``, ``-e``, ``-p``,
  ``-r``, ``--eval``) and code from a pipe or here-document ask (another language: not read);
* awk: the program asks unless the restricted shell's awk check passes it (no ``system``,
  pipes, ``getline`` or output files);
* find: ``-delete`` asks; ``-exec``/``-execdir``/``-ok``/``-okdir`` commands are judged
  with ``{}`` unknown; a glob among its words asks (a match could be an action);
* editors (vim, vi, nvim, ex, ed, emacs...): commands given on the command line (``-c``,
  ``+cmd``, ``--cmd``, ``-S``/``-s``/``-u`` scripts, ``--eval``, ``-l``) or on standard input
  ask; ``vim +12 file`` does not;
* SQL clients (psql, mysql/mariadb, sqlite3): SQL given inline or in a here-document asks
  unless the SQL check finds one read-only statement; SQL from a file or a pipe asks
  (``shell.destructive_sql``).

Contract: ``runner_for(name)`` returns the judge of a program that runs code, or None;
``runs_stdin(name)`` says whether it runs its standard input as code.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from rho_domain.errors import CommandRefused
from rho_domain.shell.awk import check_awk
from rho_domain.shell.destructive_sed import sed_reason
from rho_domain.shell.destructive_sql import SQL_CLIENTS, sql_reason
from rho_domain.shell.destructive_words import Arg

Stdin = str  # "" nothing, "pipe", "file", or a here-document's text
Nested = Callable[[str, str], str]  # (shell text, who runs it) -> reason, one level deeper
Judge = Callable[[Sequence[Arg]], str]  # an argv run by this one, one level deeper
Runner = Callable[[str, Sequence[Arg], Stdin, Nested, Judge], str]

STDIN_FILES = frozenset({"-", "/dev/stdin", "/dev/fd/0", "/proc/self/fd/0"})
SHELLS = frozenset(
    [
        "sh", "bash", "dash", "zsh", "ksh", "ksh93", "mksh", "pdksh", "oksh", "lksh", "ash",
        "hush", "yash", "posh", "fish", "csh", "tcsh", "rbash",
    ]
)  # fmt: skip
_INTERPRETER = re.compile(
    r"^(python|pypy|perl|ruby|php|lua|luajit|node|nodejs|deno|bun|rscript|pwsh|tclsh|osascript"
    r"|mongo|mongosh|julia|guile|racket|sbcl|elixir|groovy|scala|jshell|irb|expect|wish|r|octave"
    r"|gnuplot|xonsh)[0-9.]*$"
)
_INLINE_LONG = frozenset(["--eval", "--print", "--command", "-command", "--exec"])
_INLINE_FLAGS = frozenset("ceEpr")  # python -c, perl -e/-E/-p, ruby -e, node -e/-p, php -r
# options whose value is the next word (not the script): python -W/-X, ruby/perl -I, node's
_INTERPRETER_VALUED = frozenset(
    [
        "-W", "-X", "-I", "-C", "--check-hash-based-pycs", "--require", "--import", "--loader",
        "--experimental-loader", "--input-type", "--env-file", "--conditions",
    ]
)  # fmt: skip
_AWKS = frozenset(["awk", "gawk", "mawk", "nawk"])
_SHELL_VALUED = frozenset(["-o", "+o", "-O", "+O", "--rcfile", "--init-file"])


def runner_for(name: str) -> Runner | None:
    """The judge of ``name`` when it runs code handed to it; None otherwise."""
    if name in SHELLS:
        return _shell
    if name in _AWKS:
        return _awk
    if _INTERPRETER.match(name):
        return _interpreter
    return _RUNNERS.get(name)


def runs_stdin(name: str) -> bool:
    """True when ``name`` runs what it reads on standard input as code (``sh < x`` runs ``x``
    as ``sh x`` does): shells, interpreters, editors, SQL clients, ``at`` and ``batch``."""
    return bool(
        name in SHELLS
        or _INTERPRETER.match(name)
        or name in _VIMS
        or name in SQL_CLIENTS
        or name in ("at", "batch")
    )


def _shell(name: str, args: Sequence[Arg], stdin: Stdin, nested: Nested, judge: Judge) -> str:
    inline = from_stdin = False
    i = 0
    while i < len(args):
        arg = args[i]
        if arg is None:
            return f"{name} with a glob or generated word"
        if arg == "-" or not arg.startswith(("-", "+")):
            break
        i += 1
        if arg == "--":
            break
        if arg.startswith("--command="):  # fish
            return nested(arg.split("=", 1)[1], f"{name} --command")
        if arg in _SHELL_VALUED:
            i += 1
        elif arg == "--command":
            inline = True
        elif not arg.startswith("--"):
            inline = inline or "c" in arg[1:]
            from_stdin = from_stdin or "s" in arg[1:]
    operands = args[i:]
    if operands and operands[0] is None:  # bash -- ./*
        return unseen_script(name)
    if inline:
        if not operands or operands[0] is None:
            return f"{name} -c with a glob or generated command string"
        return nested(operands[0], f"{name} -c")
    if operands and operands[0] not in STDIN_FILES and not from_stdin:
        return ""  # a script file
    return code_on_stdin(name, stdin, nested)


def unseen_script(name: str) -> str:
    """Why ``name`` asks when the script it runs is a glob or generated word (``python3
    ./*``: the first name the glob matches runs as code, the others are its words)."""
    return (
        f"the script {name} runs is a glob or generated word, which the approval check cannot "
        "see (the first name it matches runs as code): name the script"
    )


def code_on_stdin(name: str, stdin: Stdin, nested: Nested) -> str:
    """Shell code ``name`` reads on stdin: a pipe asks, a here-document is judged."""
    if stdin == "pipe":
        return f"a pipe into {name} runs text the approval check cannot see"
    if stdin not in ("", "file"):
        return nested(stdin, f"{name} <<here-document")
    return ""


def _eval(name: str, args: Sequence[Arg], stdin: Stdin, nested: Nested, judge: Judge) -> str:
    if None in args:
        return "eval of a glob or generated word"
    return nested(" ".join(a for a in args if a is not None), "eval")


def _source(name: str, args: Sequence[Arg], stdin: Stdin, nested: Nested, judge: Judge) -> str:
    if args and args[0] is None:
        return unseen_script(name)
    if args and args[0] in STDIN_FILES:
        return code_on_stdin(name, "pipe" if stdin in ("", "file") else stdin, nested)
    return ""


_AT_OTHER = frozenset("flrdc")  # -f FILE queues a script file; -l, -r, -d, -c list, remove, show


def _at(name: str, args: Sequence[Arg], stdin: Stdin, nested: Nested, judge: Judge) -> str:
    """``at``/``batch`` queue standard input as a shell script: judged as a shell reads it.
    ``at`` without a time operand queues nothing (``grep at`` is not a queue)."""
    for arg in args:
        if arg is not None and arg.startswith("-") and _AT_OTHER & set(arg[1:]):
            return ""
    if name == "at" and not any(a is None or not a.startswith("-") for a in args):
        return ""
    return code_on_stdin(name, stdin, nested)


def _interpreter(name: str, args: Sequence[Arg], stdin: Stdin, nested: Nested, judge: Judge) -> str:
    """Inline code or code on stdin asks; a script or a module (``-m``) is its own business."""
    script: Arg = "-"
    value_next = False
    for arg in args:
        if value_next:
            value_next = False
            continue
        if arg is None or arg in STDIN_FILES or not arg.startswith("-") or arg.startswith("-m"):
            script = arg
            break  # the script, the module or stdin: the words after it are its own
        value_next = arg in _INTERPRETER_VALUED
        option = arg.split("=", 1)[0]
        if option in _INLINE_LONG or (not arg.startswith("--") and _INLINE_FLAGS & set(arg[1:])):
            return f"{name} {arg}: runs inline code the approval check cannot read"
    if script is None and stdin in ("", "file"):
        return unseen_script(name)
    if script == "run" and name.startswith(("deno", "bun")):  # deno run ./*: the script next
        return _interpreter(name, args[list(args).index(script) + 1 :], stdin, nested, judge)
    if script == "-m" and None in args[list(args).index(script) + 1 :][:1]:  # python3 -m ./*
        return unseen_script(name)
    if (script is None or script in STDIN_FILES) and stdin not in ("", "file"):
        return f"{name} reads code from a pipe or here-document the approval check cannot read"
    return ""


def _awk(name: str, args: Sequence[Arg], stdin: Stdin, nested: Nested, judge: Judge) -> str:
    if None in args:
        return f"{name} with a glob or generated word"
    try:
        check_awk([a for a in args if a is not None])
    except CommandRefused as exc:
        return f"{name}: its program may run commands or write files ({exc})"
    return ""


def _find(name: str, args: Sequence[Arg], stdin: Stdin, nested: Nested, judge: Judge) -> str:
    i = 0
    while i < len(args):
        arg = args[i]
        i += 1
        if arg is None:
            return "find with a glob among its words (a matched name could be an action)"
        if arg == "-delete":
            return "find -delete removes every file it matches"
        if arg in ("-exec", "-execdir", "-ok", "-okdir"):
            end = i
            while end < len(args) and args[end] not in (";", "+"):
                end += 1
            command = tuple(None if w is not None and "{}" in w else w for w in args[i:end])
            if not command:
                return f"find {arg} without a command"
            if why := judge(command):
                return f"find {arg}: {why}"
            i = end + 1
    return ""


# Editors run their own command language (vim's ex commands with ``!`` and ``system()``,
# emacs lisp): given on the command line, from a script file or on standard input, it asks.
_VIMS = frozenset(["vim", "vi", "nvim", "ex", "view", "vimdiff", "gvim", "rvim", "evim", "ed"])
_VIM_CODE = frozenset(["-c", "--cmd", "-S", "-s", "-u", "-w", "-W"])
_EMACS_CODE = ("--eval", "-eval", "--execute", "-l", "--load", "-f", "--funcall", "--script", "-x")


def _editor(name: str, args: Sequence[Arg], stdin: Stdin, nested: Nested, judge: Judge) -> str:
    """Editor commands given to the editor (not the files it edits) ask: they can run any
    program. ``vim +12 file`` and ``vim +/pattern file`` only move the cursor."""
    for arg in args:
        if arg is None:
            return f"{name} with a glob or generated word"
        option = arg.split("=", 1)[0]
        if name in _VIMS and (
            option in _VIM_CODE
            or (arg.startswith("-") and not arg.startswith("--") and "c" in arg[1:2])
            or (arg.startswith("+") and len(arg) > 1 and not arg[1:].isdigit() and arg[1] != "/")
        ):
            return f"{name} {arg}: runs editor commands (they can run any program)"
        if name not in _VIMS and option in _EMACS_CODE:
            return f"{name} {arg}: evaluates code the approval check cannot read"
    if name in _VIMS and stdin not in ("", "file"):
        return f"{name} reads editor commands from a pipe or here-document"
    return ""


def _sed(name: str, args: Sequence[Arg], stdin: Stdin, nested: Nested, judge: Judge) -> str:
    return sed_reason(name, args)


def _sql_client(name: str, args: Sequence[Arg], stdin: Stdin, nested: Nested, judge: Judge) -> str:
    return sql_reason(name, args, stdin)


_RUNNERS: dict[str, Runner] = {
    "sed": _sed,
    **dict.fromkeys(_VIMS, _editor),
    **dict.fromkeys(["emacs", "emacsclient"], _editor),
    "eval": _eval,
    "source": _source,
    ".": _source,
    "at": _at,
    "batch": _at,
    "find": _find,
    **dict.fromkeys(SQL_CLIENTS, _sql_client),
}
