"""What bash may write outside any workspace that runs later: the system's start-up and PATH
locations and a home directory's hidden entries, which the write tool never reaches (it
writes inside its workspace only), so ``write_rules.write_refusal`` does not list them.

``outside_refusal(path) -> str``, the reason a write of the absolute ``path`` asks again after
"always", or "":

* the system's configuration and installed programs: anything under ``/etc`` (login scripts
  ``/etc/profile.d``, ``/etc/bash.bashrc``, ``/etc/environment``, the loader's
  ``/etc/ld.so.preload``, cron, sudoers, systemd units, apt hooks, ``/etc/pip.conf``...),
  ``/usr``, ``/bin``, ``/sbin``, ``/lib*``, ``/boot`` and the cron and at spools
  (``/var/spool``): each runs in every later process, login or job, or is one on the PATH;
* a home directory's hidden entries (``/root/.curlrc``, ``/home/u/.wgetrc``, ``/home/u/.lesskey``,
  ``/root/.ipython/...``, ``/root/.cargo/config.toml``), anything inside them, and its ``bin``
  (on the PATH of its login shells): the shell and every tool load them by themselves, and
  no list of their names is complete (the write tool's ``home_entry_refusal``'s rule).

A relative path, or one under ``/tmp``, ``/work``, ``/srv``, ``/opt``..., is "" here.
"""

from __future__ import annotations

import posixpath

_SYSTEM_ROOTS = frozenset(["etc", "usr", "bin", "sbin", "lib", "lib32", "lib64", "libx32", "boot"])
_HOME_PARENTS = frozenset(["home", "Users"])


def outside_refusal(path: str) -> str:
    """Why writing ``path`` persists something that runs later outside the workspace, or
    "" (see the module docstring)."""
    if not path.startswith("/"):
        return ""
    parts = [p for p in posixpath.normpath(path).split("/") if p]
    if not parts:
        return ""
    if parts[0] in _SYSTEM_ROOTS or parts[:2] == ["var", "spool"]:
        return (
            f"{path} is the system's configuration or installed programs (start-up scripts, "
            "the loader's preloads, cron, the PATH), which run in later processes"
        )
    home = 1 if parts[0] == "root" else 2 if parts[0] in _HOME_PARENTS else 0
    entry = parts[home : home + 1]
    if home and entry and (entry[0].startswith(".") or entry[0] == "bin"):
        where = "/" + "/".join(parts[: home + 1])
        return (
            f"{path} is {where} or inside it, a hidden entry or the bin of a home directory "
            "(start-up files, tools' configuration, the PATH), which run by themselves"
        )
    return ""
