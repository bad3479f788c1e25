"""The destructive-program table's rows for programs that remove, overwrite or change files:
rm; chmod, chown, chgrp and setfacl; dd; fallocate; rsync; crontab; tar; zip, 7z and unzip.

``FILE_JUDGES`` maps each program to its rule: ``rule(name, args) -> str``, the reason the
command asks again after "always", or "" when it may run. The rows are described in
``destructive_table.py``'s docstring, which joins them with ``destructive_services.py``'s.
Words are parsed words; ``None`` is a word not known before it runs (a glob, ``{}``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from rho_domain.shell.destructive_words import Arg, long_hits, short_hits, split_options

_RM_SHORT = frozenset("iIdv")
_RM_LONG = frozenset(
    [
        "interactive",
        "interactive=always",
        "interactive=once",
        "dir",
        "verbose",
        "one-file-system",
        "preserve-root",
        "preserve-root=all",
        "help",
        "version",
    ]
)
_MODE_SHORT = frozenset("cfvh")
_MODE_LONG = frozenset(
    [
        "changes",
        "silent",
        "quiet",
        "verbose",
        "no-dereference",
        "dereference",
        "preserve-root",
        "help",
        "version",
    ]
)
_MODE_VALUED = ("--reference=", "--from=")
_RSYNC_DELETES = frozenset(
    [
        "del",
        "delete",
        "delete-before",
        "delete-during",
        "delete-delay",
        "delete-after",
        "delete-excluded",
        "delete-missing-args",
        "remove-source-files",
    ]
)


def _rm(name: str, args: Sequence[Arg]) -> str:
    options, operands = split_options(args)
    for option in options:
        if not _allowed(option, _RM_SHORT, _RM_LONG):
            return f"{name} {option}: removes recursively or without asking"
    if any(operand is None for operand in operands):
        return (
            f"{name} with a glob or generated operand: the files it removes are not named "
            "here (and a matched name could be an option)"
        )
    return ""


def _mode(name: str, args: Sequence[Arg]) -> str:
    options, _ = split_options(args)
    for option in options:
        if not _allowed(option, _MODE_SHORT, _MODE_LONG) and not option.startswith(_MODE_VALUED):
            return f"{name} {option}: may change a whole tree (only -c, -f, -v, -h run unasked)"
    return ""


def _dd(name: str, args: Sequence[Arg]) -> str:
    for arg in args:
        if arg is None:
            return f"{name} with a glob or generated operand"
        if arg.startswith("of="):
            return f"{name} {arg}: writes raw blocks over a file or device"
    return ""


# fallocate's modes that change a file's content in place (truncate's kin); plain
# preallocation (``-l``, ``-o``, ``-n``) keeps every byte
_FALLOCATE_CHANGES = frozenset(
    ["punch-hole", "collapse-range", "zero-range", "insert-range", "dig-holes"]
)


def _fallocate(name: str, args: Sequence[Arg]) -> str:
    options, operands = split_options(args)
    hit = short_hits(options, "pczid") or next(
        (o for o in options if long_hits(o, _FALLOCATE_CHANGES)), None
    )
    if hit is not None:
        return f"{name} {hit}: zeroes, removes or shifts a file's bytes in place"
    if any(operand is None for operand in operands):
        return f"{name} with a glob or generated operand (a matched name could be an option)"
    return ""


def _rsync(name: str, args: Sequence[Arg]) -> str:
    options, operands = split_options(args)
    for option in options:
        if long_hits(option, _RSYNC_DELETES):
            return f"{name} {option}: deletes files at the destination or the source"
    if any(operand is None for operand in operands):
        return f"{name} with a glob or generated operand (a matched name could be an option)"
    return ""


def _crontab(name: str, args: Sequence[Arg]) -> str:
    # crontab(1): with neither a file nor -l/-e it installs its standard input as the whole
    # table (an empty one when nothing is piped): only listing and editing keep it
    user = [i + 1 for i, a in enumerate(args) if a == "-u"]  # -u USER: a value, no file
    options, operands = split_options([a for i, a in enumerate(args) if i not in user])
    if "-r" in options or operands or not {"-l", "-e", "-V"} & set(options):
        return f"{name}: removes or replaces the user's whole crontab"
    return ""


def _tar(name: str, args: Sequence[Arg]) -> str:
    options, _ = split_options(args)
    runs = next((o for o in options if long_hits(o, _TAR_RUNS)), None)
    # a first word without a dash is a cluster of old-style options (tar czf, tar xIf)
    old_style = args[0] if args and args[0] is not None and not args[0].startswith("-") else ""
    short = next((o for o in options if o in ("-I", "-F")), None) or (
        f"-{old_style}" if set(old_style) & {"I", "F"} else None
    )
    if hit := runs or short:
        return f"{name} {hit}: deletes what it archives or runs a command"
    # -P keeps a member's leading / and ../: extracted, it lands anywhere (~/.bashrc)
    absolute = next((o for o in options if o == "-P" or long_hits(o, _TAR_ANYWHERE)), None)
    if hit := absolute or (f"-{old_style}" if "P" in old_style else None):
        return f"{name} {hit}: writes members with absolute or ../ names, outside the directory"
    return ""


_TAR_ANYWHERE = frozenset(["absolute-names"])


def _unzip(name: str, args: Sequence[Arg]) -> str:
    # unzip -: keeps a member's ../ (and leading /): extracted, it lands anywhere
    options, _ = split_options(args)
    if "-:" in options:
        return f"{name} -:: writes members with ../ names, outside the directory"
    return ""


def _archiver(name: str, args: Sequence[Arg]) -> str:
    # zip -m/--move and 7z -sdel delete what they archived; zip -TT/--unzip-command runs one
    for arg in args:
        if arg is None:
            return f"{name} with a glob or generated word"
        cluster = arg[1:] if arg.startswith("-") and not arg.startswith("--") else ""
        if arg in ("--move", "-sdel", "-TT", "--unzip-command") or (
            name == "zip" and "m" in cluster and not cluster.startswith("T")
        ):
            return f"{name} {arg}: deletes what it archives or runs a command"
    return ""


def _allowed(option: str, short: frozenset[str], long: frozenset[str]) -> bool:
    if option.startswith("--"):
        return option[2:] in long
    return option[1:] in short


_TAR_RUNS = frozenset(
    [
        "remove-files",
        "to-command",
        "use-compress-program",
        "checkpoint-action",
        "info-script",
        "new-volume-script",
        "rsh-command",
    ]
)

FILE_JUDGES: dict[str, Callable[[str, Sequence[Arg]], str]] = {
    "zip": _archiver,
    "7z": _archiver,
    "7za": _archiver,
    "7zz": _archiver,
    "setfacl": _mode,
    "tar": _tar,
    "crontab": _crontab,
    "rm": _rm,
    "chmod": _mode,
    "chown": _mode,
    "chgrp": _mode,
    "dd": _dd,
    "fallocate": _fallocate,
    "rsync": _rsync,
    "unzip": _unzip,
}
