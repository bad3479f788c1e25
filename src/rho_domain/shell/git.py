"""git in the restricted shell: read-only subcommands, each with its own option allowlist.

git's global options that change where config or programs come from (``-c``,
``--config-env``, ``--exec-path``, ``--git-dir``, ``--work-tree``, ``-p``) are refused, and every
subcommand accepts only listed long options spelled in full, which also neutralises git's
abbreviated long options (``--upload-pa``). Independently of what the model writes, the
harness runs git with ``HARDENING`` prepended: a cloned repository's own config is
attacker-controlled (fsmonitor, hooks, external diff, textconv, pager, gpg program).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from rho_domain.errors import CommandRefused
from rho_domain.secrets import DEFAULT_POLICY
from rho_domain.shell.git_revs import (
    blame_paths,
    history_paths,
    split_rev_path,
    tree_path_refusal,
)
from rho_domain.shell.git_tree_list import recursive_listing_refusal, tree_list_words
from rho_domain.shell.options import OptionSpec, Parsed, spec, split_options
from rho_domain.shell.rebuild import rebuild_in_order

HARDENING: tuple[str, ...] = (
    "-c", "core.fsmonitor=",
    "-c", "core.hooksPath=/dev/null",
    "-c", "core.pager=cat",
    "-c", "diff.external=",
    "-c", "core.sshCommand=false",
    "-c", "core.askPass=",
    "-c", "credential.helper=",
    "-c", "protocol.allow=never",
    "-c", "gpg.program=false",
    "-c", "gpg.ssh.program=false",
    "-c", "gpg.x509.program=false",
    "-c", "diff.autoRefreshIndex=false",
    "--no-optional-locks",
)  # fmt: skip

_REVS = "all branches tags remotes first-parent merges no-merges reverse topo-order date-order"
_REVS += " author-date-order full-history ancestry-path left-right cherry-pick boundary no-walk"
_REVS += " simplify-by-decoration source walk-reflogs not"
_REVS_VALUED = "since until after before author committer grep max-count skip"
_DIFF = "stat shortstat numstat name-only name-status patch no-patch raw summary dirstat"
_DIFF += " ignore-all-space ignore-space-change ignore-blank-lines minimal patience histogram"
_DIFF += " no-color full-index binary no-renames find-renames find-copies cached staged"
_DIFF += " ignore-cr-at-eol ignore-space-at-eol compact-summary exit-code quiet check"
_DIFF += " no-prefix text merge-base"
_DIFF_VALUED = "diff-filter unified word-diff-regex relative abbrev stat-width inter-hunk-context"
_DIFF_OPTIONAL = "color word-diff color-words color-moved dirstat stat"
_LOG_FLAGS = "oneline graph abbrev-commit no-abbrev-commit relative-date decorate-refs"
_LOG_FLAGS += " no-decorate follow mailmap log-size regexp-ignore-case extended-regexp"
_LOG_FLAGS += " fixed-strings all-match invert-grep pickaxe-all pickaxe-regex"
_LOG_VALUED = "format date decorate-refs-exclude grep-reflog"
_LOG_OPTIONAL = "pretty decorate abbrev"

SUBCOMMANDS: dict[str, OptionSpec] = {
    "status": spec(
        "sbvzu",
        "",
        "short branch long show-stash ahead-behind no-ahead-behind renames no-renames verbose",
        "",
        "porcelain untracked-files ignored column",
    ),
    "log": spec(
        "pusiEFzMC",
        "nSGL",
        f"{_REVS} {_DIFF} {_LOG_FLAGS}",
        f"{_REVS_VALUED} {_DIFF_VALUED} {_LOG_VALUED}",
        f"{_DIFF_OPTIONAL} {_LOG_OPTIONAL}",
        numeric=True,
    ),
    "show": spec(
        "pusMC",
        "SG",
        f"{_DIFF} {_LOG_FLAGS}",
        f"{_DIFF_VALUED} {_LOG_VALUED}",
        f"{_DIFF_OPTIONAL} {_LOG_OPTIONAL}",
    ),
    "diff": spec("puswbRMC", "U", _DIFF, _DIFF_VALUED, _DIFF_OPTIONAL),
    "blame": spec(
        "lstnfewcpM",
        "L",
        "porcelain line-porcelain show-name show-number show-email root incremental",
        "date",
        "abbrev color-lines color-by-age",
    ),
    "branch": spec(
        "arvl",
        "",
        "all remotes verbose list show-current no-color ignore-case",
        "contains no-contains merged no-merged sort format points-at",
        "color column abbrev",
    ),
    "tag": spec("l", "n", "list ignore-case", "contains no-contains merged sort format points-at"),
    "rev-parse": spec(
        "q",
        "",
        "show-toplevel show-prefix show-cdup git-dir absolute-git-dir is-inside-work-tree "
        "is-inside-git-dir is-bare-repository verify quiet symbolic symbolic-full-name all "
        "branches tags git-common-dir show-superproject-working-tree",
        "",
        "abbrev-ref short",
    ),
    # No --exclude-per-directory=NAME: git reads NAME in every directory it walks as
    # patterns, a file no word names (a hard link of .env, .config/gh/hosts.yml), and lists
    # the files its lines match. -X FILE is one word, judged; --exclude-standard: .gitignore.
    "ls-files": spec(
        "cdmoiskutvfz",
        "xX",
        "cached deleted modified others ignored stage killed unmerged directory "
        "no-empty-directory exclude-standard full-name error-unmatch eol debug deduplicate",
        "exclude",
        "abbrev",
    ),
    "ls-tree": spec(
        "rdtlz",
        "",
        "long name-only name-status object-only full-name full-tree",
        "format",
        "abbrev",
    ),
    "grep": spec(
        "nilwvEFPGcLhHIozqra",
        "eABCfm",
        "line-number ignore-case word-regexp invert-match extended-regexp fixed-strings "
        "perl-regexp basic-regexp count files-with-matches files-without-match full-name "
        "cached untracked no-index no-recursive heading break show-function function-context "
        "all-match and or not only-matching quiet null column no-textconv",
        "max-depth after-context before-context context max-count threads",
        "color",
        numeric=True,
    ),
    "shortlog": spec("nsec", "", "numbered summary email committer all no-merges", "since until"),
    "describe": spec(
        "",
        "",
        "tags all long always exact-match first-parent contains",
        "match exclude candidates",
        "abbrev",
    ),
    "cat-file": spec("tspe", "", "", "", ""),
    "rev-list": spec("n", "", f"{_REVS} count objects", _REVS_VALUED, "abbrev", numeric=True),
    "merge-base": spec("a", "", "all is-ancestor fork-point octopus independent"),
    "show-ref": spec("sdq", "", "heads tags head dereference verify quiet", "", "hash abbrev"),
    "remote": spec("v", "", "verbose"),
    "count-objects": spec("vH", "", "verbose human-readable"),
    "name-rev": spec("", "", "name-only tags all always", "refs exclude"),
    "version": spec(),
}

# ref-filter's %(raw) prints the whole object a ref points at: a tag can point at a blob.
_RAW_FORMAT = re.compile(r"%\(\*?raw\b")
_RAW_SORT = re.compile(r"^-?\*?raw\b")
# Subcommands that mutate when given operands; listing forms only.
_LIST_ONLY = {"branch": ("l", "list"), "tag": ("l", "list")}
_GLOBAL_FLAGS = frozenset({"--no-pager", "-P", "--no-optional-locks", "--literal-pathspecs"})
# Forced onto subcommands whose output can run repository-configured programs.
_SUB_HARDENING = {
    "status": ("--ignore-submodules=all",),
    "diff": ("--no-ext-diff", "--no-textconv", "--ignore-submodules=all"),
    "log": ("--no-ext-diff", "--no-textconv"),
    "show": ("--no-ext-diff", "--no-textconv"),
    "blame": ("--no-textconv",),
}


def _subcommand_index(args: Sequence[str]) -> int:
    for i, arg in enumerate(args):
        if not arg.startswith("-"):
            return i
        if arg not in _GLOBAL_FLAGS:
            raise CommandRefused(
                f"git: global option {arg!r} is not allowed (-c, --config-env, --git-dir, "
                "--work-tree, --exec-path and -p/--paginate change what git runs)"
            )
    raise CommandRefused("git: a subcommand is required")


def check_git(args: Sequence[str]) -> None:
    """Validate ``git`` arguments (without the program name); raise ``CommandRefused``."""
    index = _subcommand_index(args)
    sub = args[index]
    if sub not in SUBCOMMANDS:
        allowed = ", ".join(sorted(SUBCOMMANDS))
        raise CommandRefused(f"git: subcommand {sub!r} is not read-only; allowed: {allowed}")
    rest = args[index + 1 :]
    parsed = split_options(f"git {sub}", rest, SUBCOMMANDS[sub])
    if sub in _LIST_ONLY and parsed.operands and not parsed.has(*_LIST_ONLY[sub]):
        raise CommandRefused(f"git {sub}: operands create a {sub}; use --list to filter")
    if sub == "remote" and parsed.operands:
        raise CommandRefused("git remote: only listing (git remote -v) is allowed")
    _check_listing(sub, parsed)
    # git grep -O/--open-files-in-pager (runs a program) is absent from its spec.
    for option, value in parsed.options:
        if value is not None and (
            (option == "format" and _RAW_FORMAT.search(value))
            or (option == "sort" and _RAW_SORT.search(value))
        ):
            raise CommandRefused(
                f"git {sub}: the raw atom prints the object a ref points at, and a tag may "
                "point at a file's content (a blob with no path to judge); use %(objectname)"
            )
    _check_history(sub, rest, parsed)


def _check_listing(sub: str, parsed: Parsed) -> None:
    """Refuse the listings of history that name what lies inside a secret directory and take
    no exclusion pathspec (``ls-files`` and ``status`` take the harness's, ``reads._git``):
    ``ls-tree -r`` walks every committed tree (``.ssh/id_rsa``, ``.config/gh/hosts.yml``: only
    its names-only form runs, as a diff that takes them, ``git_tree_list``) and
    ``rev-list --objects`` prints every object's path and id, a secret tree's too;
    ``ls-files --error-unmatch`` answers whether a wildcard matched a file they exclude."""
    if sub == "ls-tree" and (reason := recursive_listing_refusal(parsed)):
        raise CommandRefused(reason)
    if (
        sub == "ls-tree"
        and len(parsed.operands) > 1
        and split_rev_path(parsed.operands[0])[1] is not None
    ):
        raise CommandRefused(
            "git ls-tree: paths below a tree named as REV:PATH are read inside that tree, where "
            "the secrets policy cannot place them; name the directory as a path: "
            "git ls-tree REV PATH/"
        )
    if sub == "ls-files" and parsed.has("error-unmatch"):
        raise CommandRefused(
            "git ls-files: --error-unmatch is not allowed: it says whether a pathspec matched "
            "a tracked file before the exclusions, so a wildcard (.config/g[h]/h*) tells the "
            "names inside a secret directory; use git ls-files PATHSPEC and read its output"
        )
    if sub == "rev-list" and parsed.has("objects"):
        raise CommandRefused(
            "git rev-list: --objects prints the path and id of every file and directory in "
            "history, those inside secret directories too; use git rev-list without it, or "
            "git log --name-only (which skips them)"
        )


def _check_history(sub: str, rest: Sequence[str], parsed: Parsed) -> None:
    """Refuse what reaches a secret file's past content by a path no file on disk stands for
    (see ``git_revs``): a secret path inside a revision word, after ``--`` or blamed, and the
    options that defeat the exclusion pathspecs the harness appends."""
    if parsed.has("follow"):
        raise CommandRefused(
            f"git {sub}: --follow is not allowed: it follows a file's renames into paths the "
            "secrets policy cannot see (a secret renamed to an ordinary name); use "
            "git log -p -- PATH, or name the old path explicitly"
        )
    if sub == "log" and parsed.has("L"):
        raise CommandRefused(
            "git log: -L is not allowed: it follows renames and refuses the pathspecs that "
            "keep secrets files out; use git log -p -- FILE or git blame -L RANGE FILE"
        )
    operands = list(parsed.operands)
    if sub == "grep" and not parsed.has("e", "f") and operands:
        operands = operands[1:]  # the pattern, not a revision
    after = list(rest[rest.index("--") + 1 :]) if "--" in rest else []
    paths = history_paths(sub, operands, after, parsed.separator)
    reasons = [DEFAULT_POLICY.refusal(path) for path in paths]
    if sub == "blame":  # the file git may read from a revision's tree only
        tree_paths = blame_paths(operands, parsed.separator)[1]
        reasons += [tree_path_refusal(DEFAULT_POLICY, path) for path in tree_paths]
    if reason := next(filter(None, reasons), None):
        raise CommandRefused(f"git {sub}: {reason}; its content may not be read from any revision")


def harden_git(args: Sequence[str]) -> tuple[str, ...]:
    """The arguments git runs with: the forced safe configuration, the global
    flags, the subcommand and its forced flags, then the subcommand's options and operands
    rebuilt in the model's order (``shell.rebuild.rebuild_in_order``: one spelling per
    option, the model's ``--`` kept where it separates revisions from paths)."""
    index = _subcommand_index(args)
    sub = args[index]
    extra = _SUB_HARDENING.get(sub, ())
    table = SUBCOMMANDS[sub]
    parsed = split_options(f"git {sub}", args[index + 1 :], table)
    if sub == "ls-tree" and parsed.has("r"):  # a diff from the empty tree (git_tree_list)
        return (*HARDENING, *args[:index], *tree_list_words(parsed, _SUB_HARDENING["diff"]))
    return (*HARDENING, *args[:index], sub, *extra, *rebuild_in_order(parsed, table))
