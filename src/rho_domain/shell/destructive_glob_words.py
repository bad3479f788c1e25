"""A glob where a program reads a subcommand, judged as every subcommand it may expand to.

The table's rows read words (``docker rm``, ``kubectl delete``, ``aws s3 rm``, ``npm install
-g``, ``cargo install``), and a glob among them is unknown to the row, which skipped it:
``docker r* x`` ran unasked, yet in a directory holding a file named ``rm`` (whoever wrote a
file chose its name; a command of the same line can make it) bash runs ``docker rm x``. So a
glob that reaches a program with a row (``shell.destructive_readers``: through sudo, timeout,
env...) is tried as each word of ``VERBS`` it may match, and the row judges the command with
that word in its place: the worst of them is the answer (``docker r*`` may be ``docker rm``;
``kubectl d* pods`` may be ``kubectl delete pods``; ``npm i* -g x`` may be ``npm install -g
x``). A glob that cannot match one (``dist/*.whl``, ``./*``, ``*.py``) changes nothing.
Matching is case-blind, as the rows compare verbs (``docker RM`` asks), and bash's ``[^...]``
is read as ``[!...]``.

Contract: ``glob_verb_reason(argv, patterns) -> str`` (``patterns[i]`` the glob pattern of
``argv[i]`` or None): the reason to ask, or "".
"""

from __future__ import annotations

import fnmatch
from collections.abc import Sequence

from rho_domain.shell.destructive_installs import INSTALL_VERBS
from rho_domain.shell.destructive_readers import reader
from rho_domain.shell.destructive_services import SERVICE_VERBS
from rho_domain.shell.destructive_table import is_listed, judge_program
from rho_domain.shell.destructive_words import Arg

# the other rows' verbs (gh extension install, helm plugin install, poetry self add, brew
# tap, mise use -g, corepack enable, git's are its own: a glob before git's subcommand asks)
_OTHER_VERBS = frozenset(
    ["extension", "ext", "plugin", "plugins", "krew", "self", "profile", "tap", "use",
     "enable", "add", "plugin-add", "install", "upgrade", "update", "reinstall"]
)  # fmt: skip
VERBS = tuple(sorted(SERVICE_VERBS | INSTALL_VERBS | _OTHER_VERBS))


def glob_verb_reason(argv: Sequence[str], patterns: Sequence[str | None]) -> str:
    """Why a glob among ``argv``'s words asks because, expanded to a subcommand word its
    program's row reads, the command would ask, or ""."""
    if not any(patterns[1:]):
        return ""
    words: list[Arg] = [
        None if pattern is not None else word for word, pattern in zip(argv, patterns, strict=True)
    ]
    for index, pattern in enumerate(patterns[1:], 1):
        found = reader(words, index) if pattern is not None else None
        if pattern is None or found is None or not is_listed(found[1]):
            continue
        at, name = found
        shape = pattern.casefold().replace("[^", "[!")
        for verb in (v for v in VERBS if fnmatch.fnmatchcase(v, shape)):
            tried = [*words[at + 1 : index], verb, *words[index + 1 :]]
            if why := judge_program(name, tried):
                return f"the glob {argv[index]} may expand to {verb}, a file's name: {why}"
    return ""
