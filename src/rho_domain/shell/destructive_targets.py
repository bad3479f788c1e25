"""What a command's words and redirections name that makes it ask again after "always".

Part of the destructive-command check (``shell.destructive``), judged on one parsed simple
command, whatever its program:

* ``word_reason(argv, first)``: an argument ``NAME=value`` setting a variable that chooses
  what runs (``PATH``, ``LD_PRELOAD``, ``HOME``...: ``shell.destructive_variables``), a
  disk device named as an argument (``cp x /dev/sda``; not to ``ls``, ``lsblk``, ``stat``...)
  and a path inside a ``.git`` directory named to a program that may write it (``tee
  .git/hooks/pre-commit``; not to ``cat``, ``ls``, ``grep``, ``git``...): hooks and config
  there run later;
* ``redirection_reason(op, target)``: a redirection that writes (``WRITING``) to a device
  (``> /dev/sda``; not ``/dev/null``, ``/dev/std*``, ``/dev/tty``, ``/dev/fd/*``) or inside
  ``.git``.

Each returns the reason shown to the human, or "". ``redirection_reason`` and
``destination_reason`` take the directories the command may run in (``shell.destructive_cwd``,
after a ``cd``), and judge a relative path joined with each; an archive extracted unread
into the command's own directory asks (``destination_reason``).
"""

from __future__ import annotations

import functools
import itertools
import posixpath
import re
from collections.abc import Sequence

from rho_domain.shell.destructive_archive_files import MAKERS, made_archives
from rho_domain.shell.destructive_archives import (
    ARCHIVERS,
    archive_destinations,
    extracts,
    python_extractor,
    unread_members,
)
from rho_domain.shell.destructive_cwd import HERE, Directories
from rho_domain.shell.destructive_globs import is_pattern, matched_paths
from rho_domain.shell.destructive_outside import outside_refusal
from rho_domain.shell.destructive_variables import variable_reason
from rho_domain.shell.destructive_words import Arg, split_options
from rho_domain.shell.destructive_writers import KEEPS_CONTENT, more_destinations, names_more
from rho_domain.write_rules import write_refusal

WRITING = frozenset([">", ">>", ">|", "&>", "&>>", "<>"])
"""The redirection operators that write their target."""

_PACKAGE_MANAGERS = frozenset(
    ["pip", "pip3", "uv", "npm", "pnpm", "yarn", "bun", "gem", "cargo", "go", "poetry",
     "pdm", "pipx", "conda", "mamba", "brew", "apt", "apt-get", "dnf", "yum", "composer"]
)  # fmt: skip
_HARMLESS_DEVICES = ("/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty", "/dev/fd/")
_DISK = re.compile(r"^/dev/(sd|hd|vd|xvd|nvme|mmcblk|disk|mapper/|dm-|md|loop|sr|mem$|kmem$|port$)")
_DEVICE_READERS = frozenset(["ls", "lsblk", "blkid", "stat", "file", "df", "smartctl", "udevadm"])
# programs that only read or name what is inside .git (any other naming it may write there)
_GIT_DIR_READERS = frozenset(
    [
        "ls", "cat", "head", "tail", "less", "more", "grep", "egrep", "fgrep", "rg", "find",
        "stat", "file", "wc", "du", "tree", "git", "diff", "cd", "realpath", "readlink",
        "basename", "dirname", "md5sum", "sha256sum", "xxd", "od", "hexdump", "strings",
        "test", "[",
    ]
)  # fmt: skip


def word_reason(argv: Sequence[Arg], first: str | None, cwd: Directories = HERE) -> str:
    """Why the arguments of ``argv`` (run as ``first``) ask again, or "": a variable that
    chooses what runs, a disk device, a path inside ``.git``, a relative one joined with each
    known directory of ``cwd`` too (``cd .git && touch hooks/x``; ``None`` words are unknown
    and judged elsewhere)."""
    for index, word in enumerate(argv[1:], 1):
        if why := variable_reason(word, first, argv[index + 1 :]):
            return why
        path = (word or "").split("=", 1)[-1]
        if first not in _DEVICE_READERS and _DISK.match(path):
            return f"{first} {word}: names a disk device"
        if first not in _GIT_DIR_READERS and _in_git_dir(path, cwd):
            return f"{first} {word}: may write inside .git (hooks and config run later)"
    return ""


