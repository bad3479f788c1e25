"""The destructive-program table's rows for a system's package managers: what installs or
upgrades the machine's own programs asks.

``apt-get install jq`` ran unasked, as ordinary work from the machine's configured sources.
But it changes the machine outside the workspace, as root when it runs: a package's
maintainer scripts run as root at once, and what it installs lands on the PATH every later
command searches (``npm install -g`` and ``pip install --user`` ask for the same reason). So
installing, upgrading or reinstalling through one asks, naming the verb:

* apt, apt-get, aptitude: ``install``, ``reinstall``, ``upgrade``, ``full-upgrade``,
  ``dist-upgrade``, ``build-dep``, ``satisfy`` (anywhere among the operands: ``apt-get -o
  X=y install jq``); dpkg ``-i``/``--install``, ``--unpack``; rpm ``-i``, ``-U``, ``-F``
  (and their long names, ``-ivh`` clusters);
* yum, dnf, microdnf, tdnf, zypper, apk, xbps-install, pkg, pkgin, port, snap, flatpak,
  brew: their install and upgrade verbs (``in``, ``up``, ``dup``, ``add``, ``refresh``...);
* pacman and its helpers (yay, paru): ``-S`` but its searches and listings (``-Ss``,
  ``-Si``, ``-Sl``, ``-Sg``, ``-Sp``), ``-U``; ``yay``/``paru`` alone (a whole upgrade);
  emerge: any operand but with ``--search``, ``--info``, ``--pretend``.

Refreshing the lists (``apt-get update``, ``dnf makecache``), searching and showing run
unasked; removals are ``destructive_services``' rows.

Contract: ``SYSTEM_INSTALL_JUDGES`` maps each program to ``rule(name, args) -> str``, the
reason to ask again, or "".
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from rho_domain.shell.destructive_words import Arg, split_options

_WHY = (
    "installs or upgrades the machine's programs, outside the workspace, on the PATH later "
    "commands search (its package scripts run at once, as root under sudo)"
)


def _verbs(words: str) -> Callable[[str, Sequence[Arg]], str]:
    """Asks when an operand is one of ``words`` (or unknown: a glob may be one)."""
    verbs = frozenset(words.split())

    def rule(name: str, args: Sequence[Arg]) -> str:
        _, operands = split_options(args)
        hit = next((o for o in operands if o is None or o in verbs), "")
        if hit is None:
            return f"{name} with a glob or generated word (it may be an install): {_WHY}"
        return f"{name} {hit}: {_WHY}" if hit else ""

    return rule


def _letters(shorts: str, longs: str) -> Callable[[str, Sequence[Arg]], str]:
    """Asks for a short option among ``shorts`` in any cluster (``rpm -ivh``) or a long one
    among ``longs``."""
    names = frozenset(longs.split())

    def rule(name: str, args: Sequence[Arg]) -> str:
        for word in args:
            if word is None:
                continue
            if word.startswith("--"):
                if word[2:].split("=", 1)[0] in names:
                    return f"{name} {word}: {_WHY}"
            elif word.startswith("-") and set(word[1:]) & set(shorts):
                return f"{name} {word}: {_WHY}"
        return ""

    return rule


def _pacman(name: str, args: Sequence[Arg]) -> str:
    """Ask for pacman -S (but its searches and listings) and -U; yay and paru alone upgrade all."""
    if name in ("yay", "paru") and not args:
        return f"{name}: {_WHY}"
    for word in args:
        if word is None:
            continue
        letters = set(word[1:]) if word.startswith("-") and not word.startswith("--") else set()
        if word in ("--sync", "--upgrade") or "U" in letters:
            return f"{name} {word}: {_WHY}"
        if "S" in letters and not letters & set("silgpc"):
            return f"{name} {word}: {_WHY}"
    return ""


def _any(name: str, args: Sequence[Arg]) -> str:
    _, operands = split_options(args)
    return f"{name} {operands[0] or '(a glob)'}: {_WHY}" if operands else ""


def _emerge(name: str, args: Sequence[Arg]) -> str:
    options, operands = split_options(args)
    looks = {"--search", "--info", "--pretend", "-s", "-p", "--searchdesc", "-S"}
    if operands and not looks & set(options):
        return f"{name} {operands[0] or '(a glob)'}: {_WHY}"
    return ""


_APT = "install reinstall upgrade full-upgrade dist-upgrade build-dep satisfy"
_RPM_FAMILY = (
    "install reinstall upgrade update localinstall groupinstall downgrade distro-sync swap "
    "in up dup dist-upgrade patch add fix selfupdate refresh"
)

SYSTEM_INSTALL_JUDGES: dict[str, Callable[[str, Sequence[Arg]], str]] = {
    **dict.fromkeys(["apt", "apt-get", "aptitude"], _verbs(_APT)),
    "dpkg": _letters("i", "install unpack"),
    "rpm": _letters("iUF", "install upgrade freshen reinstall"),
    **dict.fromkeys(
        [
            "yum",
            "dnf",
            "microdnf",
            "tdnf",
            "zypper",
            "apk",
            "pkg",
            "pkgin",
            "port",
            "snap",
            "flatpak",
            "brew",
        ],
        _verbs(_RPM_FAMILY),
    ),
    "xbps-install": _any,
    **dict.fromkeys(["pacman", "yay", "paru"], _pacman),
    "emerge": _emerge,
}
