"""Secrets the words do not name, found in the Daytona sandbox: hard links, and what walks meet.

A hard link is one file with two names: ``notes.txt`` linked to ``.env`` is read as
``notes.txt``, and no check of names or real paths can tell (``local/hardlinks.py`` says the
same for the local executor, which scans the workspace with ``os.scandir``). The sandbox is
another machine, so its scan runs there, in the request that resolves the words anyway:
``scan_script`` lists, with ``find``, every regular file with several names below the scanned
trees (the workspace, the read roots, the policy's concrete secret locations and, when reads
outside are allowed, the trees the words open) as ``<device>:<inode> <path>``.
``parse_aliases`` groups the names by identity: every other name of a file one of whose names
the policy refuses is an alias, and ``with_aliases`` (the local module's rule) makes the
aliases secret locations, so a word, a ``< file`` or a read naming one is refused, the xargs
guard drops it and recursive readers get its name excluded.

Bounded: at most ``MAX_LINKED`` names are listed. Past that the scan is incomplete, and a path
naming a file with several links is refused (which file it is cannot be proven); recursive
readers then rely on the names found so far. ``/proc``, ``/sys`` and ``/dev`` are never walked.

The same ``find`` lists the entries the policy's name and location rules may refuse
(``-iname``/``-ipath`` tests built from ``NAMES``, ``LOCATIONS`` and the SSH key rule:
``deploy/id_github``, ``.config/gh``); those the policy refuses become locations too
(``Aliases.secrets``), so a recursive reader gets their names excluded, which the fixed list
``EXCLUDED_NAMES`` cannot say ("``id_*`` without a dot", "``gh`` below ``.config``"). The
local executor finds them with ``SecretScan`` (``CommandRunner.secrets_below``).
"""

from __future__ import annotations

import base64
import binascii
import posixpath
from collections.abc import Sequence

import attrs

from rho_adapters.daytona.scripts import q
from rho_adapters.daytona.secret_regex import SECRET_REGEX, SHAPE_ONLY
from rho_domain.errors import ExecutorError
from rho_domain.git_dir_shape import GIT_DIR, nearest_place, shape_of, shaped_refusal
from rho_domain.paths import components, is_within
from rho_domain.secrets import SecretPolicy
from rho_domain.shell.walk_exclusions import unlisted
from rho_domain.value_methods import value_eq, value_hash, value_repr

MAX_LINKED = 200_000
_PRUNED = ("/proc", "/sys", "/dev")
_PRUNED_PARTS = tuple(components(p) for p in _PRUNED)


@attrs.frozen
class Aliases:
    """Absolute paths that are other names of a secret file, whether the scan was whole, and
    the secrets found by name or location below the scanned trees (``secrets``)."""

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    paths: frozenset[str] = frozenset()
    complete: bool = True
    secrets: frozenset[str] = frozenset()
    targets: frozenset[str] = frozenset()  # of links named as secrets, in ``paths`` too


def scan_roots(
    policy: SecretPolicy, roots: Sequence[str], opened: Sequence[str] = ()
) -> tuple[str, ...]:
    """The trees to scan: ``roots`` (the workspace and read roots, canonical), the policy's
    concrete secret locations (those below /proc, /sys and /dev left out) and ``opened``
    (absolute, normalised paths a command may open: each with its directory, unless that
    directory holds a root), without those inside another. A word naming a root (``.`` in
    the workspace) brought the root's parent: a workspace directly in ``/tmp`` or in a home
    had every command that walks scan all of it (1.1 s of CPU, 30 s of wall time for
    ``/tmp`` on the test machine), where a file there is out of reach under ``deny`` and a
    hard link to it an accepted edge (docs/security.md)."""
    held = [components(posixpath.normpath(r)) for r in roots if r.startswith("/")]
    candidates = [*roots, *policy.absolute_locations()]
    for path in opened:
        above = posixpath.dirname(path)
        parts = components(above)
        candidates += [path] if any(is_within(r, parts) for r in held) else [path, above]
    return outermost(candidates)


def outermost(paths: Sequence[str]) -> tuple[str, ...]:
    """The absolute ``paths`` (normalised) that are inside no other of them and not below
    /proc, /sys or /dev, in the order of their first appearance; relative ones are dropped."""
    normal = (posixpath.normpath(p) for p in paths if p.startswith("/"))
    trees = list(dict.fromkeys(components(path) for path in normal))  # //a is /a
    trees = [t for t in trees if not any(is_within(t, pruned) for pruned in _PRUNED_PARTS)]
    # A tree is kept unless one of its ancestors is a tree too: a look-up per component,
    # where comparing each tree with every other cost 4 ms of CPU a call (the policy's 121
    # locations with the default homes, two calls per command that names a path).
    known = set(trees)
    kept = [t for t in trees if not any(t[:i] in known for i in range(len(t)))]
    return tuple("/" + "/".join(parts) for parts in kept)


