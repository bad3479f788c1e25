"""git's subcommands that lose work no commit holds, each with its own rule.

``RULES`` maps a subcommand to a function of the words after it, which returns why that
command asks again after "always", or "" (``shell.destructive_git.judge_git`` reads git's
global options first and prefixes the subcommand to the reason).

Subcommands, and when they ask again:

* push: ``-f``, ``-d``, ``--force*``, ``--mirror``, ``--delete``, ``--prune``,
  ``--receive-pack``, ``--exec`` (or an abbreviation), a ``+refspec`` or ``:refspec``, or an
  unknown word;
* reset: ``--hard``, ``--merge``; clean, prune: unless ``-n`` / ``--dry-run``;
* checkout: ``-f``, ``-B``, ``--force``, ``--ours``, ``--theirs``, ``--merge``, ``--``, ``.``
  or more than one operand (paths whose uncommitted changes it discards);
* switch: ``-f``, ``-C``, ``--force``, ``--discard-changes``, ``--force-create``;
* restore: unless ``--staged`` without ``--worktree`` (it overwrites working-tree files);
* branch: ``-D``, ``-f``, ``-M``, ``-C``, ``--force``; rm: ``-f``, ``--force``;
* stash: ``drop``, ``clear``; reflog: ``expire``, ``delete``; gc: ``--prune``;
  update-ref: ``-d``, ``--delete``; worktree: ``remove`` with ``-f`` / ``--force``;
* rebase: ``-x``, ``--exec``; submodule: ``foreach`` (shell commands this check cannot see),
  ``deinit -f``/``--all`` (deletes submodule working trees); tag: ``-d``, ``--delete``;
* rebase, merge, cherry-pick, revert, am: ``--abort``/``--quit`` (the resolution in progress);
* config: anything but reading (``--get*``, ``--list``, ``-l``, ``get``, ``list``, one
  name): a written setting (an alias, core.pager, core.hooksPath) runs commands later;
* filter-branch, filter-repo: always.

A subcommand that is not here and not harmless asks in ``judge_git`` (an alias can run
anything).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from rho_domain.shell.destructive_words import Arg, long_hits, short_hits, split_options

_CONFIG_READS = frozenset(
    [
        "--get",
        "--get-all",
        "--get-regexp",
        "--get-urlmatch",
        "--get-color",
        "--get-colorbool",
        "--list",
        "-l",
    ]
)


def _push(rest: Sequence[Arg]) -> str:
    options, operands = split_options(rest)
    names = frozenset(
        [
            "force",
            "force-with-lease",
            "force-if-includes",
            "mirror",
            "delete",
            "prune",
            "receive-pack",
            "exec",
        ]
    )
    if hit := short_hits(options, "fd") or next((o for o in options if long_hits(o, names)), None):
        return f"{hit} rewrites or deletes remote branches"
    for operand in operands:
        if operand is None:
            return "a glob or generated refspec"
        if operand.startswith(("+", ":")):
            return f"refspec {operand!r} forces or deletes a remote branch"
    return ""


def options_hit(shorts: str, longs: str, why: str) -> Callable[[Sequence[Arg]], str]:
    """A rule that asks, with ``why``, when a short option in ``shorts`` or a long one in
    ``longs`` (or its abbreviation) is given."""
    names = frozenset(longs.split())

    def rule(rest: Sequence[Arg]) -> str:
        options, _ = split_options(rest)
        hit = short_hits(options, shorts) or next((o for o in options if long_hits(o, names)), None)
        return f"{hit} {why}" if hit else ""

    return rule


def _unless_dry_run(why: str) -> Callable[[Sequence[Arg]], str]:
    def rule(rest: Sequence[Arg]) -> str:
        options, _ = split_options(rest)
        return "" if "-n" in options or "--dry-run" in options else why

    return rule


def _first_operand(words: str, why: str) -> Callable[[Sequence[Arg]], str]:
    chosen = frozenset(words.split())

    def rule(rest: Sequence[Arg]) -> str:
        _, operands = split_options(rest)
        first = operands[0] if operands else ""
        return f"{first} {why}" if first is None or first in chosen else ""

    return rule


def _checkout(rest: Sequence[Arg]) -> str:
    words = list(rest)
    for valued in ("-b", "--orphan"):  # the new branch's name is not a path
        if valued in words and words.index(valued) + 1 < len(words):
            del words[words.index(valued) + 1]
    if "--" in words:
        return "-- discards the uncommitted changes of the paths that follow"
    if why := options_hit("fB", "force ours theirs merge", "discards uncommitted changes")(words):
        return why
    _, operands = split_options(words)
    if "." in operands or None in operands or len(operands) > 1:
        return "paths: discards their uncommitted changes"
    return ""


def _restore(rest: Sequence[Arg]) -> str:
    options, _ = split_options(rest)
    staged = "-S" in options or "--staged" in options
    worktree = "-W" in options or "--worktree" in options
    return "" if staged and not worktree else "overwrites working-tree files, losing their changes"


def _worktree(rest: Sequence[Arg]) -> str:
    options, operands = split_options(rest)
    forced = "-f" in options or any(long_hits(o, frozenset({"force"})) for o in options)
    return (
        "remove --force deletes a worktree with changes"
        if (operands[:1] == ["remove"] and forced)
        else ""
    )


def _config(rest: Sequence[Arg]) -> str:
    options, operands = split_options(rest)
    if any(o.split("=", 1)[0] in _CONFIG_READS for o in options):
        return ""
    if operands[:1] in (["get"], ["list"]) or (not options and len(operands) == 1):
        return ""
    return "writes settings (alias, core.pager, core.hooksPath...) that later git commands run"


def _always(why: str) -> Callable[[Sequence[Arg]], str]:
    return lambda rest: why


def _submodule(rest: Sequence[Arg]) -> str:
    _, operands = split_options(rest)
    if operands[:1] == ["foreach"] or None in operands[:1]:
        return "foreach runs a shell command in every submodule"
    if operands[:1] == ["deinit"]:
        return options_hit("f", "force all", "deinit deletes submodule working trees")(rest)
    return ""


def _abort_or(rule: Callable[[Sequence[Arg]], str]) -> Callable[[Sequence[Arg]], str]:
    """``--abort`` throws away the conflict resolution in progress (and changes made since
    the operation started); otherwise ``rule``."""
    aborts = options_hit("", "abort quit", "throws away the resolution in progress")
    return lambda rest: aborts(rest) or rule(rest)


def _nothing(rest: Sequence[Arg]) -> str:
    return ""


RULES: Mapping[str, Callable[[Sequence[Arg]], str]] = {
    "push": _push,
    "reset": options_hit("", "hard merge", "discards uncommitted changes"),
    "clean": _unless_dry_run("deletes untracked files"),
    "prune": _unless_dry_run("deletes unreachable objects"),
    "checkout": _checkout,
    "switch": options_hit("fC", "force discard-changes force-create", "discards changes"),
    "restore": _restore,
    "branch": options_hit("DfMC", "force", "deletes or overwrites a branch"),
    "rm": options_hit("f", "force", "removes files with uncommitted changes"),
    "stash": _first_operand("drop clear", "deletes stashed changes"),
    "reflog": _first_operand("expire delete", "deletes reflog entries (the way back)"),
    "gc": options_hit("", "prune", "deletes unreachable objects"),
    "update-ref": options_hit("d", "delete", "deletes a ref"),
    "worktree": _worktree,
    "rebase": _abort_or(options_hit("x", "exec", "runs a shell command per commit")),
    "merge": _abort_or(_nothing),
    "cherry-pick": _abort_or(_nothing),
    "revert": _abort_or(_nothing),
    "am": _abort_or(_nothing),
    "tag": options_hit("d", "delete", "deletes a tag (a tag not pushed has no copy)"),
    "config": _config,
    "submodule": _submodule,
    "filter-branch": _always("rewrites the whole history"),
    "filter-repo": _always("rewrites the whole history"),
}