def is_subcommand(before: Sequence[Arg], word: Arg) -> bool:
    """True when ``word`` is the subcommand of a package manager among ``before`` (``pip
    install``, ``sudo npm install``), not the program of that name."""
    managers = [i for i, w in enumerate(before) if w is not None and w in _PACKAGE_MANAGERS]
    after = before[managers[-1] + 1 :] if managers else ()
    return bool(managers) and word == "install" and all(w and w[0] == "-" for w in after)


def _in_git_dir(path: str, cwd: Directories) -> bool:
    """True when ``path``, as given or joined with a known directory of ``cwd``, is in
    ``.git``."""
    places = () if path.startswith("-") else cwd.places  # an option names no file
    joined = [posixpath.join(p.path, path) for p in places if p.path and not p.unknown]
    return any(".git" in posixpath.normpath(j).casefold().split("/") for j in (path, *joined))


def redirection_reason(op: str, target: str | None, cwd: Directories = HERE) -> str:
    """Why the redirection ``op target`` asks again, or "": it writes to a device or inside
    ``.git``. A redirection that reads, or one without a target (a here-document), is "".
    A relative target is judged in each directory ``cwd`` says the command may run in."""
    if target is None or op not in WRITING:
        return ""
    return cwd.judge(target, lambda path: _redirection_reason(op, path), op)


def _redirection_reason(op: str, target: str) -> str:
    if target.startswith("/dev/") and not target.startswith(_HARMLESS_DEVICES):
        return f"{op} {target}: writes to a device"
    if ".git" in target.casefold().split("/"):
        return f"{op} {target}: writes inside .git (hooks and config run later)"
    if why := write_refusal(target):
        return f"{op} {target}: {why} (the write tool refuses it in every mode)"
    if why := outside_refusal(target):
        return f"{op} {target}: {why}"
    return ""


def destination_reason(
    argv: Sequence[Arg], first: str | None, cwd: Directories = HERE, named: Sequence[Arg] = ()
) -> str:
    """Why the file a writer's words name as its destination asks, or "": what the write
    tool never writes (``write_rules.write_refusal``: start-up files such as ``.bashrc``,
    ``.ssh/``, ``.vscode/``, ``.mcp.json``, ``sitecustomize.py``, secrets...), written by
    ``cp``, ``mv``, ``install``, ``ln``, ``rsync``, ``scp`` (their last operand, or that
    directory joined with a source's name), ``tee``, or the output of ``curl -o``, ``wget
    -O``, ``sort -o``, ``dd of=``; a relative one in each directory ``cwd`` says the
    command may run in. ``named`` is ``argv`` with each glob's pattern in place of its
    unknown word: a destination given as a pattern is judged as every name it may match
    (``shell.destructive_globs``), and one no word shows (what ``xargs`` appends) asks."""
    patterns = {n for n, w in zip(named, argv, strict=False) if w is None and n is not None}
    # a write through a link lands in its target (ln -s /etc/cron.d out && cp x out/), and
    # through a hard link in the file itself: what ln links to is judged as written
    linked = _linked((named or argv)[1:]) if first == "ln" else []
    for path in [*_destinations((named or argv)[1:], first), *linked]:
        if path is None:
            return (
                f"{first} writes where a generated word says (what xargs, parallel or find -exec "
                "fill in), "
                "which the approval check cannot see: name the destination"
            )
        given = any(pattern in path for pattern in patterns)  # not an extraction's own ".*"
        for each in matched_paths(path) if given else (path,):
            if why := cwd.judge(each, lambda p: _destination_reason(p, first), f"{first} writes"):
                return why
    return unread_members(argv[1:], first, cwd)


# each suffix a wrapper runs names the same paths again (``env cp a b ... d``: d/a, d/b for
# every suffix): judged once each (the write rules are pure functions of the path)
@functools.lru_cache(maxsize=4096)
def _destination_reason(path: str, first: str | None) -> str:
    if why := write_refusal(path):
        return f"{first} writes {path}: {why} (the write tool refuses it in every mode)"
    if why := outside_refusal(path):
        return f"{first} writes {path}: {why}"
    return ""


def names_destinations(first: str | None) -> bool:
    """True when ``first`` is a program whose words may name a destination (the only ones
    ``destination_reason`` reads further): a wrapper's every suffix is not read again."""
    # python3 -m zipfile -e a.zip DIR extracts (sudo python3 ...: a wrapped one too)
    python = first is not None and first.startswith("python")
    return first in _DESTINATION_NAMERS or names_more(first) or python


