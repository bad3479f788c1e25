"""Walks that list: ``find``, ``du``, ``tree`` and ``ls -R`` never enter a secret directory.

They open no file, but a walk from above ``.ssh`` printed the names, sizes and times of the
files inside it (``find . -printf '%s %p'``, ``du -ab``, ``tree -a``, ``ls -laR``) while naming
the directory (``ls .ssh``) is refused; without bubblewrap and on Daytona nothing else stopped
them. ``listing_safe_argv`` adds to the argv the harness built the options that keep each
walker out of every secret directory it may meet:

* the single-name secret trees of the policy (``.ssh``, ``.aws``, ``.password-store``...) and
  their copies' names (``.ssh.bak``, ``.ssh.~1~``, ``.ssh (copy)``, ``#.ssh#``, ``Copy of .ssh``;
  not for du, whose patterns with a wildcard cost a match on every path it meets);
* the policy's secret trees below another directory (``.config/gcloud``), where the walker
  can say a path (find, du), and what is left of them below a directory the walk starts in
  (``gh`` inside ``.config``: ``inner_tails``, as a name for tree and ls), so the argv holds
  with no scan;
* the base names of the concrete secret locations below what it walks (the executors' scan,
  which runs for these walkers too, adds the secrets it found there: ``.config.old/gcloud``,
  ``.SSH``, ``.ssh.bak``), and every hidden entry when it walks a home (``walk_exclusions``).

Files keep their names: a listing shows ``.env`` as ``ls -a`` does; only the content of a
secret directory is left out. ``find`` prunes those directories (the directory itself is
judged by the model's expression, as the sandbox shows it: empty) and, where ``-depth`` or
``-mindepth`` 2 keep a prune from stopping, prints nothing below them; both tests are one
``-iregex`` ahead of the model's expression, which gets an explicit ``-print`` when it has no
action, and find's global options are moved ahead of them. ``du`` excludes the directories
(``--exclude=.ssh``); ``tree`` ignores their names (one ``-I '.ssh|.aws|...'`` after the
model's: tree before 2.0 keeps only the last ``-I`` and has no directory-only pattern);
``ls -R`` ignores their names (``--ignore``: ls has no directory-only pattern either), so a
plain file of such a name is left out of a recursive listing too; neither can say a path, so
both leave out the directories that hold a secret tree (``.config``, ``.local``: ``_HOLDERS``)
unless the walk starts inside one. Where the line is: a secret directory's entries; its own
name, and every file's name, size and times in a directory that is not secret (and git's
object store), list as ``ls -la`` shows them. Pure: ``reads.secret_safe_argv`` applies it.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Sequence

import attrs

from rho_domain.secrets import GIT_FILES, GIT_OBJECTS, LOCATIONS, SecretPolicy, in_git_store
from rho_domain.shell.embedded import find_parts, find_takes_value
from rho_domain.shell.walk_exclusions import EXCLUDED_GLOBS, HIDDEN, concrete_exclusions

LISTERS = frozenset({"find", "du", "tree", "ls"})
# The policy's secret trees wherever they are (``*/.ssh`` with ``*/.ssh/*``): one name, or a
# path below another directory (``.config/gcloud``, ``.git/config``: a file, which the
# directory-only forms below never match); not git's object stores: ids (``du -sh .git``).
_TREES = tuple(
    p.removeprefix("*/") for p in LOCATIONS
    if p.startswith("*/") and f"{p}/*" in LOCATIONS and p not in GIT_OBJECTS
)  # fmt: skip
SECRET_DIRECTORY_NAMES = tuple(t for t in _TREES if "/" not in t)
SECRET_TREE_PATHS = tuple(t for t in _TREES if "/" in t)
# The last names of those trees that are a secret file's name too (``uv/credentials``): the
# executors' scan reports no location that ``EXCLUDED_NAMES`` covers, so tree and ls, which
# cannot say a path, are given the name itself (a directory so named is a secret's place).
_NAMED_TREE_ENDS = tuple(
    dict.fromkeys(
        end for t in SECRET_TREE_PATHS if EXCLUDED_GLOBS.matches("/" + (end := t.rsplit("/", 1)[1]))
    )
)
# The secret trees below another directory that are one file (``.docker/config.json``): a
# walk may list their names. Every other one is a directory of secrets, which tree and ls,
# saying names only (never ``.config/gh``), keep out of by not entering the directory that
# holds it (``_HOLDERS``: ``.config``, ``.local``, ``.wrangler``), unless the walk starts
# inside that one (``inner_tails`` then names the rest), nor a copy of it (``.config.old``):
# with no scan, ``tree -a`` and ``ls -AR`` from above ``.config`` listed ``gh``'s files.
# Those holders are hidden names, so only ``-a``/``-A`` ever showed them.
_FILE_TREES = frozenset(
    {".docker/config.json", ".cargo/credentials", ".cargo/credentials.toml",
     ".terraform.d/credentials.tfrc.json", ".git/config", ".git/config.worktree",
     ".git/modules/*/config", ".bundle/config", "uv/credentials", ".m2/settings.xml",
     ".gradle/gradle.properties", ".nuget/nuget/nuget.config", ".config/pypoetry/auth.toml",
     ".config/hub", ".config/linode-cli", ".config/helm/repositories.yaml",
     ".supabase/access-token", ".circleci/cli.yml", ".travis/config.yml",
     ".netlify/config.json", "huggingface/token", ".huggingface/token",
     *(p.removeprefix("*/") for p in GIT_FILES)}
)  # fmt: skip
_DIRECTORY_TREES = tuple(t for t in SECRET_TREE_PATHS if t not in _FILE_TREES)
_HOLDERS = tuple(dict.fromkeys(t.split("/", 1)[0] for t in _DIRECTORY_TREES))
# The names of a copy of a secret directory (``secret_twins``): a suffix or mark glued by a
# dot, a tilde, a space, an underscore, a comma or a dash (.ssh.bak, .ssh.~1~, ".ssh (copy)",
# .ssh_old, .ssh-20240101), emacs' #.ssh#, older Windows' "Copy of .ssh" and "Copy (2) of".
_COPY_FORMS = ("{}[.~ _,-]*", "#{}#", "copy*of {}")


def _copied(name: str) -> tuple[str, ...]:
    """``name`` and the globs of its copies' names (``.config``, ``.config[.~ _,-]*``...)."""
    return (name, *(form.format(name) for form in _COPY_FORMS))


