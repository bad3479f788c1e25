"""The restricted shell's programs: which ones exist and which arguments keep them read-only.

``check_argv(argv)`` validates one command (program name plus arguments) and raises
``CommandRefused`` naming the reason; ``harden_argv(argv)`` returns the argv the harness really
runs, rebuilt from the parsed command (``shell.rebuild``): the program, its forced safety flags
(``sed --sandbox``, ``gawk --sandbox``, ``rg --no-config``, git's safe configuration), each
option in one spelling, the harness's own ``--``, the operands; for ``xargs``, its target
rebuilt the same way, so the items it appends land behind that ``--``. The executor applies
both to every pipeline stage it runs, so a handler bug cannot smuggle in another program.

Every program's options are an allowlist (``OptionSpec``); an option it does not name is
refused with the program and the option in the message.

Not here on purpose: interpreters, shells, wrappers (env, nice, timeout, xargs into anything
not listed, command, exec...), network programs, pagers, editors, archivers and anything that
writes (tee, cp, sort -o, uniq's output operand, xxd -r, tree -o, file -C, date -s).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import attrs

from rho_domain.errors import CommandRefused
from rho_domain.shell.awk import AwkFlavor, awk_argv, check_awk
from rho_domain.shell.embedded import check_find
from rho_domain.shell.git import check_git, harden_git
from rho_domain.shell.jq import check_jq
from rho_domain.shell.options import OptionSpec, Parsed, Spelling, spec, split_options
from rho_domain.shell.rebuild import rebuild
from rho_domain.shell.sed import check_sed

_HEAD = ("qvz", "nc", "quiet silent verbose zero-terminated", "lines bytes")
_GREP_FLAGS = "EFGPiyvwxclLoqsnhHbrRaIzZUT"
_GREP_LONG = (
    "extended-regexp fixed-strings basic-regexp perl-regexp ignore-case no-ignore-case "
    "invert-match word-regexp line-regexp count files-with-matches files-without-match "
    "only-matching quiet silent no-messages line-number with-filename no-filename "
    "byte-offset recursive dereference-recursive text null null-data initial-tab"
    " line-buffered"
)
_GREP_VALUED = (
    "regexp file max-count after-context before-context context include exclude "
    "exclude-dir label binary-files directories devices exclude-from"
)
# Absent on purpose: -z (--search-zip runs decompressors) and --pre (runs any program); the
# tests' NEVER_ALLOWED table pins both.
_RG_FLAGS = "iSsnNlcvwxFoHIqLUPu0.abp"
_RG_LONG = (
    "ignore-case smart-case case-sensitive line-number no-line-number files-with-matches "
    "files-without-match count count-matches invert-match word-regexp line-regexp "
    "fixed-strings only-matching with-filename no-filename no-heading heading hidden "
    "no-ignore no-ignore-vcs no-ignore-parent no-ignore-dot no-ignore-global files json "
    "column no-column vimgrep trim stats multiline multiline-dotall pcre2 null null-data "
    "follow no-messages quiet type-list glob-case-insensitive text binary no-config "
    "unrestricted passthru byte-offset line-buffered block-buffered crlf no-unicode "
    "invert-match include-zero sort-files no-require-git one-file-system mmap"
)
_RG_VALUED = (
    "regexp file glob iglob type type-not after-context before-context context max-count "
    "max-depth max-columns max-filesize sort sortr encoding threads context-separator "
    "field-match-separator field-context-separator path-separator replace engine regex-size-limit"
    " dfa-size-limit type-add type-clear"
)

# rg's parser reads "-e=x" as the value "x": each valued letter is rebuilt by its long name.
_RG_LONG_FOR = {
    "e": "regexp",
    "f": "file",
    "g": "glob",
    "t": "type",
    "T": "type-not",
    "A": "after-context",
    "B": "before-context",
    "C": "context",
    "m": "max-count",
    "d": "max-depth",
    "M": "max-columns",
    "E": "encoding",
    "j": "threads",
    "r": "replace",
}


def _date_operand(value: str) -> str | None:
    return None if value.startswith("+") else "only a +FORMAT operand is allowed (no setting)"


def _no_response_file(value: str) -> str | None:
    if value.startswith("@"):
        return (
            f"operand {value!r}: binutils reads '@file' as more arguments (even after --); "
            f"name the file ./{value}"
        )
    return None


# BSD-style ps words (no dash), letter by letter: never 'e' (other processes' environments,
# credentials), nor the letters that take a value (o, O, p, t, U, k...).
_PS_BSD = frozenset("auxfwjlvrScnhmTHL")


def _ps_operand(value: str) -> str | None:
    if value and set(value) <= _PS_BSD:
        return None
    if "e" in value:
        return "the BSD 'e' modifier shows other processes' environments (credentials)"
    return f"unexpected argument {value!r} (BSD letters allowed: {''.join(sorted(_PS_BSD))})"


SPECS: dict[str, OptionSpec] = {
    "cat": spec(
        "AbeEnstTuv",
        "",
        "show-all number-nonblank number squeeze-blank show-ends show-tabs show-nonprinting",
    ),
    # -20 is read as a count only as the first word: rebuilt as --lines=20
    "head": spec(*_HEAD, numeric=True, spelling=Spelling(numeric_as="lines")),
    "tail": spec(*_HEAD, numeric=True, spelling=Spelling(numeric_as="lines")),
    "ls": spec(
        "aAbBcCdfFgGhHiklLmnNopqQrRsStuUvxXZ1",
        "IwT",
        "all almost-all escape directory classify human-readable si inode numeric-uid-gid "
        "literal reverse recursive size dereference group-directories-first full-time "
        "no-group author ignore-backups dereference-command-line hide-control-chars",
        "ignore hide sort time time-style width block-size indicator-style quoting-style",
        "color classify hyperlink",
    ),
    "wc": spec("cmlLw", "", "bytes chars lines words max-line-length", "total"),
    "grep": spec(_GREP_FLAGS, "efmABCdD", _GREP_LONG, _GREP_VALUED, "color colour", numeric=True),
    "rg": spec(
        _RG_FLAGS,
        "efgtTABCmdMEjr",
        _RG_LONG,
        _RG_VALUED,
        "color colors",
        forced=("--no-config",),
        spelling=Spelling(long_for=_RG_LONG_FOR),
    ),
    "sort": spec(
        "bdfgiMhnRrVcCmsuz",
        "ktS",
        "ignore-leading-blanks dictionary-order "
        "ignore-case general-numeric-sort ignore-nonprinting month-sort "
        "human-numeric-sort numeric-sort random-sort reverse version-sort check "
        "merge stable unique zero-terminated",
        "key field-separator buffer-size parallel sort",
        "check",
    ),
    "uniq": spec(
        "cdDuiz",
        "fsw",
        "count repeated unique ignore-case zero-terminated",
        "skip-fields skip-chars check-chars",
        "all-repeated group",
        max_operands=1,
    ),
    "cut": spec(
        "nsz",
        "bcfd",
        "complement only-delimited zero-terminated",
        "bytes characters fields delimiter output-delimiter",
    ),
    "tr": spec("cCdst", "", "complement delete squeeze-repeats truncate-set1", max_operands=2),
    "nl": spec(
        "p",
        "bdfhilnsvw",
        "no-renumber",
        "body-numbering section-delimiter "
        "footer-numbering header-numbering line-increment join-blank-lines "
        "number-format number-separator starting-line-number number-width",
    ),
    "paste": spec("sz", "d", "serial zero-terminated", "delimiters"),
    # util-linux 2.38: -n (table name) and -R take a value, -d is a flag
    "column": spec(
        "tdexJL",
        "nsoNcEHOlWrR",
        "table json keep-empty-lines fillrows",
        "separator output-separator table-columns output-width table-name",
    ),
    "diff": spec(
        "uqrNiwbByaTtsEZp",
        "UCxXW",
        "brief recursive new-file ignore-case "
        "ignore-all-space ignore-space-change ignore-blank-lines side-by-side text "
        "strip-trailing-cr report-identical-files expand-tabs initial-tab minimal "
        "suppress-common-lines show-c-function ignore-tab-expansion "
        "ignore-trailing-space speed-large-files no-dereference",
        "unified context exclude exclude-from label width ignore-matching-lines starting-file",
        "color",
        max_operands=2,
    ),
    "cmp": spec(
        "blsz", "in", "print-bytes verbose quiet silent", "ignore-initial bytes", max_operands=4
    ),
    "comm": spec(
        "123z",
        "",
        "check-order nocheck-order total zero-terminated",
        "output-delimiter",
        max_operands=2,
    ),
    "stat": spec("LftZ", "c", "dereference file-system terse", "format printf"),
    "file": spec(
        "bihLNkrs0",
        "eF",
        "brief mime mime-type mime-encoding dereference "
        "no-dereference no-pad keep-going raw special-files",
        "exclude separator",
    ),
    "du": spec(
        "abchklLmsxHPS0",
        "dBt",
        "all apparent-size bytes total human-readable si "
        "dereference summarize one-file-system count-links separate-dirs",
        "max-depth exclude block-size threshold",
        "time",
    ),
    "df": spec(
        "ahHiklPT",
        "tBx",
        "all human-readable si inodes local portability print-type total",
        "type exclude-type block-size",
    ),
    # procps: UNIX options (-ef), GNU long ones, BSD words checked letter by letter; no "--"
    "ps": spec(
        "AadeFfHjLlMNTwyZc",
        "pCuUgGtqsoO",
        "forest no-headers headers deselect cumulative",
        "sort pid ppid user group sid tty format cols columns width",
        checks={"operand": _ps_operand},
        spelling=Spelling(dashdash="none"),
    ),
    "date": spec(
        "uRI",
        "d",
        "utc universal rfc-email",
        "date reference",
        "iso-8601 rfc-3339",
        checks={"operand": _date_operand},
        max_operands=1,
    ),
    "echo": spec("neE", spelling=Spelling(dashdash="none")),  # it would print a "--"
    "printf": spec(),
    "pwd": spec("LP", max_operands=0),
    "whoami": spec(max_operands=0),
    "id": spec("gGnruz", "", "group groups name real user zero"),
    "uname": spec(
        "asnrvmpio",
        "",
        "all kernel-name nodename kernel-release kernel-version "
        "machine processor hardware-platform operating-system",
        max_operands=0,
    ),
    "hostname": spec(
        "fsidIA", "", "fqdn short ip-address domain all-ip-addresses all-fqdns", max_operands=0
    ),
    "true": spec(),
    "false": spec(),
    "basename": spec("az", "s", "multiple zero", "suffix"),
    "dirname": spec("z", "", "zero"),
    "realpath": spec(
        "emLPqsz",
        "",
        "canonicalize-existing canonicalize-missing logical physical quiet strip no-symlinks zero",
        "relative-to relative-base",
    ),
    "readlink": spec(
        "femnqsvz",
        "",
        "canonicalize canonicalize-existing canonicalize-missing "
        "no-newline quiet silent verbose zero",
    ),
    "which": spec("a"),
    "md5sum": spec("bctwz", "", "binary check text tag quiet status strict warn zero"),
    "sha1sum": spec("bctwz", "", "binary check text tag quiet status strict warn zero"),
    "sha256sum": spec("bctwz", "", "binary check text tag quiet status strict warn zero"),
    "sha512sum": spec("bctwz", "", "binary check text tag quiet status strict warn zero"),
    "seq": spec("w", "fs", "equal-width", "format separator"),
    "rev": spec(),
    "tac": spec("br", "s", "before regex", "separator"),
    # binutils: -o is --radix=o (a flag); an operand "@file" would be read as more arguments
    "strings": spec(
        "afwo",
        "ntTe",
        "all print-file-name include-all-whitespace",
        "bytes radix encoding target",
        checks={"operand": _no_response_file},
    ),
    "od": spec(
        "bcdfilosvxa",
        "AjNtwS",
        "output-duplicates",
        "address-radix skip-bytes read-bytes format width strings",
        "traditional",
    ),
    "hexdump": spec("bcCdoxv", "nsef", "canonical", "length skip format format-file"),
    # xxd's own parser reads "-len", "-cols", "-seek" as long spellings: a glued value "en"
    # would take the next word; each value is its own word.
    "xxd": spec("aCEiupdb", "lscgon", max_operands=1, spelling=Spelling(glue=False)),
    "base64": spec("di", "w", "decode ignore-garbage", "wrap", max_operands=1),
    # jq's own parser (and check_jq: no -f/-L, no import/include in the program): --args and
    # --jsonargs are flags, --arg NAME VALUE takes two words, no --name=value, and "--" is
    # taken only after the filter (jq 1.6).
    "jq": spec(
        "rcSesnjaMCR",
        "",
        "raw-output compact-output sort-keys exit-status slurp "
        "null-input join-output ascii-output monochrome-output color-output tab "
        "raw-input seq stream raw-output0 args jsonargs",
        "indent",
        long_pairs="arg argjson slurpfile rawfile",
        spelling=Spelling(dashdash="after-first", glue=False, long_eq=False),
    ),
    # tree's own parser: a short option's value is always the next word
    "tree": spec(
        "adfilpsughDFqNQrtvUCAJXn",
        "LIPH",
        "noreport dirsfirst inodes device du si prune matchdirs ignore-case",
        "filelimit timefmt sort charset",
        spelling=Spelling(glue=False),
    ),
    "sed": spec(
        "nErsuz",
        "el",
        "quiet silent regexp-extended separate unbuffered null-data posix debug sandbox",
        "expression line-length",
        forced=("--sandbox",),
    ),
    "fold": spec("bs", "w", "bytes spaces", "width"),
    "expand": spec("i", "t", "initial", "tabs"),
    # rotated logs; no -r (it would walk directories and find secrets by itself)
    "zcat": spec("flqtv", "", "force list quiet test verbose"),
    "join": spec(
        "iz",
        "aejotv12",
        "ignore-case check-order nocheck-order header zero-terminated",
        max_operands=2,
    ),
    # the machine's state; free's -s/-c (repeat) are left out: the command would not end
    "uptime": spec("ps", "", "pretty since", max_operands=0),
    "free": spec(
        "bkmghltvw",
        "",
        "bytes kilo mega giga tera peta kibi mebi gibi tebi pebi human si lohi total "
        "committed wide",
        max_operands=0,
    ),
}

_SPECIAL: dict[str, Callable[[Sequence[str]], None]] = {
    "git": check_git,
    "find": check_find,
    "awk": check_awk,
    "gawk": check_awk,
}
# Programs whose own language could open files: checked after their option table.
_LANGUAGES: dict[str, Callable[[Sequence[str], Parsed], None]] = {
    "jq": lambda args, _: check_jq(args),
    "sed": lambda _, parsed: check_sed(parsed),
}
# Programs xargs may feed; each gets "--" before the appended items so they stay operands.
XARGS_TARGETS = frozenset(
    [
        "grep",
        "rg",
        "wc",
        "cat",
        "head",
        "tail",
        "ls",
        "stat",
        "file",
        "du",
        "md5sum",
        "sha1sum",
        "sha256sum",
        "sha512sum",
        "basename",
        "dirname",
        "realpath",
        "readlink",
    ]
)
# in_order: xargs' options end at the program it runs (getopt's "+" mode).
_XARGS = spec(
    "0rt",
    "nLds",
    "null no-run-if-empty verbose",
    "max-args max-lines delimiter max-chars",
    in_order=True,
)

PROGRAMS = frozenset(SPECS) | frozenset(_SPECIAL) | {"xargs", "cd"}


def _check_name(name: str) -> None:
    if "/" in name:
        raise CommandRefused(
            f"{name!r}: a program path is not allowed; use the bare name of an allowlisted program"
        )
    if name not in PROGRAMS:
        raise CommandRefused(f"{name!r} is not an allowed read-only program")


def check_argv(argv: Sequence[str]) -> None:
    """Validate one command; raise ``CommandRefused`` naming the program and the reason."""
    if not argv:
        raise CommandRefused("empty command")
    if any("\x00" in arg for arg in argv):
        raise CommandRefused("NUL byte in an argument")
    name, args = argv[0], argv[1:]
    _check_name(name)
    if name == "cd":
        if len(args) != 1 or args[0].startswith("-"):
            raise CommandRefused("cd: exactly one directory is required")
        return
    if name in _SPECIAL:
        _SPECIAL[name](args)
        return
    if name == "xargs":
        _check_xargs(args)
        return
    # What runs or writes is absent from the specs (rg --pre/--hostname-bin/-z, sed -i/-f,
    # sort -o...), so split_options refuses it; tests/tools/test_shell_refusals.py pins that.
    parsed = split_options(name, args, SPECS[name])
    if name in _LANGUAGES:
        _LANGUAGES[name](args, parsed)


def xargs_target_index(args: Sequence[str]) -> int:
    """Index of the target program in xargs' (validated) arguments."""
    return len(args) - len(split_options("xargs", args, _XARGS).operands)


