"""Programs whose option-parsed form runs standard input as code, in the destructive check.

``shell.destructive_code`` knows shells and interpreters by name; these programs run their
standard input only in some forms, so their options are parsed (as each one's manual says)
to find that form:

* a login shell started with no command: ``ssh host`` (the remote shell), ``su``/``su -``/
  ``runuser`` without ``-c``, ``sudo -s``/``sudo -i`` and ``doas -s`` without a command,
  ``script`` without ``-c``, ``chroot DIR``, ``unshare``, ``nsenter``, ``newgrp``, ``sg GROUP``
  with no command (each runs ``$SHELL``, which reads the pipe). A here-document is parsed and
  judged as a shell reads it; a pipe asks;
* ``parallel`` with no command runs each input line (and each ``:::`` argument) as a command;
* another language read from standard input: ``make -f -``, ``m4`` (``syscmd``), ``gdb``
  (unless ``-batch`` without ``-x /dev/stdin``), ``dc`` (``!cmd``), the ftp clients ``ftp``,
  ``sftp`` (unless ``-b FILE``), ``lftp`` and ``smbclient`` (unless ``-c``/``-f``), whose
  commands delete remote files and run local ones (``!cmd``): a pipe or here-document asks;
  ``lftp -c/-e`` and ``smbclient -c`` commands given inline ask too.

When a command is given (``ssh host ls``, ``sudo -s ls``), that command is what runs, and the
check judges it as it judges any wrapper's command.

Contract: ``reads_code(name, args)`` says whether ``name args`` runs its standard input as
code; ``stdin_reason(name, args, stdin, nested)`` is the reason to ask, or "".
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from itertools import pairwise

from rho_domain.shell.destructive_code import STDIN_FILES, Nested, Stdin, code_on_stdin
from rho_domain.shell.destructive_words import Arg


def _operands(args: Sequence[Arg], valued: str, long_valued: frozenset[str]) -> list[Arg]:
    """The words that are not options nor their values; a glob or generated word counts as
    an operand (fail closed: it may be a command)."""
    operands: list[Arg] = []
    i = 0
    while i < len(args):
        arg = args[i]
        i += 1
        if arg is None or arg == "-" or not arg.startswith("-"):
            operands.append(arg)
        elif arg == "--":
            operands += args[i:]
            break
        elif arg.startswith("--"):
            i += arg in long_valued
        else:
            for index, letter in enumerate(arg[1:]):
                if letter in valued:
                    i += index == len(arg) - 2  # the value is the next word
                    break
    return operands


def _has(args: Sequence[Arg], short: str, long: tuple[str, ...]) -> bool:
    """True when a short option letter in ``short`` or a long option in ``long`` is given
    (clusters read up to the first letter that takes a value)."""
    for arg in args:
        if arg is None or arg == "--":
            return arg is None
        if arg.startswith("--"):
            if arg.split("=", 1)[0] in long:
                return True
        elif arg.startswith("-") and any(letter in short for letter in arg[1:]):
            return True
    return False


def _ssh(args: Sequence[Arg]) -> bool:
    # ssh(1): valued options; -N, -W, -O, -Q, -G, -V, -s run no remote shell on stdin
    if _has(args, "NWOQGVs", ()):
        return False
    # the command is the words after the destination joined; blank, ssh starts the login shell
    command = _operands(args, "BbcDEeFIiJLlmOoPpQRSWw", frozenset())[1:]
    return all(word is not None and not word.strip() for word in command)


def _su(args: Sequence[Arg]) -> bool:
    # su(1)/runuser(1): -c/--command/--session-command give the command; -u USER COMMAND
    if _has(args, "c", ("--command", "--session-command")):
        return False
    long_valued = frozenset(["--shell", "--group", "--supp-group", "--user"])
    operands = [o for o in _operands(args, "sgGwu", long_valued) if o != "-"]  # "-": --login
    return len(operands) <= (0 if _has(args, "u", ("--user",)) else 1)


def _sudo(args: Sequence[Arg]) -> bool:
    # sudo(8): -s/-i run a shell; options end at the command (getopt "+")
    valued = "CDghpRrtTUu"
    command = _operands(args, valued, frozenset(["--close-from", "--group", "--user"]))
    return not command and _has(args, "si", ("--shell", "--login"))


def _doas(args: Sequence[Arg]) -> bool:
    return not _operands(args, "Cu", frozenset()) and _has(args, "s", ())


def _script(args: Sequence[Arg]) -> bool:
    # script(1): without -c the shell it starts reads the terminal, fed from stdin
    return not _has(args, "c", ("--command",))


def _shell_after(count: int, valued: str, long_valued: tuple[str, ...]) -> Callable[..., bool]:
    """A program that runs ``$SHELL`` when no command follows its ``count`` operands."""
    return lambda args: len(_operands(args, valued, frozenset(long_valued))) <= count


_LOGIN_SHELLS: dict[str, Callable[[Sequence[Arg]], bool]] = {
    "ssh": _ssh,
    "su": _su,
    "runuser": _su,
    "sudo": _sudo,
    "doas": _doas,
    "script": _script,
    "chroot": _shell_after(1, "", ("--userspec", "--groups")),
    "unshare": _shell_after(0, "SGRw", ("--setuid", "--setgid", "--root", "--wd")),
    "nsenter": _shell_after(0, "tSG", ("--target", "--setuid", "--setgid")),
    "newgrp": _shell_after(1, "", ()),
    "sg": _shell_after(1, "", ()),
}
# parallel(1) options that take the next word as their value
_PARALLEL_VALUED = frozenset(
    [
        "-a", "--arg-file", "-d", "--delimiter", "-E", "-I", "-j", "--jobs", "-P",
        "--max-procs", "-L", "--max-lines", "-l", "-n", "--max-args", "-N", "-S", "--sshlogin",
        "--sshloginfile", "--slf", "-C", "--colsep", "--joblog", "--results", "--res",
        "--tmpdir", "--workdir", "--wd", "--delay", "--timeout", "--memfree", "--retries",
        "--halt", "--tagstring", "--tag-string", "--basefile", "--bf", "--return",
        "--transfer-file", "--tf", "--block", "--block-size", "--recstart", "--recend",
        "--env", "--load", "--nice", "--shebang", "--sqlmaster", "--sqlworker", "-X",
        "--xapply", "--limit",
    ]
)  # fmt: skip
_PARALLEL_INPUTS = frozenset([":::", "::::", ":::+", "::::+"])


def _parallel_command(args: Sequence[Arg]) -> tuple[list[Arg], list[Arg]]:
    """The command parallel runs and its ``:::`` arguments."""
    end = next((i for i, a in enumerate(args) if a in _PARALLEL_INPUTS), len(args))
    return _operands(args[:end], "adEjPLlnNSCX", _PARALLEL_VALUED), list(args[end:])


def _make(args: Sequence[Arg]) -> bool:
    # make(1): -f/--file/--makefile FILE; "-f -" reads the makefile (recipes) from stdin
    for index, arg in enumerate(args):
        if arg is None:
            return True
        value: Arg = ""
        if arg in ("-f", "--file", "--makefile"):
            value = args[index + 1] if index + 1 < len(args) else None
        elif arg.startswith(("--file=", "--makefile=")):
            value = arg.split("=", 1)[1]
        elif arg.startswith("-f") and not arg.startswith("--"):
            value = arg[2:]
        if value is None or value in STDIN_FILES:
            return True
    return False


def _m4(args: Sequence[Arg]) -> bool:
    # m4(1) reads stdin with no file operand or with "-"
    valued = "DUIdlogFRtL"
    long_valued = frozenset(["--error-output", "--freeze-state", "--reload-state", "--trace"])
    operands = _operands(args, valued, long_valued)
    return not operands or any(o is None or o in STDIN_FILES for o in operands)


def _gdb(args: Sequence[Arg]) -> bool:
    # gdb(1) reads commands from stdin unless -batch; -x/-command FILE may name stdin
    scripts = [b for a, b in pairwise(args) if a in ("-x", "--x", "-command")]
    if any(s is None or s in STDIN_FILES for s in scripts) or None in args:
        return True
    return not any(a in ("-batch", "--batch") for a in args)


def _dc(args: Sequence[Arg]) -> bool:
    # dc(1) reads stdin only with no -e/-f and no file operand
    if _has(args, "ef", ("--expression", "--file")):
        return False
    return not _operands(args, "ef", frozenset(["--expression", "--file"]))


def _sftp(args: Sequence[Arg]) -> bool:
    # sftp(1) reads its commands from stdin, unless -b names a batch file that is not stdin
    batches = [b for a, b in pairwise(args) if a == "-b"]
    return not batches or any(b is None or b in STDIN_FILES for b in batches)


def _lftp(args: Sequence[Arg]) -> bool:
    # lftp(1), smbclient(1): commands from stdin unless given with -c or a file with -f
    return not _has(args, "cf", ("--command", "--file"))


# ftp clients' own commands delete remote files (rm, mrm, mirror --delete, del) and run
# local ones (!cmd): given inline they ask like an interpreter's inline code
_FTP_INLINE = {"lftp": ("ce", ("--command",)), "smbclient": ("c", ("--command",))}

_OTHER_LANGUAGES: dict[str, Callable[[Sequence[Arg]], bool]] = {
    "ftp": lambda args: True,
    "tnftp": lambda args: True,
    "sftp": _sftp,
    "lftp": _lftp,
    "smbclient": _lftp,
    "make": _make,
    "gmake": _make,
    "m4": _m4,
    "gdb": _gdb,
    "dc": _dc,
}


def reads_code(name: str, args: Sequence[Arg]) -> bool:
    """True when ``name args`` runs what it reads on standard input as code."""
    if name == "parallel":
        return _parallel_command(args) == ([], [])
    test = _LOGIN_SHELLS.get(name) or _OTHER_LANGUAGES.get(name)
    return test is not None and test(args)


def is_stdin_runner(name: str | None) -> bool:
    """True when ``name`` is a program this module parses."""
    return name in _LOGIN_SHELLS or name in _OTHER_LANGUAGES or name == "parallel"


def stdin_reason(name: str, args: Sequence[Arg], stdin: Stdin, nested: Nested) -> str:
    """Why ``name args`` reading ``stdin`` asks, or ""."""
    if name == "parallel":
        command, inputs = _parallel_command(args)
        if not command:  # each argument after ::: is a command line
            for word in inputs:
                if word is None:
                    return "parallel runs a glob or generated word as a command"
                if word not in _PARALLEL_INPUTS and (why := nested(word, "parallel")):
                    return why
        if not command and not inputs and stdin not in ("", "file"):
            return "parallel with no command runs each line it reads as a command"
        return ""
    if name in _FTP_INLINE and _has(args, *_FTP_INLINE[name]):
        return f"{name}: runs its own commands (remote rm, ! shell escapes) given inline"
    if not reads_code(name, args) or stdin in ("", "file"):
        return ""
    if name in _LOGIN_SHELLS:
        return code_on_stdin(f"{name} (the shell it starts)", stdin, nested)
    return f"{name} reads code from a pipe or here-document the approval check cannot read"
