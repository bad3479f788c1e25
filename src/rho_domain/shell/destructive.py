r"""Which bash command lines ask again after "always": decided on the parsed command, not text.

A human who answers "always" for bash approves ordinary work for the session, not everything.
``destructive_reason(command)`` reads the line with the restricted shell's own lexer and parser
(quotes removed and escapes decoded, so ``'rm'``, ``r\\m`` and ``\\rm`` are rm; ``/bin/rm``
is rm by its last path component) and judges every simple command in it:

* every command of every list (``;``, ``&&``, ``||``, newlines), pipeline and subshell;
* every suffix of a command's words that starts with a program this check knows, since
  programs that run programs take the command as a suffix of their words (``env``,
  ``sudo``, ``nice``, ``timeout``, ``nohup``, ``exec``, ``command``, ``busybox``, ``ssh``,
  ``git bisect run``...). After ``xargs`` or ``parallel`` the suffix ends with an unknown word
  (what they append), and their ``{}`` is unknown, as is ``find -exec``'s;
* the code a shell runs: ``sh -c``/``bash -c``... strings, ``eval``'s words and here-documents
  fed to a shell are parsed and judged in turn; a pipe into a shell (``curl ... | sh``) asks;
* inline code for another language (``python -c``, ``perl -e``, ``node -e``..., code piped or
  fed to them) asks: this check cannot read it. An awk program asks unless the restricted
  shell's awk check passes it (no ``system``, pipes, ``getline`` or output files);
* every other word with a blank or an operator in it that parses as a command line (the
  string ``ssh host`` or ``watch`` hands to a shell); for ``ssh``, ``su``, ``watch``...
  such a word that cannot be parsed asks;
* redirections that write to a device (``> /dev/sda``; not ``/dev/null``, ``/dev/std*``,
  ``/dev/tty``, ``/dev/fd/*``), or inside a ``.git`` directory (hooks and config run later);
* the programs of ``shell.destructive_table`` (rm, find's ``-delete``, dd, mkfs, chmod -R,
  git push --force, reset --hard, clean, ...).

Fail closed: a line, shell string or here-document the parser cannot read (variables,
``$(...)``, keywords, more than 8192 characters, control characters) asks again with the
parser's reason, and so does nesting deeper than ``MAX_DEPTH``.

Not read, like any program's own behaviour: what a script or build tool does (``./deploy.sh``,
``make``, ``python script.py``), sed's ``e`` command, and plain overwrites (``mv``, ``cp``,
``> file``), which are ordinary work in a developer profile.

Contract: ``destructive_reason(command) -> str``, the reason shown to the human, or "".
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from rho_domain.errors import CommandRefused
from rho_domain.shell.awk import check_awk
from rho_domain.shell.destructive_table import is_listed, judge_program, program_name
from rho_domain.shell.destructive_words import Arg
from rho_domain.shell.parser import CommandList, Redirection, SimpleCommand, Subshell, parse

MAX_DEPTH = 6

_SHELLS = frozenset(
    ["sh", "bash", "dash", "zsh", "ksh", "mksh", "yash", "posh", "fish", "csh", "tcsh", "rbash"]
)
_INTERPRETER = re.compile(
    r"^(python|pypy|perl|ruby|php|lua|luajit|node|nodejs|deno|bun|rscript|pwsh|tclsh|osascript)"
    r"[0-9.]*$"
)
_INLINE_CODE = frozenset(["--eval", "--print", "--command", "-command", "--exec"])
_INLINE_FLAGS = frozenset("ceEpr")  # python -c, perl -e/-E/-p, ruby -e, node -e/-p, php -r
_AWKS = frozenset(["awk", "gawk", "mawk", "nawk", "busybox-awk"])
_APPENDERS = frozenset({"xargs", "parallel"})
_SHELL_STRING_TAKERS = frozenset(
    [
        "ssh",
        "su",
        "runuser",
        "watch",
        "script",
        "flock",
        "env",
        "sudo",
        "doas",
        "timeout",
        "nohup",
        "setsid",
        "unbuffer",
    ]
)
_HARMLESS_DEVICES = ("/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty", "/dev/fd/")
_LINE_CHARACTERS = frozenset(" \t\n;|&()<>")
_SHELL_VALUED = frozenset(["-o", "+o", "-O", "+O", "--rcfile", "--init-file"])

Stdin = str  # "" empty, "pipe", "file", or a here-document's text


def destructive_reason(command: str) -> str:
    """Why ``command`` asks again after "always" (shown to the human), or "" when it may run
    unasked. See the module docstring for what is read."""
    return _line(command, 0)


def _line(text: str, depth: int) -> str:
    try:
        tree = parse(text)
    except CommandRefused as exc:
        return f"the approval check cannot read this command line, so it asks ({exc})"
    return _list(tree, depth)


def _list(tree: CommandList, depth: int) -> str:
    if depth > MAX_DEPTH:
        return f"commands nested more than {MAX_DEPTH} levels deep cannot be checked"
    for _, pipeline in tree.items:
        for index, command in enumerate(pipeline.commands):
            if isinstance(command, Subshell):
                why = _list(command.body, depth + 1)
            else:
                why = _simple(command, depth, piped=index > 0)
            if why:
                return why
    return ""


def _simple(command: SimpleCommand, depth: int, *, piped: bool) -> str:
    patterns = command.patterns or (None,) * len(command.argv)
    argv: tuple[Arg, ...] = tuple(
        None if pattern is not None else word
        for word, pattern in zip(command.argv, patterns, strict=True)
    )
    if why := _redirections(command.redirections):
        return why
    stdin = _stdin(command.redirections, piped=piped)
    first = program_name(argv[0])
    for start in range(len(argv)):
        name = program_name(argv[start])
        if start and not (is_listed(name) or _runs_code(name) or name == "find"):
            continue
        words = argv[start:]
        if start and first in _APPENDERS:
            words = (*(None if w is not None and "{}" in w else w for w in words), None)
        # a wrapper's command inherits its stdin; xargs and parallel give theirs none
        if why := _argv(words, "" if start and first in _APPENDERS else stdin, depth):
            return why
    strict = first in _SHELL_STRING_TAKERS
    for word in argv[1:]:
        if word is None or not _LINE_CHARACTERS & set(word):
            continue
        try:
            tree = parse(word)
        except CommandRefused as exc:
            if strict:
                return f"{first} runs a command string the approval check cannot read ({exc})"
            continue
        if why := _list(tree, depth + 1):
            return why
    return ""


def _argv(words: Sequence[Arg], stdin: Stdin, depth: int) -> str:
    """Judge one command's words (a whole command, or a suffix a wrapper runs)."""
    name = program_name(words[0])
    args = words[1:]
    if name is None:
        return "the program to run is a glob or generated word"
    if name in _SHELLS:
        return _shell(name, args, stdin, depth)
    if name == "eval":
        if None in args:
            return "eval of a glob or generated word"
        return _nested(" ".join(a for a in args if a is not None), depth, "eval")
    if name == "find":
        return _find(args, depth)
    if name in _AWKS:
        return _awk(name, args)
    if _INTERPRETER.match(name):
        return _interpreter(name, args, stdin)
    return judge_program(name, args)


