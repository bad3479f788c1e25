"""What a restricted stage may read, so the executor can hold it to the secrets policy.

Three pieces, all pure; the executors (local and Daytona) resolve the real paths and apply them:

* ``path_words(argv)``: every word that could name a file the program opens: operands, option
  values (``--file=x``, ``-fx``, the word after ``-f``), git's ``rev:path``, and the files a
  program opens by a name it builds (``implied.py``: ``diff FILE DIR`` opens ``DIR/FILE``,
  ``zcat NAME`` opens ``NAME.gz``). The executor resolves each word that exists
  (relative to the stage's directory, every symlink followed) and refuses the stage when the
  real path is a secret. Words that name nothing are ignored, so a grep pattern is not
  mistaken for a file.
* ``secret_safe_argv(argv, policy, walked)``: the argv with recursive readers kept away from
  secrets they would find by themselves: ``grep -r``/``rg``/``git grep``/``git diff``/
  ``diff -r`` get exclusions of every secret name (and of the concrete secret locations below
  the directories they walk), ``grep -R`` becomes ``-r`` and ``diff -r`` gets
  ``--no-dereference`` (symlinks found while walking are not followed), ``rg -L/--follow`` is
  refused and rg prints no line of the ignore files it reads by itself
  (``--no-ignore-messages``; as an xargs target ``--no-messages``: ``ignore_files.py``) and
  reads no exclude file (``--no-ignore-exclude``: a ``.git`` file points it anywhere), and
  ``xargs`` runs its target behind ``guard_script`` (the items it appends are judged at run
  time; its recursive target skips every concrete secret location, since a directory it is
  handed may hold any of them). awk programs that touch ``ARGV``/``ARGC`` are refused (they
  choose files the harness never saw; gawk's ``--sandbox`` stops this, mawk does not), and
  so is ``md5sum -c`` and its siblings (they open the files named inside a list).
* ``NON_READING``: programs whose words are never opened as files.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from rho_domain.errors import CommandRefused
from rho_domain.reach import ReadReach
from rho_domain.secret_guard import guard_script
from rho_domain.secrets import LOCATIONS, SecretPolicy, case_insensitive
from rho_domain.shell.git import SUBCOMMANDS
from rho_domain.shell.git_objects import git_subcommand
from rho_domain.shell.git_revs import names_pathspec, revision_sides, split_rev_path
from rho_domain.shell.implied import implied_paths
from rho_domain.shell.listing_walks import listing_safe_argv, lists_below
from rho_domain.shell.options import OptionSpec
from rho_domain.shell.programs import SPECS, xargs_target_index
from rho_domain.shell.walk_exclusions import HIDDEN, walk_exclusions

# Not date (--reference stats a file), realpath, readlink (they resolve and stat a path):
# their words are judged like any other's.
NON_READING = frozenset(
    {"echo", "printf", "seq", "basename", "dirname", "true", "false", "pwd", "whoami",
     "id", "uname", "hostname", "which", "ps", "tr", "cd"}
)  # fmt: skip
# The programs that walk directories and read what they meet (``secret_safe_argv`` gives them
# exclusions; an xargs target may be one): the executors scan their trees for secrets, and
# so they do for a walk that lists (``walks``).
WALKERS = frozenset({"grep", "rg", "diff", "git", "xargs"})
GUARD_NAME = "rho-guard"
_AWK_ARGV = re.compile(r"\bARG[VC]\b")
# The location rules that hold wherever the location is (*/.config/gh), as paths below any
# directory: git's exclusion pathspecs (``**/.config/gh``) can say them, --exclude cannot.
LOCATION_TAILS = tuple(
    p.removeprefix("*/") for p in LOCATIONS if p.startswith("*/") and not p.endswith("/*")
)


def walks(argv: Sequence[str]) -> bool:
    """Whether the stage ``argv`` walks directories, reading (``WALKERS``) or listing what it
    meets (find, du, tree, ``ls -R``: ``listing_walks``): the executors scan the trees it may
    walk for the secrets no name rule says, which ``secret_safe_argv`` then keeps it from."""
    return bool(argv) and (argv[0] in WALKERS or lists_below(argv))


def path_words(argv: Sequence[str]) -> tuple[str, ...]:
    """Every word of ``argv`` (program excluded) that could be a path the program opens."""
    if not argv or argv[0] in NON_READING:
        return ()
    out: list[str] = []
    for arg in argv[1:]:
        out.append(arg)
        if arg.startswith("--") and "=" in arg:
            out.append(arg.split("=", 1)[1])
        elif arg.startswith("-") and len(arg) > 2:
            out.extend(arg[i:] for i in range(2, len(arg)))
        if argv[0] == "git":
            out.extend(path for side in revision_sides(arg) if (path := split_rev_path(side)[1]))
    out.extend(implied_paths(argv))
    return tuple(dict.fromkeys(w for w in out if w and w not in ("-", "--")))


def _scan(args: Sequence[str], spec: OptionSpec) -> tuple[list[str], list[str], int]:
    """(short flags, long option names, index of ``--`` or len) of ``args`` under ``spec``."""
    shorts: list[str] = []
    longs: list[str] = []
    i = 0
    while i < len(args):
        arg = args[i]
        i += 1
        if arg == "--":
            return shorts, longs, i - 1
        if arg.startswith("--"):
            name, eq, _ = arg[2:].partition("=")
            longs.append(name)
            if name in spec.long_valued and not eq:
                i += 1
        elif arg.startswith("-") and len(arg) > 1 and not (spec.numeric and arg[1:].isdigit()):
            for j, ch in enumerate(arg[1:], start=1):
                shorts.append(ch)
                if ch in spec.valued:
                    i += 0 if arg[j + 1 :] else 1
                    break
    return shorts, longs, len(args)


def _rewrite_short(args: Sequence[str], spec: OptionSpec, old: str, new: str) -> list[str]:
    """Replace the short flag ``old`` by ``new`` where it is a flag (not inside a value)."""
    out: list[str] = []
    skip = False
    for arg in args:
        if skip:
            out.append(arg)
            skip = False
            continue
        if arg == "--":
            out.extend(args[len(out) :])
            return out
        if arg.startswith("--"):
            name, eq, _ = arg[2:].partition("=")
            skip = name in spec.long_valued and not eq
        elif arg.startswith("-") and len(arg) > 1:
            chars = list(arg)
            for j in range(1, len(chars)):
                if chars[j] in spec.valued:
                    skip = j == len(chars) - 1
                    break
                if chars[j] == old:
                    chars[j] = new
            arg = "".join(chars)
        out.append(arg)
    return out


def _insert(args: list[str], at: int, extra: Sequence[str]) -> list[str]:
    return [*args[:at], *extra, *args[at:]]


def _grep(args: list[str], names: Sequence[str]) -> list[str]:
    # Exclusions always: recursion also comes from -d/--directories=recurse, and on
    # command-line files an --exclude only skips what the real-path check already refused.
    spec = SPECS["grep"]
    args = _rewrite_short(args, spec, "R", "r")
    args = ["--recursive" if a == "--dereference-recursive" else a for a in args]
    _, _, end = _scan(args, spec)
    # grep's globs are case-sensitive: .ENV is spelled [.][eE][nN][vV].
    folded = [case_insensitive(n) for n in names]
    extra = [f"--exclude={n}" for n in folded] + [f"--exclude-dir={n}" for n in folded]
    return _insert(args, end, extra)


def _rg(args: list[str], names: Sequence[str]) -> list[str]:
    shorts, longs, end = _scan(args, SPECS["rg"])
    if "L" in shorts or "follow" in longs:
        raise CommandRefused(
            "rg: -L/--follow follows symbolic links, which may lead to secrets; "
            "search the link's target directly"
        )
    # rg's globs take no "/" in a class and match base names only: a hidden name is ".?*"
    excluded = [f"--iglob=!{'.?*' if n == HIDDEN else n}" for n in names]
    # The exclusions keep rg from searching a file, not from reading it as an ignore file:
    # it reads .ignore, .rgignore and .gitignore where it walks and above, by itself, and
    # quotes each line it cannot parse ("error parsing glob 'API_KEY=...[x'"); one linked
    # to a secret printed it. Those messages say nothing a search needs. Its exclude file
    # is never read: where .git is a file (a linked worktree's), rg reads the
    # <gitdir>/commondir it names and that directory's info/exclude, a path no word names
    # and the judge of the ignore files above (ignore_files.py) cannot see, and rg 13 prints
    # its lines above where it starts whatever --no-ignore-messages says.
    return _insert(args, end, ["--no-ignore-messages", "--no-ignore-exclude", *excluded])


def _diff(args: list[str], names: Sequence[str], walked: Sequence[str]) -> list[str]:
    # Two directories are compared file by file even without -r: exclusions always (they only
    # act inside directory comparisons), and no symlink followed once a directory is walked.
    shorts, longs, end = _scan(args, SPECS["diff"])
    recursive = "r" in shorts or "recursive" in longs or len(walked) > 1
    extra = [f"--exclude={case_insensitive(n)}" for n in names]
    return _insert(args, end, ["--no-dereference", *extra] if recursive else extra)


# What reads files' content or lists their names as git walks trees or the index: each takes
# the exclusion pathspecs (ls-files and status list the names inside .ssh, status -uall the
# untracked ones too; ls-tree takes no pathspec magic: git.py refuses its -r).
_GIT_READERS = frozenset(
    {"grep", "diff", "show", "log", "ls-files", "status", "rev-list", "shortlog"}
)
# The walkers that list commits: with no pathspec they list every commit as it is; a pathspec
# filters the commits by the files they touched, so without the exclusions
# ``git log --format=%h -- '*/gh/a*'`` answered, letter by letter, the names of the files
# inside a committed secret directory (``rev-list``, ``shortlog`` likewise).
_COMMIT_LISTERS = frozenset({"log", "rev-list", "shortlog"})
# git log options that never look at a file's content (revisions, messages, formatting): a log
# with only these lists commits as they are. Any other option (-p, --stat, -G, -S, -M...)
# reads or compares blobs, so the exclusion pathspecs are appended: pickaxe and diffs then
# never see a secret file. Excluding paths also hides commits that only touched secrets.
_LOG_CONTENT_FREE_SHORT = frozenset("niEFz")
_LOG_CONTENT_FREE = (
    "all branches tags remotes first-parent merges no-merges reverse topo-order date-order "
    "author-date-order full-history ancestry-path left-right cherry-pick boundary no-walk "
    "simplify-by-decoration source walk-reflogs not since until after before author committer "
    "grep max-count skip oneline graph abbrev-commit no-abbrev-commit relative-date "
    "decorate-refs no-decorate mailmap log-size regexp-ignore-case extended-regexp "
    "fixed-strings all-match invert-grep format date decorate-refs-exclude grep-reflog pretty "
    "decorate abbrev no-color color no-ext-diff no-textconv"  # the last two: harden_git's
)
_LOG_CONTENT_FREE_LONG = frozenset(_LOG_CONTENT_FREE.split())


def _git_options(rest: Sequence[str]) -> Sequence[str]:
    """The option words of a rebuilt git subcommand: those before the model's ``--``. After
    it, ``--follow`` or ``--no-index`` is a path, and must not switch the exclusions off."""
    return rest[: rest.index("--")] if "--" in rest else rest


def _git(args: list[str], names: Sequence[str], walked: Sequence[str]) -> list[str]:
    index = git_subcommand(args)
    if index is None or args[index] not in _GIT_READERS:
        return args
    sub, rest = args[index], args[index + 1 :]
    options = _git_options(rest)
    if sub in _COMMIT_LISTERS and not names_pathspec(rest):
        if sub != "log":
            return args
        shorts, longs, _ = _scan(options, SUBCOMMANDS["log"])
        if set(shorts) <= _LOG_CONTENT_FREE_SHORT and set(longs) <= _LOG_CONTENT_FREE_LONG:
            return args  # names and messages only: no file content to keep secrets out of
    if sub == "diff" and "--no-index" in options:
        if len(walked) > 1:
            raise CommandRefused(
                "git diff --no-index of a directory would read the secrets inside it; "
                "use diff -r, which skips them"
            )
        return args  # two named files, both judged by their real paths
    if "--literal-pathspecs" in args[:index]:
        raise CommandRefused(
            f"git {sub}: --literal-pathspecs would disable the exclusion of secrets files"
        )
    # Magic pathspecs need no "--": git never takes ":(...)" for a revision. "top": relative to
    # the repository's root, not to the working directory (from a subdirectory, git diff/show/
    # log -p cover the whole repository, and a path operand may climb with "..").
    # History is no walk the executors can scan: the location rules' tails (.config/gh) too.
    paths = dict.fromkeys((*names, *LOCATION_TAILS))
    specs = [f":(top,exclude,icase,glob)**/{n}" for n in paths]
    return [*args, *specs, *(f"{s}/**" for s in specs)]


def secret_safe_argv(
    argv: Sequence[str],
    policy: SecretPolicy,
    walked: Sequence[str],
    reach: ReadReach | None = None,
) -> tuple[str, ...]:
    """``argv`` (already hardened) with recursive readers kept away from secrets; see the
    module docstring. ``walked``: canonical directories the stage may walk (its operands that
    are directories, and its working directory). ``reach``: where reads may go, applied by
    the xargs guard to the items xargs appends."""
    if not argv:
        return ()
    if lists_below(argv):
        return listing_safe_argv(argv, policy, walked)
    name, args = argv[0], list(argv[1:])
    names = walk_exclusions(policy, walked)
    if name == "grep":
        args = _grep(args, names)
    elif name == "rg":
        args = _rg(args, names)
    elif name == "diff":
        args = _diff(args, names, walked)
    elif name == "git":
        args = _git(args, names, walked)
    elif name.endswith("sum") and any(
        a in ("-c", "--check") or (a.startswith("-") and not a.startswith("--") and "c" in a)
        for a in args
    ):
        raise CommandRefused(f"{name}: --check opens the files named inside the list; not allowed")
    elif name in ("awk", "gawk", "mawk") and _AWK_ARGV.search(" ".join(args)):
        raise CommandRefused("awk: ARGV/ARGC choose files the harness never checked; not allowed")
    elif name == "xargs":
        index = xargs_target_index(args)
        # The items xargs appends are known only at run time: a directory among them (echo ~
        # | xargs grep -r) is walked too, so the target keeps away from every concrete secret
        # location, as if it walked the whole filesystem.
        target = secret_safe_argv(args[index:], policy, (*walked, "/"), reach)
        if target[:1] == ("rg",):
            # It starts in directories known only at run time: the ignore files above them
            # are not judged (ignore_files.py), so rg prints no message at all.
            target = (target[0], "--no-messages", *target[1:])
        case = reach.guard_case() if reach is not None else ""
        args = [*args[:index], "sh", "-c", guard_script(policy, case), GUARD_NAME, *target]
    return (name, *args)
