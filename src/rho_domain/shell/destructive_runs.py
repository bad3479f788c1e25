"""The destructive-program table's rows for options and settings that make a program run a
command: programs that otherwise only read, sort or fetch data (``shell.destructive_written``'s
``DATA_ONLY``), and package managers' settings that choose what their later runs run.

* rg ``--pre COMMAND``: runs the command on every file it searches (``rg --pre rm x .``
  deletes them);
* sort ``--compress-program``, split ``--filter``: run a program or a shell command on the
  data;
* wget ``--use-askpass``, an ``-e``/``--execute`` command setting ``use_askpass``, and
  ``--config`` (a wgetrc, which may set it): run a program for a password;
* wget ``-e`` setting where it writes (``output_document=``, ``dir_prefix=``), curl ``-K``
  and ``--config``, aria2c ``-i`` and ``--conf-path``: the output path is out of sight of
  the destination rule (``-e output_document=/root/.bashrc``, a config's ``output =``);
* less ``-k``, ``--lesskey-file``, ``--lesskey-src``, ``--lesskey-content``: a lesskey
  file's ``#env`` section sets ``LESSOPEN``, a command less runs on every file (seen);
* cargo ``--config``: sets a runner, a rustc wrapper or an alias (git -c's kin);
* npm, pnpm, yarn, pip, pip3 ``config set``, ``set`` or ``config edit``: writes a setting a
  later run obeys (npm's ``script-shell`` runs every script, pip's ``index-url`` chooses the
  code installed); npm, pnpm, yarn ``--script-shell``, ``--shell``, ``--node-options``,
  ``--userconfig``, ``--globalconfig`` (any setting is an option there) choose it for this run.

Long options are matched with their abbreviations (GNU getopt and wget accept unique
prefixes). ``RUNNING_JUDGES`` maps each program to its rule: ``rule(name, args) -> str``,
the reason to ask again after "always", or "".
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from rho_domain.shell.destructive_words import Arg, long_hits, short_hits, split_options


def _long_option(names: str, why: str) -> Callable[[str, Sequence[Arg]], str]:
    wanted = frozenset(names.split())

    def rule(name: str, args: Sequence[Arg]) -> str:
        options, _ = split_options(args)
        hit = next((o for o in options if long_hits(o, wanted)), None)
        return f"{name} {hit}: {why}" if hit else ""

    return rule


def _wget(name: str, args: Sequence[Arg]) -> str:
    why = "runs a program for a password (use_askpass)"
    if hit := _long_option("use-askpass config", why)(name, args):
        return hit
    for index, arg in enumerate(args):
        following = args[index + 1] if index + 1 < len(args) else ""
        if arg is None or (not arg.startswith("-e") and not long_hits(arg, _EXECUTE)):
            continue
        if arg.startswith("--"):
            value = arg.split("=", 1)[1] if "=" in arg else following
        else:
            value = arg[2:] or following
        # wgetrc ignores case, "-" and "_" in a command's name: use_askpass, useAskPass
        command = (value or "").casefold().replace("_", "").replace("-", "")
        if value is None or "askpass" in command:
            return f"{name} -e {value}: {why}"
        if command.split("=", 1)[0].strip() in _WGET_WRITES:
            return f"{name} -e {value}: {_HIDDEN} (use -O or -P)"
    return ""


def _options_file(shorts: str, longs: str) -> Callable[[str, Sequence[Arg]], str]:
    """Asks when the options come from a file (``curl -K``, ``aria2c -i``), where an output
    path (``output = ~/.bashrc``, ``dir=.git/hooks``) is out of the check's sight."""
    names = frozenset(longs.split())

    def rule(name: str, args: Sequence[Arg]) -> str:
        options, _ = split_options(args)
        hit = short_hits(options, shorts) or next((o for o in options if long_hits(o, names)), None)
        return f"{name} {hit}: {_HIDDEN} (name the output in the command)" if hit else ""

    return rule


_HIDDEN = "sets where it writes where the destination check cannot read it"
# wgetrc commands naming a file or directory wget writes (output_document, dir_prefix...)
_WGET_WRITES = frozenset(["outputdocument", "dirprefix", "logfile", "savecookies", "warcfile"])


def _less(name: str, args: Sequence[Arg]) -> str:
    options, _ = split_options(args)
    hit = next((o for o in options if o == "-k" or long_hits(o, _LESSKEY)), None)
    return (
        f"{name} {hit}: reads a lesskey file, whose #env can set LESSOPEN (a command)"
        if hit
        else ""
    )


def _package_manager(name: str, args: Sequence[Arg]) -> str:
    options, operands = split_options(args)
    verb = operands[1:2] if operands[:1] in (["config"], ["c"]) else operands[:1]
    if verb in (["set"], ["edit"]):
        return (
            f"{name} {' '.join(str(o) for o in operands[:2])}: writes a setting its later runs "
            "obey (npm's script-shell runs every script, pip's index-url chooses the code "
            "installed)"
        )
    # pnpm takes any setting as --config.NAME=value (--config.script-shell=...)
    set_ = ((o, o.replace("--config.", "--", 1)) for o in options)
    if name in _NODE_MANAGERS and (
        hit := next((o for o, given in set_ if long_hits(given, _NPM_RUNS)), None)
    ):
        return f"{name} {hit}: chooses the shell or code its scripts run"
    return ""


_EXECUTE = frozenset(["execute"])
_LESSKEY = frozenset(["lesskey-file", "lesskey-src", "lesskey-content"])
_NODE_MANAGERS = frozenset(["npm", "pnpm", "yarn"])
_NPM_RUNS = frozenset(["script-shell", "shell", "node-options", "userconfig", "globalconfig"])

RUNNING_JUDGES: dict[str, Callable[[str, Sequence[Arg]], str]] = {
    "rg": _long_option("pre", "runs a command on every file it searches"),
    "sort": _long_option("compress-program", "runs a program on its temporary files"),
    "split": _long_option("filter", "runs a shell command on every piece"),
    "wget": _wget,
    "curl": _options_file("K", "config"),
    "aria2c": _options_file("i", "input-file conf-path"),
    "less": _less,
    "cargo": _long_option("config", "sets configuration that chooses what runs (a runner)"),
    **dict.fromkeys([*_NODE_MANAGERS, "pip", "pip3"], _package_manager),
}
