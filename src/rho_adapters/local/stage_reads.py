"""What a restricted stage may read: its path words judged by their real paths.

``check_reads`` refuses a stage that names a secret by any real path or by another name of the
same file (a hard link, ``hardlinks.py``), or a word it may open out of the profile's reach
(``rho_domain.reach``); it returns the canonical directories the stage may walk and the policy
its recursive readers and ``xargs`` guard must apply. Imported by the first restricted stage
prepared (``stage_argv.prepare``): a run whose tools read files in-process never loads it.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Sequence

import attrs

from rho_adapters.local.git_dirs import shaped_place_refusal
from rho_adapters.local.hardlinks import AliasCache, several_links, with_aliases
from rho_domain.errors import ExecutorError, PathOutsideWorkspace, SensitivePath
from rho_domain.paths import MAX_PATH
from rho_domain.reach import ReadReach, held_roots
from rho_domain.secrets import DEFAULT_POLICY, SecretPolicy


def check_reads(
    argv: Sequence[str],
    cwd: str,
    *,
    policy: SecretPolicy,
    reach: ReadReach,
    visible_roots: Sequence[str],
    aliases: AliasCache,
    secrets_below: Callable[[Sequence[str]], tuple[str, ...]] | None = None,
) -> tuple[list[str], SecretPolicy]:
    """Refuse a stage naming a secret by any real path or by another name of the same file
    (a hard link, ``hardlinks.py``); return the canonical directories it may walk (its
    directory operands and ``cwd``) and the policy its recursive readers and ``xargs``
    guard must apply (the hard links found are secret locations in it, and so are the
    secrets ``secrets_below`` finds in the trees a recursive reader walks: their names are
    then excluded, ``deploy/id_github`` or ``.config/gh`` as ``.env`` is). ``visible_roots``:
    the sandbox's roots, the workspace first; ``aliases``: the hard links found so far."""
    from rho_domain.shell.ignore_files import implied_ignore_files
    from rho_domain.shell.reads import walks
    from rho_domain.shell.texts import reach_words
    from rho_domain.shell.walk_exclusions import unlisted

    # Reach judges the words a program may open, not its pattern or script (texts.py).
    opened = reach_words(argv)
    # rg's ignore files above where it starts are judged as words (ignore_files.py).
    implied = (
        implied_ignore_files(argv, cwd, visible_roots[0], visible_roots[1:])
        if visible_roots
        else ()
    )
    opened |= frozenset(implied)
    walked, linked = _judge_words(argv, cwd, policy, reach=reach, opened=opened, implied=implied)
    # The workspace (not the extra read roots: one may be "/"), what this stage walks and
    # the directories of the files with several links it names. A directory named only
    # by a text (a pattern, ``awk -F/``'s separator: not in ``opened``) is no tree the
    # stage opens: walking it for aliases cost a whole file system for ``-F/``.
    named = {os.path.realpath(os.path.join(cwd, word)) for word in opened}
    trees = [walked[0], *(d for d in walked[1:] if d in named)]
    held = held_roots(visible_roots[1:], linked)  # a read root holding one: scanned whole
    roots = (*visible_roots[:1], *trees, *map(os.path.dirname, linked), *held)
    found = aliases.get(roots)
    if linked and not found.complete:
        raise SensitivePath(
            f"{argv[0]}: {linked[0]} has several hard links and the workspace is too large "
            "to check that none of them is a secret; read a copy with one name"
        )
    judged = with_aliases(policy, found)
    if judged is not policy:
        _judge_words(argv, cwd, judged, found.paths, implied=implied)
        if argv[0] == "git":
            _git_work_tree_files(found.paths, judged, reach)
    if secrets_below is not None and walks(argv):
        # What the walk meets is known only to a walk: the workspace and the trees the stage
        # names; for xargs every root (an item may be any directory within reach).
        scanned = visible_roots if argv[0] == "xargs" else visible_roots[:1]
        below = unlisted(secrets_below((*scanned, *trees)))
        judged = attrs.evolve(judged, locations=(*judged.locations, *below))
    return walked, judged


