"""The Daytona alias scan's one ``find -iregex``: true for every entry a secret name or
location rule may refuse (a superset; the policy judges each entry ``find`` lists).

Built once per process from the policy's patterns (``NAMES``, ``LOCATIONS``, the SSH key rule,
``GIT_FILES``) with their copies factored in; ``aliases.scan_script`` puts it in the scan.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence

from rho_adapters.daytona.alternation import alternation
from rho_domain.secrets import GIT_FILES, LOCATIONS, LOOSE_FANOUT, NAMES, SSH_KEY

Group = Callable[[Iterable[str]], str]  # alternatives -> one group matching any of them


def secret_regex(group: Group = alternation) -> str:
    """``find``'s one ``-iregex`` (extended, matched in the C locale), true for an entry a
    name or location rule may refuse (a superset: the policy judges each one found). Its
    alternatives are joined by ``group``: ``alternation`` writes their shared beginnings
    once, which glibc compiles in a third of the time of the plain ``(a|b|...)`` (the same
    language: 10 ms of the sandbox's CPU less at every scan).

    One expression, not the 665 ``-iname``/``-ipath`` tests it replaces: find parsed those in
    time quadratic in their count (9 ms) and ran each as an fnmatch on every entry walked
    (0.15-0.2 ms an entry: 40 ms of the sandbox's CPU a walk of a small workspace, 3 s of a
    20,000-file repository); this one compiles in about 2 ms and costs microseconds an entry.
    Each pattern's copies are factored into it (``#name#``, ``copy of name``, a suffix; a
    wider superset than the tests: ``#name`` too). The C locale makes the match bytewise, so
    a directory whose name is not UTF-8 cannot hide what is below it, and any name ``folded``
    may change is listed for the policy to judge: a byte outside printable ASCII (``.e<U+200C>nv``,
    ``.<U+017F>sh``, the Kelvin sign that fnmatch folded in a UTF-8 locale), a ``:``
    (``.env::$DATA``), a trailing dot or space."""
    basenames = [p.removeprefix("*/") for p in (*NAMES, SSH_KEY)]
    # ``*.git/objects`` (a bare repository's store) keeps its star: ``.*`` before ``\.git/``
    files = [p.removeprefix("*/") for p in LOCATIONS if p.startswith("*") and not p.endswith("/*")]
    alternatives = [_copied(basenames, "[^/]*", group), _copied(files, ".*", group)]
    alternatives += [_glob(copy, ".*") for path in files for copy in _parent_copies(path)]
    alternatives += [_glob(marked, "[^/]*") for name in basenames for marked in _marked(name)]
    alternatives += [_glob(marked, ".*") for path in files for marked in _marked(path)]
    alternatives.append(f"{LOOSE_FANOUT}/[0-9a-f][0-9a-f]")  # any store's loose objects
    # a git directory or store by its shape, whatever its name (git_dir_shape), and what a
    # .git holds secret (its config, index, scratch files) or a store, judged below one
    alternatives.append(f"{'|'.join(SHAPE_ONLY)}|objects|pack|[0-9a-f][0-9a-f]")
    alternatives += [_glob(part, "[^/]*") for part in _DOT_GIT_PARTS]
    alternatives.append(_glob(".*.sw[pon]", "[^/]*"))  # vim's swap files (.id_rsa.swp)
    alternatives.append(_glob(".*.kate-swp", "[^/]*"))  # Kate's (.id_rsa.kate-swp)
    alternatives.append("[^/]*([^/ -~]|:)[^/]*|[^/]*[. ]")  # what ``folded`` may change
    return f".*/{group(alternatives)}"


def _copied(patterns: Sequence[str], star: str, group: Group) -> str:
    """The ``patterns`` (globs; ``star`` is what a ``*`` matches) and their copies
    (``secret_twins``): a suffix (``id_rsa.bak``, ``.netrc.1``, ``server.pem~``, an RCS
    file ``.netrc,v``), emacs' autosave (``#.netrc#``), "Copy of .netrc" and "Copy (2) of
    .netrc", as one alternative: the copies' marks are written once around all names (the
    same language as one alternative per pattern; glibc compiled those 2 x 234 repeated marks
    in 17 ms of the sandbox's CPU at every scan, a sandbox's creation and each file with
    several names; this form in under half)."""
    bare = [_glob(pattern, star) for pattern in patterns if "/" not in pattern]
    headed = []
    for pattern in patterns:
        head, _, name = pattern.rpartition("/")
        if head:
            headed.append(f"{_glob(f'{head}/', star)}(#|copy{star}of )?{_glob(name, star)}")
    named = [f"(#|copy{star}of )?{group(bare)}"] if bare else []
    return f"{group((*named, *headed))}([.~ _,-]{star}|#)?"


def _parent_copies(path: str) -> tuple[str, ...]:
    """Globs of a location whose directory above is a copy (``secret_twins`` reduces every
    directory of a path): ``.config.old/gcloud``, ``.local/share.bak/keyrings``,
    ``.docker~/config.json``; before, the scan met them by no pattern and ``grep -r`` read
    ``.config.old/gcloud/credentials.db`` on Daytona."""
    parts = path.split("/")
    return tuple(
        "/".join((*parts[:i], f"{parts[i]}[.~ _,-]*", *parts[i + 1 :]))
        for i in range(len(parts) - 1)
    )


def _marked(pattern: str) -> tuple[str, ...]:
    """A copy's mark before the extension (``credentials (2).json``), as a glob."""
    head, _, name = pattern.rpartition("/")
    head = f"{head}/" if head else ""
    dot = name.rfind(".")
    return (f"{head}{name[:dot]} *{name[dot:]}",) if dot > 0 else ()


def _glob(glob: str, star: str) -> str:
    """The glob (``*`` and ``[...]`` only, as the policy's patterns are) as an extended
    regular expression; its letters match case-insensitively under ``-iregex``."""
    out = []
    for part in re.findall(r"\[[^]]*\]|.", glob):
        if part in ("*", "?"):
            out.append(star if part == "*" else star.removesuffix("*"))
        elif part.startswith("[") and len(part) > 1:
            out.append(part.replace("[!", "[^", 1))
        elif part in _SPECIAL:
            out.append(f"\\{part}")
        else:
            out.append(part)
    return "".join(out)


# Names listed only for the shape they give their directory (``git_dir_shape``)
SHAPE_ONLY = ("head", "refs", "commondir", "info")
_SPECIAL = frozenset(".[]()*+?{}|^$\\")
# What the named ``.git/...`` secret locations are inside a git directory (``config``,
# ``index``, ``COMMIT_EDITMSG``, ``modules/*/config``...)
_DOT_GIT_PARTS = tuple(
    dict.fromkeys(p.removeprefix("*/.git/") for p in GIT_FILES if p.startswith("*/.git/"))
)  # what an extended regular expression gives a meaning


SECRET_REGEX = secret_regex()