def _check_xargs(args: Sequence[str]) -> None:
    target = split_options("xargs", args, _XARGS).operands
    if not target:
        raise CommandRefused("xargs: name the program to run (echo is not implied here)")
    if target[0] not in XARGS_TARGETS:
        raise CommandRefused(f"xargs: {target[0]!r} is not a program xargs may run")
    check_argv(target)


def harden_argv(argv: Sequence[str], *, awk: AwkFlavor = "gawk") -> tuple[str, ...]:
    """The argv to execute for an already validated ``argv``: rebuilt from its parsed form
    (``shell.rebuild``), never the model's words passed on.

    ``awk`` is the implementation the executor found (see ``shell.awk``): gawk gets
    ``--sandbox``, mawk runs on the static check alone, any other awk is refused.
    """
    name, args = argv[0], tuple(argv[1:])
    if name == "git":
        return (name, *harden_git(args))
    if name in ("awk", "gawk"):
        return awk_argv(name, args, awk)
    if name == "find":
        # check_find reads find's own grammar word by word (start paths, then primaries with
        # their values): the words are already find's normal spelling.
        check_find(args)
        return (name, *args)
    if name == "xargs":
        parsed = split_options(name, args, _XARGS)
        own = rebuild(name, attrs.evolve(parsed, operands=()), _XARGS)
        # The target ends with the harness's "--": the items xargs appends are operands.
        return (*own, *harden_argv(parsed.operands))
    if name not in SPECS:
        raise CommandRefused(f"{name}: the harness does not run this as a program")
    return rebuild(name, split_options(name, args, SPECS[name]), SPECS[name])
