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
* fallocate: ``-p -c -z -i -d`` and their long names (``--punch-hole``...: they zero,
  remove or shift bytes in place), or an unknown word;
* rsync: ``--delete*``, ``--del``, ``--remove-source-files`` or an abbreviation of them, or an
  unknown word;
* crontab: ``-r``, a file operand, or neither a file nor ``-l``/``-e`` (it installs standard
  input, even an empty one, as the whole table);
* tar: ``--remove-files`` (deletes what it archived), ``--to-command``,
  ``--use-compress-program``/``-I``, ``--checkpoint-action``, ``--info-script``/``-F``,
  ``--new-volume-script``, ``--rsh-command`` (run commands), or an abbreviation of them;
  ``-P``/``--absolute-names`` (members land outside the directory); unzip: ``-:`` (the same);
* docker, podman, kubectl, oc, helm, terraform, tofu, pulumi, aws, gcloud, az, gh, glab,
  heroku, flyctl, npm, pip, brew, apt, apt-get, yum, dnf, and the other package managers,
  storage and cloud CLIs of ``destructive_services._DELETING_CLIS`` (snap, gem, cargo, conda,
  dpkg, rclone, gsutil, bq, docker-compose, virsh...): an operand that deletes (``delete``,
  ``destroy``, ``prune``, ``rm``, ``rmi``, ``purge``, ``uninstall``, ``remove``, ``rb``,
  ``down``, ``del``, ``drain``, ``delete-*``, ``terminate-*``...; rclone's ``sync``,
  ``move``), an option that deletes (``--delete*``, ``--prune``, ``--purge``, ``--remove*``,
  ``-destroy``; dpkg ``-r``/``-P``, gsutil ``-d``), a count set to zero (``kubectl scale
  --replicas=0``, ``docker service scale web=0``, ``--desired-count 0``: every instance stops);
* dropdb, dropuser: always; mysqladmin: drop, shutdown, kill; pg_ctl: stop, kill;
* shred, truncate, wipefs, wipe, mkfs, mkfs.*, mke2fs, mkswap, fdisk, sfdisk, cfdisk, gdisk,
  sgdisk, parted, blkdiscard, srm, rimraf, shutdown, reboot, halt, poweroff, pkill, killall,
  killall5, userdel, groupdel, deluser, delgroup, chattr: always;
* kill: a pid of ``-1``, ``0`` or ``-PGID`` (every process of the user or of a group);
  systemctl: stop, kill, disable, mask, isolate, poweroff...; iptables, ip6tables, nft:
  flush or delete; redis-cli: flushall, flushdb, del, shutdown, config, eval...; setfacl: as
  chmod; zip ``-m``/``--move``, 7z ``-sdel`` (delete what they archived), zip ``-TT`` (runs a
  command);
* rg ``--pre``, sort ``--compress-program``, split ``--filter``, wget ``--use-askpass``
  (they run a command), npm, pnpm, yarn, pip ``config set`` (a setting later runs obey):
  ``destructive_runs.py``;
* npm ``-g``, pip ``install --user``, ``cargo install``, ``go install``, ``pipx install``...
  (a program installed on the PATH, outside the workspace): ``destructive_installs.py``;
  ``cabal install``, ``gh extension install``, ``helm plugin install``, ``brew tap``,
  ``corepack enable``... (anyone's program where later commands run it):
  ``destructive_tool_installs.py``;
* ``apt-get install``, ``dnf install``, ``pacman -S``, ``dpkg -i``, ``brew install``... (the
  machine's programs, outside the workspace): ``destructive_system_installs.py``;
* go ``-exec``, bazel ``--run_under``, gcc ``-wrapper``, cmake ``-D..._LAUNCHER=``... (an
  option whose value is a program it runs): ``destructive_program_options.py``;
* git: see ``shell.destructive_git``.

The rows of programs that change files are ``destructive_files.py``'s (``FILE_JUDGES``), those
of programs that delete resources or stop services ``destructive_services.py``'s
(``SERVICE_JUDGES``); the programs that always ask (``ALWAYS``) and the lookup are here.

Contract: ``program_name(word)``, ``judge_program(name, args) -> str`` (the reason, or "").
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from rho_domain.shell.destructive_files import FILE_JUDGES
from rho_domain.shell.destructive_git import judge_git
from rho_domain.shell.destructive_installs import INSTALL_JUDGES
from rho_domain.shell.destructive_program_options import PROGRAM_OPTION_JUDGES
from rho_domain.shell.destructive_runs import RUNNING_JUDGES
from rho_domain.shell.destructive_services import SERVICE_JUDGES
from rho_domain.shell.destructive_system_installs import SYSTEM_INSTALL_JUDGES
from rho_domain.shell.destructive_tool_installs import TOOL_INSTALL_JUDGES
from rho_domain.shell.destructive_words import Arg

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
        "dropdb",
        "dropuser",
    ]
)


