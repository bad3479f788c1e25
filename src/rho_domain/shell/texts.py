"""Which words of a stage are texts (a pattern, a script, a filter), never files it opens.

``path_words`` takes every word that names an existing file as a path, which is right for
secrets (a pattern that names a secret is refused: rare, and safe). Where reads may go
(``rho_domain.reach``) cannot be that coarse: ``grep /usr/lib notes.txt`` or the grep tool's
pattern ``/etc/hosts`` would be refused for naming a directory outside the workspace. So the
positions of the texts are found here, by the program's option table, and left out of that
judgement only; everything else is judged. A misreading can only keep a word in (a refusal
the model can avoid), never take a file operand out: a word is a text only when it is the
value of a pattern option (``-e``, ``--regexp``, sed's ``--expression``) or, with none of
those, no text read from a file (``-f``) and no mode that takes no pattern (``rg --files``),
the first operand.
"""

from __future__ import annotations

from collections.abc import Sequence

from rho_domain.shell.options import OptionSpec, spec
from rho_domain.shell.programs import SPECS
from rho_domain.shell.reads import path_words

# program -> (short pattern options, long pattern options, short file options, long file ones)
_TEXTS: dict[str, tuple[str, frozenset[str], str, frozenset[str]]] = {
    "grep": ("e", frozenset({"regexp"}), "f", frozenset({"file"})),
    "rg": ("e", frozenset({"regexp"}), "f", frozenset({"file"})),
    "sed": ("e", frozenset({"expression"}), "f", frozenset({"file"})),
    "awk": ("", frozenset(), "f", frozenset({"file"})),
    "jq": ("", frozenset(), "f", frozenset({"from-file"})),
}
# Options after which the program takes no pattern at all: every operand is a path
# (``rg --files DIR`` lists DIR; read as a pattern, DIR went unjudged and rg listed a
# directory out of reach).
_NO_PATTERN: dict[str, frozenset[str]] = {"rg": frozenset({"files", "type-list"})}
for _alias in ("egrep", "fgrep"):
    _TEXTS[_alias] = _TEXTS["grep"]
for _alias in ("gawk", "mawk"):
    _TEXTS[_alias] = _TEXTS["awk"]
_AWK = spec(valued="Fvf", long_valued="file field-separator assign")


def reach_words(argv: Sequence[str]) -> frozenset[str]:
    """The path words of ``argv`` that where-reads-go judges: those of ``path_words`` once the
    texts (``text_positions``) are left out, and without the bare root a glued short option
    derives as a separator (``awk -F/``, ``cut -d/``, ``sort -t/``): "/" itself is never read
    as a file, and a program walking it names it as an operand, which stays judged."""
    texts = text_positions(argv)
    kept = [w for k, w in enumerate(argv) if k not in texts]
    words = set(path_words(kept))
    glued = any(w.startswith("-") and not w.startswith("--") and w.endswith("/") for w in kept[1:])
    named = any(w == "/" or (w.startswith("--") and w.endswith("=/")) for w in kept[1:])
    if glued and not named:
        words.discard("/")
    return frozenset(words)


def text_positions(argv: Sequence[str]) -> frozenset[int]:
    """Indices in ``argv`` of the words that are only texts (the pattern of ``-e PAT``, the
    whole of ``-ePAT`` or ``--regexp=PAT``, a first operand that is the pattern or program)."""
    if not argv or argv[0] not in _TEXTS:
        return frozenset()
    table = SPECS.get(argv[0]) or (_AWK if "awk" in argv[0] else None)
    if table is None:
        return frozenset()
    out: set[int] = set()
    given = from_file = False
    first: int | None = None
    i = 1
    while i < len(argv):
        arg = argv[i]
        if arg == "--":
            first = i + 1 if first is None else first
            break
        if arg == "-" or not arg.startswith("-"):
            first = i if first is None else first
        elif arg.startswith("--"):
            kind, skip = _long(arg, argv[0], table)
            given, from_file = given or kind == "text", from_file or kind == "file"
            if kind == "text":
                out.update((i, i + 1) if skip else (i,))
            i += skip
        else:
            kind, skip = _short(arg, argv[0], table)
            given, from_file = given or kind == "text", from_file or kind == "file"
            if kind == "text":
                out.update((i, i + 1) if skip else (i,))
            i += skip
        i += 1
    if not given and not from_file and first is not None and first < len(argv):
        out.add(first)
    return frozenset(p for p in out if p < len(argv))


def _long(arg: str, program: str, table: OptionSpec) -> tuple[str, int]:
    """(``text``/``file``/``other``, words its value takes after it) of a long option;
    ``file`` also for a mode that takes no pattern (``_NO_PATTERN``)."""
    name, eq, _ = arg[2:].partition("=")
    texts, files = _TEXTS[program][1], _TEXTS[program][3]
    takes = 0 if eq or name not in table.long_valued else 1
    if name in texts:
        return "text", takes
    no_pattern = name in _NO_PATTERN.get(program, ())
    return ("file" if name in files or no_pattern else "other"), takes


def _short(arg: str, program: str, table: OptionSpec) -> tuple[str, int]:
    """(``text``/``file``/``other``, words its value takes after it) of a short bundle."""
    texts, files = _TEXTS[program][0], _TEXTS[program][2]
    for j, letter in enumerate(arg[1:], 1):
        if letter in table.valued:
            takes = 0 if j + 1 < len(arg) else 1
            if letter in texts:
                return "text", takes
            return ("file" if letter in files else "other"), takes
    return "other", 0