def _runs_code(name: str | None) -> bool:
    return name is not None and (
        name in _SHELLS or name in _AWKS or name == "eval" or bool(_INTERPRETER.match(name))
    )


def _nested(text: str, depth: int, who: str) -> str:
    if depth + 1 > MAX_DEPTH:
        return f"commands nested more than {MAX_DEPTH} levels deep cannot be checked"
    try:
        tree = parse(text)
    except CommandRefused as exc:
        return f"{who} runs a command string the approval check cannot read ({exc})"
    return _list(tree, depth + 1)


def _shell(name: str, args: Sequence[Arg], stdin: Stdin, depth: int) -> str:
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
        if arg in _SHELL_VALUED:
            i += 1
        elif not arg.startswith("--"):
            inline = inline or "c" in arg[1:]
            from_stdin = from_stdin or "s" in arg[1:]
    operands = args[i:]
    if inline:
        if not operands or operands[0] is None:
            return f"{name} -c with a glob or generated command string"
        return _nested(operands[0], depth, f"{name} -c")
    if operands and operands[0] != "-" and not from_stdin:
        return ""  # a script file: like ./script, what it does is its own
    if stdin == "pipe":
        return f"a pipe into {name} runs text the approval check cannot see"
    if stdin not in ("", "file"):
        return _nested(stdin, depth, f"{name} <<here-document")
    return ""


def _interpreter(name: str, args: Sequence[Arg], stdin: Stdin) -> str:
    """Inline code or code on stdin asks; a script or module (``-m``) is its own business."""
    for arg in args:
        if arg is None or arg == "-" or not arg.startswith("-") or arg.startswith("-m"):
            break  # the script, the module or stdin: the words after it are its own
        option = arg.split("=", 1)[0]
        if option in _INLINE_CODE or (not arg.startswith("--") and _INLINE_FLAGS & set(arg[1:])):
            return f"{name} {arg}: runs inline code the approval check cannot read"
    else:
        arg = "-"  # no script named: the code comes from stdin
    if arg == "-" and stdin not in ("", "file"):
        return f"{name} reads code from a pipe or here-document the approval check cannot read"
    return ""


def _awk(name: str, args: Sequence[Arg]) -> str:
    if None in args:
        return f"{name} with a glob or generated word"
    try:
        check_awk([a for a in args if a is not None])
    except CommandRefused as exc:
        return f"{name}: its program may run commands or write files ({exc})"
    return ""


def _find(args: Sequence[Arg], depth: int) -> str:
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
            if why := _argv(command, "", depth + 1):
                return f"find {arg}: {why}"
            i = end + 1
    return ""


def _redirections(redirections: Sequence[Redirection]) -> str:
    for redirection in redirections:
        target = redirection.target
        if target is None or redirection.op in ("<", "<&"):
            continue
        if target.startswith("/dev/") and not target.startswith(_HARMLESS_DEVICES):
            return f"{redirection.op} {target}: writes to a device"
        if ".git" in target.casefold().split("/"):
            return f"{redirection.op} {target}: writes inside .git (hooks and config run later)"
    return ""


def _stdin(redirections: Sequence[Redirection], *, piped: bool) -> Stdin:
    """What the command reads on standard input: a pipe, a file, a here-document's text, or
    nothing (the tool's stdin is empty). The last redirection of descriptor 0 wins."""
    stdin: Stdin = "pipe" if piped else ""
    for redirection in redirections:
        if redirection.fd not in (None, 0):
            continue
        if redirection.heredoc is not None:
            stdin = redirection.heredoc
        elif redirection.op in ("<", "<>"):
            stdin = "file"
    return stdin