# The secret directories below a copy of the directory that holds them
# (``.config.old/gcloud``): with no scan, find listed what they held. Per holder, its copies'
# globs and the rests of its trees, grouped so for find: one alternative per pair (45) cost
# find about a quarter more CPU over /usr/lib; grouped, no change the noise let us measure.
_COPIED_TREES = tuple(
    (
        _copied(holder)[1:],
        tuple(t.split("/", 1)[1] for t in _DIRECTORY_TREES if t.startswith(f"{holder}/")),
    )
    for holder in _HOLDERS
)
# find's options that hold for the whole walk wherever they are written; find warns when one
# follows a test, so they are moved ahead of the tests the harness puts first.
_FIND_GLOBAL_FLAGS = frozenset({"-depth", "-xdev", "-mount", "-noleaf", "-ignore_readdir_race"})
_FIND_GLOBAL_VALUED = frozenset({"-maxdepth", "-mindepth"})
_FIND_ACTIONS = frozenset({"-print", "-print0", "-printf", "-ls"})
# ".*/" and ".*" as find's regex must say them: its "." matches no newline, and ".*/" left a
# secret directory below "a<newline>b" unpruned (and, under -depth, a file so named inside
# one listed); a list "[^/]" matches a newline. Any components (none: "find .config" meets
# ".config/gh" with nothing above it; a start path that is a secret is refused as a word),
# then any string.
_ABOVE = "\\([^/]*/\\)*"
_ANY = "\\([^/]*/\\)*[^/]*"


def lists_below(argv: Sequence[str]) -> bool:
    """Whether ``argv`` (as the harness built it) lists what lies below a directory it walks:
    ``find``, ``du`` and ``tree`` always, ``ls`` with ``-R``/``--recursive``."""
    if not argv or argv[0] not in LISTERS:
        return False
    if argv[0] != "ls":
        return True
    options = argv[1 : argv.index("--")] if "--" in argv else argv[1:]
    return any(
        w == "--recursive" or (w.startswith("-") and not w.startswith("--") and "R" in w)
        for w in options
    )


def _escaped(name: str) -> str:
    """``name`` as a glob matching itself alone (a found directory may be named ``a[1]``)."""
    return "".join(f"[{c}]" if c in "*?[]\\" else c for c in name)


