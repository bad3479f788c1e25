"""git in the destructive-command table: which subcommands lose work that no commit holds.

Global options are read up to the subcommand; ``-c``, ``--config-env``, ``--exec-path`` and
``--git-dir`` ask (they can define an alias or a command git runs, or name a git directory
whose config does), and so does a global option or a
subcommand this check does not know (an alias in the repository's config can run anything).

A subcommand in ``_HARMLESS`` adds to history or only reads, but for the options that run a
command (``_RUNS_COMMAND``: grep ``-O``, fetch, pull, ls-remote and clone ``--upload-pack``,
archive ``--exec``, clone and init ``--template``, clone ``-c``); the others are judged by
their own rule (``shell.destructive_git_rules``: push with ``--force``, reset
``--hard``, clean, config that writes...).

Contract: ``judge_git(args) -> str``, the reason to ask again or ""; ``git_subcommand(args)``,
the subcommand after the global options (or None).
"""

from __future__ import annotations

from collections.abc import Sequence

from rho_domain.shell.destructive_git_rules import RULES, options_hit
from rho_domain.shell.destructive_words import Arg

_GLOBAL_FLAGS = frozenset(
    [
        "-p",
        "--paginate",
        "-P",
        "--no-pager",
        "--bare",
        "--no-replace-objects",
        "--literal-pathspecs",
        "--glob-pathspecs",
        "--noglob-pathspecs",
        "--icase-pathspecs",
        "--no-optional-locks",
        "--no-lazy-fetch",
        "--version",
        "--help",
        "-h",
    ]
)
_GLOBAL_VALUED = frozenset(["-C", "--work-tree", "--namespace", "--super-prefix"])
# configuration, a program path or a git directory (with its config and hooks) git would use
_GLOBAL_RUNS = frozenset(["-c", "--config-env", "--exec-path", "--git-dir"])
_HARMLESS = frozenset(
    [
        "status",
        "log",
        "diff",
        "show",
        "blame",
        "add",
        "stage",
        "commit",
        "fetch",
        "pull",
        "init",
        "clone",
        "mv",
        "grep",
        "ls-files",
        "ls-remote",
        "ls-tree",
        "rev-parse",
        "rev-list",
        "describe",
        "shortlog",
        "show-ref",
        "cat-file",
        "format-patch",
        "apply",
        "archive",
        "help",
        "version",
        "notes",
        "cherry",
        "range-diff",
        "whatchanged",
        "count-objects",
        "fsck",
        "for-each-ref",
        "name-rev",
        "merge-base",
        "bisect",
        "remote",
        "diff-tree",
        "diff-files",
        "diff-index",
        "show-branch",
        "var",
        "verify-commit",
        "verify-tag",
        "check-ignore",
        "check-attr",
        "bundle",
        "annotate",
    ]
)


# options of subcommands that only read or add to history which run a command: a pager
# (grep -O), the other side's program (--upload-pack, archive --exec, run through a shell even
# for a local repository), a hooks template or configuration for the new repository
_RUNS_COMMAND = {
    "grep": ("O", "open-files-in-pager"),
    "clone": ("uc", "upload-pack template config"),
    "fetch": ("", "upload-pack"),
    "pull": ("", "upload-pack"),
    "ls-remote": ("", "upload-pack"),
    "archive": ("", "exec"),
    "init": ("", "template"),
}


def judge_git(args: Sequence[Arg]) -> str:
    """Why ``git args`` asks again after "always", or ""."""
    found = _subcommand(args)
    if isinstance(found, str):
        return found
    if found >= len(args):
        return ""
    sub, rest = args[found], args[found + 1 :]
    if sub in _RUNS_COMMAND:
        shorts, longs = _RUNS_COMMAND[sub]
        runs = options_hit(shorts, longs, "runs a command (a pager, a program, hooks)")(rest)
        if runs:
            return f"git {sub}: {runs}"
    if sub in _HARMLESS:
        return ""
    rule = RULES.get(sub or "")
    if rule is None:
        return f"git {sub}: a subcommand this check does not know (an alias can run anything)"
    why = rule(rest)
    return f"git {sub}: {why}" if why else ""


def git_subcommand(args: Sequence[Arg]) -> str | None:
    """The subcommand of ``git args`` after its global options; None when there is none or
    the global options cannot be read."""
    found = _subcommand(args)
    return args[found] if isinstance(found, int) and found < len(args) else None


def subcommand_index(args: Sequence[Arg]) -> int | None:
    """The index of the subcommand in ``git args``, or None (none, or unreadable options)."""
    found = _subcommand(args)
    return found if isinstance(found, int) and found < len(args) else None


def _subcommand(args: Sequence[Arg]) -> int | str:
    """The index of the subcommand in ``args`` (``len(args)`` when there is none), or the
    reason to ask that a global option gives."""
    i = 0
    while i < len(args):
        arg = args[i]
        if arg is None:
            return "git with a glob or generated word before its subcommand"
        if not arg.startswith("-"):
            break
        name = arg.split("=", 1)[0]
        if name in _GLOBAL_RUNS or arg.startswith("-c"):
            return f"git {name}: sets configuration or a path that can make git run commands"
        if name in _GLOBAL_VALUED:
            i += 1 if "=" in arg else 2
        elif arg in _GLOBAL_FLAGS:
            i += 1
        else:
            return f"git {arg}: a global option this check does not know"
    return i