def program_name(word: Arg) -> str | None:
    """The program a command word runs, as the table names it: the last path component,
    case-folded (``/bin/rm`` and ``RM`` on a case-insensitive file system are rm), a GNU
    tool's ``g`` name or uutils' ``uu-`` one as the tool (``grm`` is rm), a versioned pip
    (``pip3.12``) as pip; None for an unknown word."""
    if word is None:
        return None
    name = word.rsplit("/", 1)[-1].casefold()
    if _versioned_pip(name):  # pip3.12, pip-3.11: the pip of one Python
        return "pip"
    for prefix in _ALIAS_PREFIXES:  # grm, gsed (Homebrew's GNU tools), uu-rm (uutils)
        if name.startswith(prefix) and name[len(prefix) :] in _ALIASED:
            return name[len(prefix) :]
    return name


def _versioned_pip(name: str) -> bool:
    version = name[3:].lstrip("-")
    return name.startswith("pip") and version not in ("", "3") and set(version) <= _VERSION


_VERSION = frozenset("0123456789.")


# The GNU tools Homebrew installs with a ``g`` (grm, gcp, gsed, gtar, gfind, gxargs...) and
# uutils' coreutils (uu-rm): the program of the same name, whatever the table says of it
_ALIAS_PREFIXES = ("g", "uu-", "uu_")
_ALIASED = frozenset(
    ["rm", "cp", "mv", "ln", "install", "dd", "shred", "truncate", "chmod", "chown", "chgrp",
     "tee", "sort", "split", "sed", "tar", "find", "xargs", "rmdir", "mkdir", "touch", "env",
     "nice", "timeout", "nohup", "stdbuf", "chroot", "fallocate", "cat", "head", "tail"]
)  # fmt: skip


def is_listed(name: str | None) -> bool:
    """True when ``name`` has a row in the table."""
    return name is not None and (name in _JUDGES or name in ALWAYS or name.startswith("mkfs."))


def judge_program(name: str, args: Sequence[Arg]) -> str:
    """Why ``name args`` asks again after "always", or "" when the table lets it run."""
    if name in ALWAYS or name.startswith("mkfs."):
        return f"{name} destroys data or stops the machine by design"
    judge = _JUDGES.get(name)
    return judge(name, args) if judge is not None else ""


def _git(name: str, args: Sequence[Arg]) -> str:
    return judge_git(args)


_Judge = Callable[[str, Sequence[Arg]], str]


def _both(first: _Judge | None, second: _Judge) -> _Judge:
    if first is None:
        return second
    return lambda name, args: first(name, args) or second(name, args)


_JUDGES: dict[str, _Judge] = {**SERVICE_JUDGES, **FILE_JUDGES, "git": _git}
for _rules in (
    RUNNING_JUDGES,
    INSTALL_JUDGES,
    TOOL_INSTALL_JUDGES,
    SYSTEM_INSTALL_JUDGES,
    PROGRAM_OPTION_JUDGES,
):
    _JUDGES.update({name: _both(_JUDGES.get(name), rule) for name, rule in _rules.items()})