def destinations(words: Sequence[Arg], first: str | None) -> list[str]:
    """The paths ``first words`` names as what it writes with content from elsewhere (a
    pattern as given): not what ``touch``, ``mkdir`` or ``dos2unix`` make or rewrite (an
    empty file, a directory, the same lines), which no later command runs as new code."""
    if first in KEEPS_CONTENT:
        return []
    return [path for path in _destinations(words, first) if path is not None]


def _destinations(words: Sequence[Arg], first: str | None) -> list[str | None]:
    """The destinations ``first words`` names; None where an unknown word is one."""
    if (module := python_extractor(words)) and (first or "").startswith("python"):
        # python3 -m zipfile -e a.zip DIR, -c a.zip FILES
        return [*made_archives(module, words[2:]), *archive_destinations(module, words[2:])]
    if not names_destinations(first):
        return []
    if first in MAKERS:  # the archive it writes (tar -cf /etc/profile.d/x.sh payload)
        return _archived(first, words)
    known = [w for w in words if w is not None]
    if first == "tee":
        return [w for w in words if w is None or not w.startswith("-")]
    if first == "dd":
        unknown: list[str | None] = [None] if None in words else []
        return [w[3:] for w in known if w.startswith("of=")] + unknown
    if first == "find":  # -fprint FILE, -fprint0 FILE, -fprintf FILE FORMAT, -fls FILE
        return [f for o, f in itertools.pairwise(words) if o in _FIND_WRITES]
    if first in ARCHIVERS:  # the directory it fills and what lands there (tar -C DIR)
        return archive_destinations(first, words)
    if first in _OUTPUT_OPTIONS:
        short, long = _OUTPUT_OPTIONS[first]
        found: list[str | None] = [w.split("=", 1)[1] for w in known if w.startswith(long + "=")]
        for word, following in itertools.pairwise([*words, ""]):
            if word is None:
                continue
            cluster = word[1:] if word.startswith("-") and not word.startswith("--") else ""
            letters = cluster[: len(cluster) - len(cluster.lstrip(_LETTERS))]
            if short in letters:  # -o FILE, -oFILE, -so FILE (curl's cluster)
                found.append(cluster[letters.index(short) + 1 :] or following)
            elif word == long:
                found.append(following)
        return [f for f in found if f != ""] + list(more_destinations(words, first))
    if first not in _COPIERS:
        return [*more_destinations(words, first)]
    return _copied(words, known)


def _archived(first: str, words: Sequence[Arg]) -> list[str | None]:
    """The archive ``first words`` creates or changes (``made_archives``), then what an
    extraction writes (``archive_destinations``); an unseen word that may choose the mode
    asks with the extraction's reason."""
    made = made_archives(first, words)
    if first not in ARCHIVERS:
        return made
    if extracts(first, [w for w in words if w is not None], words):
        made = [m for m in made if m is not None]
    return [*made, *archive_destinations(first, words)]


def _linked(words: Sequence[Arg]) -> list[str | None]:
    """What ``ln words`` links to: every operand with ``-t DIR`` or alone, else all but the
    last (None: one no word shows)."""
    options, operands = split_options(words)
    into = any(o == "-t" or o.startswith("--target-directory") for o in options)
    return list(operands if into or len(operands) == 1 else operands[:-1])


def _copied(words: Sequence[Arg], known: list[str]) -> list[str | None]:
    """A copier's destination (``-t DIR`` or its last operand; None when a word no one
    knows is it) and that directory joined with each source's name."""
    _, operands = split_options(words)
    target: list[str | None] = [
        w.split("=", 1)[1] for w in known if w.startswith("--target-directory=")
    ]
    target += [value for option, value in itertools.pairwise(words) if option == "-t"]
    if target:
        destination, sources = target[0], operands
    elif operands:
        destination, sources = operands[-1], operands[:-1]
    else:
        return []
    if destination is None:
        return [None]
    # a source given as a pattern lands under its matches' names, which are the source's
    names = [s.rstrip("/").rsplit("/", 1)[-1] for s in sources if s and not is_pattern(s)]
    joined = (posixpath.join(destination, name) for name in names if name)
    return [destination, *joined]


_FIND_WRITES = frozenset(["-fprint", "-fprint0", "-fprintf", "-fls"])
_COPIERS = frozenset(["cp", "mv", "install", "ln", "rsync", "scp"])
_OUTPUT_OPTIONS = {
    "curl": ("o", "--output"),
    "wget": ("O", "--output-document"),
    "sort": ("o", "--output"),
}
_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
_DESTINATION_NAMERS = frozenset(
    ["tee", "dd", "find", *ARCHIVERS, *MAKERS, *_COPIERS, *_OUTPUT_OPTIONS]
)
