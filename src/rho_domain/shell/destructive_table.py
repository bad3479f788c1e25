"""The table of destructive programs: which program, with which options, asks again.

Used by ``shell.destructive`` on words already parsed by the shell parser (quotes removed,
escapes decoded). A word is ``None`` when its value is not known before it runs: a glob, the
``{}`` of ``find -exec`` or what ``xargs`` appends. An unknown word can be any name, and any
option too (a file called ``-rf`` matched by ``*`` is an option to rm).

Options are read the way GNU getopt reads them: short flags combine (``-fr`` is ``-f -r``),
options may follow operands, ``--`` ends them, and a long option may be abbreviated
(``--rec`` is ``--recursive``). So where an option makes a program destructive, either every
option outside a short allowlist asks (rm, chmod), or a long option asks when it is a prefix
of a destructive name or starts with one (rsync, git) — never one spelling at a time.

The table (each row: the program, then when it asks again):

* rm: any option but ``-i -I -d -v`` and their long names (so ``-r``, ``-f``, ``--rec``,
  ``--interactive=never``), or an unknown operand (a glob);
* chmod, chown, chgrp: any option but ``-c -f -v -h``, their long names, ``--reference=``
  and ``--from=`` (so ``-R``; a mode written ``-x`` asks too);
* dd: an ``of=`` operand, or an unknown word;
* rsync: ``--delete*``, ``--del``, ``--remove-source-files`` or an abbreviation of them, or an
  unknown word;
* crontab: ``-r``, or a file operand (it replaces the whole table);
* tar: ``--remove-files`` (deletes what it archived), ``--to-command``,
  ``--use-compress-program``/``-I``, ``--checkpoint-action``, ``--info-script``/``-F``,
  ``--new-volume-script``, ``--rsh-command`` (run commands), or an abbreviation of them;
* docker, podman, kubectl, oc, helm, terraform, tofu, pulumi, aws, gcloud, az, gh, glab,
  heroku, flyctl, npm, pip, brew, apt, apt-get, yum, dnf: an operand that deletes (``delete``,
  ``destroy``, ``prune``, ``rm``, ``rmi``, ``purge``, ``uninstall``, ``remove``, ``rb``,
  ``down``, ``delete-*``, ``terminate-*``...) or a ``-destroy`` option;
* shred, truncate, wipefs, wipe, mkfs, mkfs.*, mke2fs, mkswap, fdisk, sfdisk, cfdisk, gdisk,
  sgdisk, parted, blkdiscard, srm, rimraf, shutdown, reboot, halt, poweroff, pkill, killall,
  killall5, userdel, groupdel, deluser, delgroup, chattr: always;
* kill: a pid of ``-1``, ``0`` or ``-PGID`` (every process of the user or of a group);
  systemctl: stop, kill, disable, mask, isolate, poweroff...; iptables, ip6tables, nft:
  flush or delete; redis-cli: flushall, flushdb, del, shutdown, config, eval...; setfacl: as
  chmod; zip ``-m``/``--move``, 7z ``-sdel`` (delete what they archived), zip ``-TT`` (runs a
  command);
* git: see ``shell.destructive_git``.

Contract: ``program_name(word)``, ``judge_program(name, args) -> str`` (the reason, or "").
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from rho_domain.shell.destructive_git import judge_git
from rho_domain.shell.destructive_words import Arg, long_hits, split_options

ALWAYS = frozenset(
    [
        "shred",
        "truncate",
        "wipefs",
        "mkfs",
        "mke2fs",
        "mkswap",
        "fdisk",
        "sfdisk",
        "cfdisk",
        "gdisk",
        "sgdisk",
        "parted",
        "blkdiscard",
        "srm",
        "wipe",
        "rimraf",
        "shutdown",
        "reboot",
        "halt",
        "poweroff",
        "pkill",
        "killall",
        "killall5",
        "userdel",
        "groupdel",
        "deluser",
        "delgroup",
        "chattr",
    ]
)
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


def program_name(word: Arg) -> str | None:
    """The program a command word runs, as the table names it: the last path component,
    case-folded (``/bin/rm`` and ``RM`` on a case-insensitive file system are rm); None
    for an unknown word."""
    if word is None:
        return None
    return word.rsplit("/", 1)[-1].casefold()


def is_listed(name: str | None) -> bool:
    """True when ``name`` has a row in the table."""
    return name is not None and (name in _JUDGES or name in ALWAYS or name.startswith("mkfs."))


def judge_program(name: str, args: Sequence[Arg]) -> str:
    """Why ``name args`` asks again after "always", or "" when the table lets it run."""
    if name in ALWAYS or name.startswith("mkfs."):
        return f"{name} destroys data or stops the machine by design"
    judge = _JUDGES.get(name)
    return judge(name, args) if judge is not None else ""


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


def _rsync(name: str, args: Sequence[Arg]) -> str:
    options, operands = split_options(args)
    for option in options:
        if long_hits(option, _RSYNC_DELETES):
            return f"{name} {option}: deletes files at the destination or the source"
    if any(operand is None for operand in operands):
        return f"{name} with a glob or generated operand (a matched name could be an option)"
    return ""


def _git(name: str, args: Sequence[Arg]) -> str:
    return judge_git(args)


def _crontab(name: str, args: Sequence[Arg]) -> str:
    options, operands = split_options(args)
    if "-r" in options or operands:
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
    return ""


def _deleting_cli(name: str, args: Sequence[Arg]) -> str:
    _, operands = split_options(args)
    for operand in operands:
        if operand is None:
            continue
        verb = operand.casefold()
        if verb in _DELETING_VERBS or verb.startswith(("delete-", "terminate-", "remove-")):
            return f"{name} {operand}: deletes resources"
    destroy = ("-destroy", "--destroy")  # terraform's single-dash long option
    if hit := next((a for a in args if a is not None and a.split("=", 1)[0] in destroy), None):
        return f"{name} {hit}: deletes resources"
    return ""


def _kill(name: str, args: Sequence[Arg]) -> str:
    # a pid of -1 signals every process the user may signal, 0 or -PGID a whole group
    for arg in args:
        if arg is None:
            return f"{name} with a glob or generated operand"
        if arg == "0" or (arg.startswith("-") and arg[1:].isdigit() and not _is_signal(args, arg)):
            return f"{name} {arg}: signals every process of a group or of the user"
    return ""


def _is_signal(args: Sequence[Arg], arg: str) -> bool:
    """``kill -9 PID``: a first ``-NUMBER`` before any operand is the signal, not a group."""
    first = next((a for a in args if a is not None and a.startswith("-")), None)
    operands_before = any(
        a is not None and not a.startswith("-") for a in args[: list(args).index(arg)]
    )
    return arg == first and not operands_before and arg != "-1"


def _verbs(verbs: frozenset[str], why: str) -> Callable[[str, Sequence[Arg]], str]:
    """The program asks when an operand (or an option, for ``iptables -F``) is one of
    ``verbs``, or unknown."""

    def rule(name: str, args: Sequence[Arg]) -> str:
        for arg in args:
            if arg is None:
                return f"{name} with a glob or generated word"
            if arg.casefold() in verbs:
                return f"{name} {arg}: {why}"
        return ""

    return rule


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
_DELETING_VERBS = frozenset(
    [
        "delete",
        "destroy",
        "prune",
        "rm",
        "rmi",
        "purge",
        "uninstall",
        "unpublish",
        "remove",
        "autoremove",
        "rb",
        "down",
        "kill",
        "drop",
        "erase",
        "wipe",
        "nuke",
        "reset",
    ]
)
_DELETING_CLIS = [
    "docker",
    "podman",
    "kubectl",
    "oc",
    "helm",
    "terraform",
    "tofu",
    "pulumi",
    "aws",
    "gcloud",
    "az",
    "gh",
    "glab",
    "heroku",
    "flyctl",
    "npm",
    "pip",
    "pip3",
    "brew",
    "apt",
    "apt-get",
    "yum",
    "dnf",
]

_SERVICE_VERBS = frozenset(
    ["stop", "kill", "disable", "mask", "isolate", "poweroff", "reboot", "halt", "kexec"]
)
_FIREWALL_VERBS = frozenset(["-f", "--flush", "-x", "--delete-chain", "-d", "--delete", "flush"])
_REDIS_VERBS = frozenset(
    ["flushall", "flushdb", "del", "unlink", "shutdown", "config", "eval", "script", "debug"]
)

_JUDGES: dict[str, Callable[[str, Sequence[Arg]], str]] = {
    **dict.fromkeys(_DELETING_CLIS, _deleting_cli),
    "kill": _kill,
    "systemctl": _verbs(_SERVICE_VERBS, "stops or disables services"),
    **dict.fromkeys(
        ["iptables", "ip6tables", "nft"], _verbs(_FIREWALL_VERBS, "deletes firewall rules")
    ),
    "redis-cli": _verbs(_REDIS_VERBS, "deletes keys, stops or reconfigures the server"),
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
    "rsync": _rsync,
    "git": _git,
}
