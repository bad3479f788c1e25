"""Listers that look through a link met while walking without following it: ls and tree.

Without ``-L``/``-l`` neither follows a link, but both stat its target for some outputs, and
what they print then tells whether a file out of reach (``l-dir -> <outside>``,
``l-gone -> <outside>/missing``) exists and what it is, which ``stat -L`` is refused for.

* GNU ls (coreutils 9.1) stats a met link's target only for the ``file-type`` and
  ``classify`` indicator styles (``-F``, ``--classify``, ``--indicator-style=``; ``--file-type``
  is not in the allowlist), for ``--group-directories-first`` (a link to a directory sorts with
  the directories, long format or not), and when colours ask for it (``LS_COLORS``'
  ``ln=target``, ``or=``, ``mi=``). ``-L``/``--dereference`` follow and are refused in
  ``programs``; ``-H`` follows operands, which are words; ``-p`` never looks at a target. The
  list is complete: each option of the allowlist, alone and with ``-l``, printed the same in a
  workspace whose links lead to files and directories and in one where the same links lead
  nowhere, but these. ``--color`` stays: restricted commands start with no ``LS_COLORS``
  (``environment``), and ls's built-in colours set no ``or`` nor ``mi`` and ``ln`` is not
  ``target`` (``--color=always -l`` colours ``l-gone`` as it does ``l-dir``).
* tree (2.1) stats every met link's target and counts a link to a directory as a directory.
  Each option that shows the difference is refused (``-d``, ``--prune``, ``-F``, ``-C`` (an
  orphan's colour; the bash tool drops escapes today, this does not lean on it),
  ``--dirsfirst``, ``-H``'s ``href="l-dir/"``); the report line that counts them (in every
  output format, ``-J``, ``-X``, ``--du`` too) is left out by ``--noreport``, which the harness
  always adds (``machine_programs``). ``-P`` and ``--matchdirs`` stay: tree 2.1 filters a
  link to a directory by its name, as it does a file (a real directory it keeps). The same
  comparison over tree's allowlist, with ``--noreport``, found only these (and ``-l``).
"""

from __future__ import annotations

from rho_domain.errors import CommandRefused
from rho_domain.shell.options import Parsed

_LS_NEVER = frozenset({"never", "no", "none"})
_LS_TARGET_STYLES = frozenset({"classify", "file-type"})
_TREE_THROUGH = {
    "d": "-d",
    "prune": "--prune",
    "F": "-F",
    "C": "-C",
    "dirsfirst": "--dirsfirst",
    "H": "-H",
}


def _ls_refusal(parsed: Parsed) -> str | None:
    for name, value in parsed.options:
        if name in ("F", "classify") and value not in _LS_NEVER:
            return "-F (--classify)" if name == "F" else "--classify"
        if name == "indicator-style" and value in _LS_TARGET_STYLES:
            return f"--indicator-style={value}"
        if name == "group-directories-first":
            return "--group-directories-first"
    return None


def check_link_targets(name: str, parsed: Parsed) -> None:
    """Refuse an ls or tree option that stats the target of a link met while walking."""
    option: str | None = None
    if name == "ls":
        option = _ls_refusal(parsed)
    elif name == "tree":
        option = next((_TREE_THROUGH[o] for o, _ in parsed.options if o in _TREE_THROUGH), None)
    if option is not None:
        raise CommandRefused(
            f"{name}: {option} looks at the target of each symbolic link met while walking "
            "(whether a file out of reach or secret exists and what it is, which no word "
            f"names); drop it{' (-p marks directories alone)' if name == 'ls' else ''}, and "
            "name a link's target directly to look at it"
        )