def inner_tails(walked: Sequence[str]) -> tuple[str, ...]:
    """The rest of each secret tree below another directory (``gh`` of ``.config/gh``) that a
    walk started inside that directory meets (``walked``: canonical directories, one ending
    in ``/.config``), lowercase. Its paths there never hold the whole tree path, so without
    them only the executors' scan kept ``cd .config && find .`` out of ``gh`` (and any walk of
    ``.config.old`` out of ``gcloud``)."""
    ends = [w.lower().rstrip("/").split("/") for w in walked]
    out: list[str] = []
    for tree in SECRET_TREE_PATHS:
        parts = tree.split("/")
        for k in range(1, len(parts)):
            if any(len(end) > k and _ends_in(end[-k:], parts[:k]) for end in ends):
                out.append("/".join(parts[k:]))
    return tuple(dict.fromkeys(out))


def _ends_in(end: Sequence[str], head: Sequence[str]) -> bool:
    """Whether the last names of a walked directory, ``end``, are ``head`` (its first one or a
    copy of it: ``.config.old`` holds ``gcloud`` as ``.config`` does)."""
    first = any(fnmatch.fnmatchcase(end[0], g) for g in _copied(head[0]))
    return first and all(map(fnmatch.fnmatchcase, end[1:], head[1:]))


def _names(policy: SecretPolicy, walked: Sequence[str]) -> tuple[str, ...]:
    """Lowercase globs of the secret directory names a listing walk must not enter."""
    copies = [form.format(n) for n in SECRET_DIRECTORY_NAMES for form in _COPY_FORMS]
    found = [
        name if name == HIDDEN or name.endswith("*") else _escaped(name)
        for name in concrete_exclusions(policy, walked)
    ]
    return tuple(dict.fromkeys((*SECRET_DIRECTORY_NAMES, *copies, *found)))


def _du_names(policy: SecretPolicy, walked: Sequence[str]) -> tuple[str, ...]:
    """The exclusions of du: names and paths as they are, which du looks up in a table (a pattern
    with a wildcard is matched against every suffix of every path it meets: 58 of them took
    du -a /usr from 0.9 s of CPU to 32 s). A copy's name and another case (``.ssh.bak``,
    ``.SSH``) come from the executors' scan, as concrete names."""
    found = [n if n == HIDDEN or n.endswith("*") else _escaped(n)
             for n in concrete_exclusions(policy, walked)]  # fmt: skip
    tails = inner_tails(walked)
    return tuple(dict.fromkeys((*SECRET_DIRECTORY_NAMES, *SECRET_TREE_PATHS, *tails, *found)))


def _any_case(glob: str) -> str:
    """``glob`` (lowercase) matching any letter case, for the walkers without a case-blind
    match (du, tree, ls). A dot stays a dot: ls matches with FNM_PERIOD, where ``[.]`` never
    matches a name's leading dot."""
    out: list[str] = []
    in_class = False
    for c in glob:
        if c == "[":
            in_class = True
        elif c == "]":
            in_class = False
        if c.isascii() and c.isalpha():
            out.append(c + c.upper() if in_class else f"[{c}{c.upper()}]")
        else:
            out.append(c)
    return "".join(out)


def listing_safe_argv(
    argv: Sequence[str], policy: SecretPolicy, walked: Sequence[str]
) -> tuple[str, ...]:
    """``argv`` (find, du, tree or ls as ``harden_argv`` built it) with the options that keep
    it out of every secret directory below ``walked`` (canonical directories); any other
    argv, or ``ls`` without ``-R``, unchanged. See the module docstring."""
    if not lists_below(argv):
        return tuple(argv)
    kept = tuple(p for p in policy.locations if not in_git_store(p))  # a scan found: ids
    names = _names(policy := attrs.evolve(policy, locations=kept), walked)
    name, args = argv[0], list(argv[1:])
    if name == "find":
        return ("find", *_find(args, (*names, *inner_tails(walked))))
    end = args.index("--") if "--" in args else len(args)
    if name == "du":
        extra = [f"--exclude={n}" for n in _du_names(policy, walked)]
        return (name, *args[:end], *extra, *args[end:])
    # tree and ls say names only: a tail's first name (inside .config, every "gh")
    heads = (t.split("/", 1)[0] for t in inner_tails(walked))
    holders = (copy for h in _HOLDERS for copy in _copied(h))
    names = tuple(dict.fromkeys((*names, *_NAMED_TREE_ENDS, *holders, *heads)))
    if name == "tree":
        # One -I, its names joined by "|" (a name holding one is matched by "?" there), and no
        # directory-only "/": tree before 2.0 (RHEL 8 and 9, Debian 11, Ubuntu 20.04) keeps
        # the last -I alone and compares a "/" with the name, so "-I .ssh/ -I .aws/" hid
        # nothing there. A plain file so named is left out too, as ls -R leaves it.
        extra = ["-I", "|".join(_any_case(n).replace("|", "?") for n in names)]
    else:
        extra = [f"--ignore={_any_case(n)}" for n in names]
    return (name, *args[:end], *extra, *args[end:])