def _judge_words(
    argv: Sequence[str],
    cwd: str,
    policy: SecretPolicy,
    aliases: Sequence[str] = (),
    *,
    reach: ReadReach | None = None,
    opened: frozenset[str] = frozenset(),
    implied: tuple[str, ...] = (),
) -> tuple[list[str], list[str]]:
    """Judge every path word by ``policy`` (``aliases``: hard links to secrets), then the
    real path of each word the program may open (``opened``) by ``reach``; return (walked
    directories, real paths of files with several links). ``implied``: absolute paths the
    program opens that no word names (rg's ignore files above it), judged as words."""
    walked = [os.path.realpath(cwd)]
    if reason := policy.refusal(walked[0]):
        raise SensitivePath(f"{argv[0]}: commands may not run inside a secret location: {reason}")
    from rho_domain.shell.reads import path_words

    try:
        directory = os.open(cwd, os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError as exc:
        raise ExecutorError(f"{argv[0]}: cannot open its directory {cwd}: {exc.strerror}") from exc
    try:
        words = [w for w in (*path_words(argv), *implied) if _named(argv[0], cwd, directory, w)]
        reals = [_real_path(argv[0], cwd, directory, word) for word in words]
    finally:
        os.close(directory)
    linked: list[str] = []
    for word, real in zip(words, reals, strict=True):
        full = os.path.join(cwd, word)  # an absolute word stays absolute
        if real in aliases:
            raise SensitivePath(
                f"{argv[0]}: {word} may not be read: it is another name (a hard link) of a "
                "secrets file, the file a link named as one leads to, or a file a nested "
                "repository's git configuration names for credentials"
            )
        for candidate in (full, real):
            if reason := policy.refusal(candidate):
                shown = word if candidate == full else f"{word!r} (really {real})"
                raise SensitivePath(f"{argv[0]}: {shown} may not be read: {reason}")
        if reason := shaped_place_refusal(policy, real):  # a bare store's config...
            raise SensitivePath(f"{argv[0]}: {word} may not be read: {reason}")
        if reach is not None and word in opened and (reason := reach.refusal(real)):
            shown = word if real == os.path.normpath(full) else f"{word!r} (really {real})"
            raise PathOutsideWorkspace(f"{argv[0]}: {shown} may not be read: {reason}")
        if os.path.isdir(real) and word not in implied:
            walked.append(real)
        elif several_links(real):
            linked.append(real)
    return walked, linked


MAX_LINKS = 40  # the kernel's limit of links followed in one lookup


def _real_path(program: str, cwd: str, directory: int, word: str) -> str:
    """The real path of ``word`` (which names something), refused when it cannot be judged:
    longer than a path may be, or not the file the program opens. ``os.path.realpath``
    resolves by strings, and a component whose path grew past 4,096 characters (a link to
    a deep directory) fails there with ENAMETOOLONG and counts as no link: with
    ``deep/up -> /``, ``L/<17th>/up/../(x18)/etc/hostname`` was judged as a file inside the
    workspace while ``cat`` (the kernel follows links at any depth) printed ``/etc/hostname``.
    So the file at the real path must be the one looked up from ``directory``."""
    real = os.path.realpath(os.path.join(cwd, word))
    if len(real) <= MAX_PATH and _identity(word, directory) == _identity(real, None):
        return real
    raise PathOutsideWorkspace(
        f"{program}: {word[:80]!r}{'...' if len(word) > 80 else ''}: its real path cannot be "
        f"judged (longer than {MAX_PATH} characters on the way); cd closer to the file and "
        "name it from there"
    )


def _identity(path: str, directory: int | None) -> tuple[int, int] | None:
    """(device, inode) of what ``path`` leads to, every link followed; None if nothing."""
    try:
        info = os.stat(path, dir_fd=directory)
    except (OSError, ValueError):
        return None
    return info.st_dev, info.st_ino


def _named(program: str, cwd: str, directory: int, word: str) -> bool:
    """Whether ``word`` names a file for ``program`` started in ``cwd`` (open as
    ``directory``), looked up as the program looks it up: relative to its directory (joined
    to ``cwd`` first, a word of 4,077 characters, ``./././.../link``, was longer than a path
    may be, so it "named nothing" and was not judged, while the program opened it), and never
    through a link below /proc or /dev (``process_link``), which is refused."""
    if "\x00" in word:
        return False
    if (link := process_link(os.path.join(cwd, word))) is not None:
        reason = DEFAULT_POLICY.refusal(link) or f"{link} is a link into /proc or /dev"
        raise SensitivePath(
            f"{program}: {word!r} may not be read: it leads through {link}, which names the "
            f"files of whichever process follows it ({reason})"
        )
    try:
        os.lstat(word, dir_fd=directory)
    except (OSError, ValueError):
        return False
    return True


def process_link(path: str) -> str | None:
    """The first symbolic link below ``/proc`` or ``/dev`` that looking up the absolute
    ``path`` follows (``/proc/self``, ``/proc/thread-self``, ``/dev/fd``, ``/dev/stdin``),
    or None. Such a link names the files of the process that follows it: resolved here, a
    workspace link to ``/proc/self/cwd`` led to the agent's directory, where
    ``link/../outside/x`` named nothing (and was not judged), while the command, in the
    workspace, read ``../outside/x``. Walked as the kernel walks: each component looked up
    below a directory already resolved, so ``..`` is that directory's parent."""
    pending = path.split("/")[::-1]
    resolved = "/"
    links = 0
    while pending:
        name = pending.pop()
        if name in ("", "."):
            continue
        if name == "..":
            resolved = os.path.dirname(resolved)
            continue
        candidate = os.path.join(resolved, name)
        try:
            is_link = stat.S_ISLNK(os.lstat(candidate).st_mode)
        except (OSError, ValueError):
            return None  # the lookup stops here, for the command too
        if not is_link:
            resolved = candidate
            continue
        if candidate.startswith(("/proc/", "/dev/")):
            return candidate
        links += 1
        if links > MAX_LINKS:
            return None  # ELOOP, for the command too
        target = os.readlink(candidate)
        resolved = "/" if target.startswith("/") else resolved
        pending.extend(target.split("/")[::-1])
    return None


def _git_work_tree_files(aliases: Sequence[str], policy: SecretPolicy, reach: ReadReach) -> None:
    """Refuse a git stage when a hard link of a secret is a file git reads by itself in the
    work tree (``.gitattributes``...: ``git_repo.WORK_TREE_FILES``), whatever words it has."""
    from rho_domain.shell.git_repo import (
        WORK_TREE_FILES,
        RepositoryFiles,
        check_repository_files,
    )

    read = tuple(p for p in aliases if os.path.basename(p).casefold() in WORK_TREE_FILES)
    check_repository_files(RepositoryFiles(linked=read), policy, reach)