def scan_script(roots: Sequence[str]) -> str:
    """One line: the base64 of ``find``'s records (each ended by a NUL) below ``roots``:
    ``s <device>:<inode> <path>`` for an entry a name or location rule may refuse (and,
    when it is a symbolic link, ``t <device>:<inode> <path>`` and its target's canonical
    path), ``l ...``
    for another regular file with several names (at most ``MAX_LINKED + 1`` records)."""
    prune = " -o ".join(f"-path {q(p)}" for p in _PRUNED)
    trees = " ".join(q(r) for r in roots) or "/nonexistent"
    return (
        f"LC_ALL=C find -P {trees} -regextype posix-extended \\( {prune} \\) -prune -o "
        f"-iregex {q(SECRET_REGEX)} -printf 's %D:%i %p\\0' "
        # the link's target resolved in the sandbox, every link on the way followed (GNU
        # find flushes its own output before it runs a command); a loop: an empty text
        "\\( -type l -printf 't %D:%i %p\\0' \\( -exec realpath -zm -- {} \\; -o -printf '\\0' \\)"
        " -o -true \\) "
        "-o -type f -links +1 -printf 'l %D:%i %p\\0' 2>/dev/null "
        f"| head -z -n {MAX_LINKED + 1} | base64 -w0; echo\n"
    )


def parse_aliases(line: str, policy: SecretPolicy) -> Aliases:
    """The aliases in ``scan_script``'s answer: the names, not refused by ``policy``, of each
    file one of whose names it refuses."""
    try:
        raw = base64.b64decode(line.strip(), validate=True)
    except binascii.Error as exc:
        raise ExecutorError(f"unreadable hard-link scan from the sandbox: {line[:80]!r}") from exc
    records = raw.decode("utf-8", "surrogateescape").split("\0")
    records = [r for r in records if r]
    groups: dict[str, list[str]] = {}
    secrets: set[str] = set()
    listed: list[str] = []
    texts = iter(records[:MAX_LINKED])
    targets: set[str] = set()
    for record in texts:
        kind, _, rest = record.partition(" ")
        identity, _, path = rest.partition(" ")
        if kind == "t":  # a link named as a secret: its target is one (``link_target``)
            targets.update(_link_target(path, next(texts, ""), policy))
            continue
        groups.setdefault(identity, []).append(path)
        if kind == "s":
            listed.append(path)
            if policy.refusal(path) and not _shape_only(path):
                secrets.add(path)
    shaped = _in_git_dirs(listed, policy)
    secrets.update(shaped)
    # a .git's config, index or scratch file by any name has aliases as a named one does
    # (``ln store/config notes``, probeshell22c); a store's objects are left to the rules
    # below (a local clone's are hard links git reads by itself)
    in_dirs = {path for path, kind in shaped.items() if kind == GIT_DIR}
    found: set[str] = set()
    for paths in groups.values():
        secret = {p for p in paths if policy.refusal(p) or p in in_dirs}
        if len(paths) > 1 and secret:
            found.update(p for p in paths if p not in secret)
            # a file in git's object store is git's to read, unless it is a secret's other name
            if any(policy.git_refusal(p) for p in paths):
                found.update(p for p in paths if policy.git_refusal(p) is None)
    return Aliases(
        paths=frozenset(found | targets),
        complete=len(records) <= MAX_LINKED,
        secrets=frozenset(secrets),
        targets=frozenset(targets),
    )


def _link_target(link: str, text: str, policy: SecretPolicy) -> tuple[str, ...]:
    """The target of ``link`` (``text``: its canonical path, every link on the way
    followed), when the link's own path is a secret and the target's is not: a secret's
    content kept under an ordinary name (``.env -> env/prod.conf``), as the local scan
    finds it (``local/alias_scan.link_targets``). The link's own text, read from its
    directory, missed a chain (``.env.local -> a.txt -> b.txt``: ``cat b.txt`` printed it)
    and a directory link on the way (probeshell23b)."""
    if not text or policy.git_refusal(link) is None:
        return ()
    target = posixpath.normpath(posixpath.join(posixpath.dirname(link), text))
    return (target,) if policy.refusal(target) is None else ()


def _shape_only(path: str) -> bool:
    """Whether ``path`` is listed only to tell a git directory's or store's shape: not a
    location of its own (``.git/objects/info`` is inside the store, whose files git opens by
    itself: a location there made ``info/packs``, hard-linked by a local clone, an alias)."""
    return path.rpartition("/")[2].casefold() in SHAPE_ONLY


def _in_git_dirs(listed: Sequence[str], policy: SecretPolicy) -> dict[str, str]:
    """The ``listed`` paths that are a ``.git``'s or an ``objects``' secrets in a git
    directory or object store by any name (``git_dir_shape``: its entries listed beside),
    each with the shape of the place it is in."""
    beside: dict[str, list[str]] = {}
    for path in listed:
        head, _, name = path.rpartition("/")
        beside.setdefault(head, []).append(name)
    places = [(d, kind) for d, names in beside.items() if d and (kind := shape_of(names))]
    return {
        path: place[1]
        for path in listed
        if (place := nearest_place(path, places)) is not None
        and shaped_refusal(policy, path, *place)
    }


def with_aliases(policy: SecretPolicy, aliases: Aliases) -> SecretPolicy:
    """``policy`` with ``aliases`` and the secrets found (those ``EXCLUDED_NAMES`` does not
    cover: ``walk_exclusions.unlisted``) as secret locations of its own."""
    found = sorted(aliases.paths | set(unlisted(sorted(aliases.secrets))))
    return attrs.evolve(policy, locations=(*policy.locations, *found)) if found else policy