def _find(args: Sequence[str], names: Sequence[str]) -> list[str]:
    """The arguments of find with the secret directories pruned ahead of the model's expression,
    and nothing below them printed where a prune does not stop the walk."""
    leading, starts, expression = find_parts(args)
    hoisted: list[str] = []  # the global options, moved ahead of the harness's tests
    kept: list[str] = []
    acts = False
    i = 0
    while i < len(expression):
        word = expression[i]
        size = 2 if find_takes_value(word) or word in _FIND_GLOBAL_VALUED else 1
        words = expression[i : i + size]
        global_option = word in _FIND_GLOBAL_FLAGS or word in _FIND_GLOBAL_VALUED
        (hoisted if global_option else kept).extend(words)
        acts = acts or word in _FIND_ACTIONS
        i += size
    user = [*(["(", *kept, ")"] if kept else []), *([] if acts else ["-print"])]
    copied = [f"{_regex(copies)}/{_regex(rests)}" for copies, rests in _COPIED_TREES]
    paths = _regex((*names, *SECRET_TREE_PATHS), copied)
    prune = ["(", "-type", "d", "-iregex", f"{_ABOVE}{paths}", "-prune", "-false", ")"]
    if _prune_may_fail(hoisted):
        prune += ["-o", "-iregex", f"{_ABOVE}{paths}/{_ANY}"]
    return [*leading, *starts, *hoisted, *prune, "-o", *user]


def _regex(globs: Sequence[str], regexes: Sequence[str] = ()) -> str:
    """One emacs-syntax regular expression (find's default) for the lowercase ``globs``,
    matched by ``-iregex`` against the end of a path (the globs joined by an escaped ``|``,
    grouped by escaped parentheses), a ``*`` or a
    ``?`` never crossing a ``/``. One regex a path, not one test a name: find runs the tests
    on names before ``-type d`` whatever their order, and 113 ``-iname``/``-ipath`` tests took
    ``find /usr -name '*.py'`` from 0.3 s of CPU to 21 s. ``regexes``: alternatives written
    as regular expressions already."""
    return "\\(" + "\\|".join((*map(_glob_regex, globs), *regexes)) + "\\)"


def _glob_regex(glob: str) -> str:
    out: list[str] = []
    i = 0
    while i < len(glob):
        c = glob[i]
        close = glob.find("]", i + 2) if c == "[" else -1
        if close > 0:  # a class: [!x] is [^x]; "\\" is literal inside one
            body = glob[i + 1 : close]
            out.append("[^" + body[1:] + "]" if body.startswith("!") else f"[{body}]")
            i = close + 1
            continue
        if c == "*":
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif c.isalnum() or c in "/_- ,~#@%=:'\"<>&;!{}|":
            out.append(c)
        else:  # . $ ^ + [ ] \ and the rest: literal in a class ("^" may not lead one)
            out.append("[]^]" if c == "^" else f"[{c}]")
        i += 1
    return "".join(out)


def _prune_may_fail(hoisted: Sequence[str]) -> bool:
    """Whether find may list an entry below a directory it never pruned: with ``-depth``
    (a prune does nothing) or ``-mindepth`` 2 or more (the expression is not evaluated above
    that depth; at depth 0 is a start path, judged as a word)."""
    if "-depth" in hoisted:
        return True
    depths = [hoisted[i + 1] for i, w in enumerate(hoisted[:-1]) if w == "-mindepth"]
    return any(not d.isdigit() or int(d) >= 2 for d in depths)
